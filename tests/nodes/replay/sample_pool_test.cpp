#include "nodes/replay/sample_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace tagflow::nodes {
namespace {

TEST(SamplePool, EveryIndexRunsExactlyOnceOverManyRuns) {
  SamplePool pool(3);
  EXPECT_EQ(pool.threads(), 3U);
  for (std::size_t count : {0U, 1U, 2U, 3U, 7U, 64U}) {
    for (int run = 0; run < 200; ++run) {
      std::vector<std::atomic<int>> calls(count);
      pool.run(count, [&](std::size_t i) { calls[i].fetch_add(1); });
      for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(calls[i].load(), 1) << count << " " << i;
    }
  }
}

TEST(SamplePool, RunsOnTheCallerAndThePoolsThreads) {
  SamplePool pool(2);
  std::mutex mutex;
  std::set<std::thread::id> seen;
  std::atomic<int> inside{0};
  std::atomic<int> waiting{2};
  // Two calls that wait for each other can finish only on two threads at once.
  pool.run(2, [&](std::size_t) {
    waiting.fetch_sub(1);
    while (waiting.load() > 0) std::this_thread::yield();
    inside.fetch_add(1);
    std::lock_guard<std::mutex> lock(mutex);
    seen.insert(std::this_thread::get_id());
  });
  EXPECT_EQ(inside.load(), 2);
  EXPECT_EQ(seen.size(), 2U);
  EXPECT_EQ(seen.count(std::this_thread::get_id()), 1U);
}

TEST(SamplePool, OneThreadRunsEverythingOnTheCaller) {
  SamplePool pool(1);
  std::vector<std::thread::id> ids;
  pool.run(4, [&](std::size_t) { ids.push_back(std::this_thread::get_id()); });
  ASSERT_EQ(ids.size(), 4U);
  for (const auto& id : ids) EXPECT_EQ(id, std::this_thread::get_id());
}

}  // namespace
}  // namespace tagflow::nodes
