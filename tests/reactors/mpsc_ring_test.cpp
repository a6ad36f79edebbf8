// BoundedMpscRing: stress with many producers against one consumer.
#include "reactors/mpsc_ring.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace tagflow::reactors {
namespace {

TEST(BoundedMpscRing, RoundsCapacityUpToAPowerOfTwo) {
  BoundedMpscRing<int> ring(5);
  EXPECT_EQ(ring.capacity(), 8U);
}

// A ring of one cell would take a second value into its full cell (its sequence equals the next
// position) and lose the first: 0 and 1 give two cells, which refuse a third value.
TEST(BoundedMpscRing, ACapacityBelowTwoIsTwoAndLosesNothing) {
  for (const std::size_t asked : {std::size_t{0}, std::size_t{1}}) {
    BoundedMpscRing<int> ring(asked);
    EXPECT_EQ(ring.capacity(), 2U);
    ASSERT_TRUE(ring.try_push(10));
    ASSERT_TRUE(ring.try_push(11));
    EXPECT_FALSE(ring.try_push(12));
    int out = -1;
    ASSERT_TRUE(ring.try_pop(out));
    EXPECT_EQ(out, 10);
    ASSERT_TRUE(ring.try_push(12));
    ASSERT_TRUE(ring.try_pop(out));
    EXPECT_EQ(out, 11);
    ASSERT_TRUE(ring.try_pop(out));
    EXPECT_EQ(out, 12);
    EXPECT_FALSE(ring.try_pop(out));
  }
}

TEST(BoundedMpscRing, RefusesPushesWhenFullAndAcceptsAfterAPop) {
  BoundedMpscRing<int> ring(4);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(ring.try_push(i));
  EXPECT_FALSE(ring.try_push(4));
  int out = -1;
  ASSERT_TRUE(ring.try_pop(out));
  EXPECT_EQ(out, 0);
  EXPECT_TRUE(ring.try_push(4));
  for (int expected = 1; expected <= 4; ++expected) {
    ASSERT_TRUE(ring.try_pop(out));
    EXPECT_EQ(out, expected);
  }
  EXPECT_FALSE(ring.try_pop(out));
  EXPECT_FALSE(ring.ready());
}

TEST(BoundedMpscRing, StressManyProducersLoseNothingAndKeepPerProducerOrder) {
  constexpr int kProducers = 4;
  constexpr std::int64_t kPerProducer = 200000;
  BoundedMpscRing<std::int64_t> ring(128);
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&ring, p] {
      for (std::int64_t i = 0; i < kPerProducer; ++i) {
        while (!ring.try_push((std::int64_t{p} << 40) | i)) std::this_thread::yield();
      }
    });
  }
  std::vector<std::int64_t> next(kProducers, 0);
  std::int64_t received = 0;
  std::int64_t value = 0;
  while (received < kProducers * kPerProducer) {
    if (!ring.try_pop(value)) {
      std::this_thread::yield();
      continue;
    }
    const auto producer = static_cast<std::size_t>(value >> 40);
    ASSERT_LT(producer, next.size());
    ASSERT_EQ(value & ((std::int64_t{1} << 40) - 1), next[producer]);
    ++next[producer];
    ++received;
  }
  for (std::thread& producer : producers) producer.join();
  EXPECT_FALSE(ring.try_pop(value));
}

}  // namespace
}  // namespace tagflow::reactors
