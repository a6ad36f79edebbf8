// AtomicTag: concurrent raise_to/lower_to never lose the extreme and readers never see a torn tag.
#include "reactors/atomic_tag.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace tagflow::reactors {
namespace {

TEST(AtomicTag, RaiseAndLowerAreMonotonic) {
  AtomicTag tag(Tag(10, 0));
  EXPECT_FALSE(tag.raise_to(Tag(5, 0)));
  EXPECT_TRUE(tag.raise_to(Tag(10, 1)));
  EXPECT_EQ(tag.load(), Tag(10, 1));
  EXPECT_TRUE(tag.lower_to(Tag(3, 3)));
  EXPECT_FALSE(tag.lower_to(Tag(4, 0)));
  EXPECT_EQ(tag.load(), Tag(3, 3));
}

TEST(AtomicTag, StressConcurrentRaisesKeepTheMaximumAndReadsAreNeverTorn) {
  // Every written tag has microstep == time % 1000, so a torn read (time from one write,
  // microstep from another) is detectable.
  constexpr int kWriters = 3;
  constexpr std::int64_t kWrites = 50000;
  AtomicTag tag(Tag(0, 0));
  std::atomic<bool> done{false};
  std::atomic<bool> reading{false};
  std::atomic<std::int64_t> torn{0};
  std::atomic<std::int64_t> reads_while_writing{0};
  std::atomic<int> writers_running{0};
  std::thread reader([&] {
    Tag last(0, 0);
    while (!done.load()) {
      const bool writing = writers_running.load() > 0;
      const Tag seen = tag.load();
      if (static_cast<std::int64_t>(seen.microstep()) != seen.time_ns() % 1000) ++torn;
      if (seen < last) ++torn;  // raise-only: never goes back
      last = seen;
      if (writing) ++reads_while_writing;
      reading.store(true);
    }
  });
  // The writers start once the reader reads, and go on past kWrites until the reader has read
  // while they wrote (on a loaded machine the reader may not run at all during 50,000 writes),
  // for at most 20 s.
  while (!reading.load()) std::this_thread::yield();
  constexpr std::int64_t kOverlappingReads = 1000;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  std::vector<std::int64_t> last_time(kWriters, 0);
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers_running.fetch_add(1);
    writers.emplace_back([&, w] {
      std::int64_t i = 0;
      for (; i < kWrites || (reads_while_writing.load() < kOverlappingReads &&
                             std::chrono::steady_clock::now() < deadline);
           ++i) {
        const std::int64_t time = i * kWriters + w;
        tag.raise_to(Tag(time, static_cast<std::uint32_t>(time % 1000)));
      }
      last_time[static_cast<std::size_t>(w)] = (i - 1) * kWriters + w;
      writers_running.fetch_sub(1);
    });
  }
  for (std::thread& writer : writers) writer.join();
  done.store(true);
  reader.join();
  EXPECT_EQ(torn.load(), 0);
  EXPECT_GE(reads_while_writing.load(), kOverlappingReads) << "too few reads overlapped the writes";
  const std::int64_t max_time = *std::max_element(last_time.begin(), last_time.end());
  EXPECT_EQ(tag.load(), Tag(max_time, static_cast<std::uint32_t>(max_time % 1000)));
}

}  // namespace
}  // namespace tagflow::reactors
