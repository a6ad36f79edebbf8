#include "nodes/gateway/experience_queue.hpp"

#include <atomic>
#include <thread>

#include <gtest/gtest.h>

namespace tagflow::gateway {
namespace {

nodes::TransitionsMessage rows(std::size_t n, float tag, std::uint64_t version = 0) {
  nodes::TransitionsMessage m;
  m.observation_size = 1;
  m.weights_version = version;
  for (std::size_t i = 0; i < n; ++i) {
    m.observations.push_back(tag);
    m.next_observations.push_back(tag);
    m.actions.push_back(0);
    m.rewards.push_back(tag);
    m.terminated.push_back(0);
  }
  return m;
}

TEST(ExperienceQueueTest, TakeMergesEachPolicysRowsInOrderAndEmptiesTheQueue) {
  ExperienceQueue q(100);
  ASSERT_TRUE(q.try_push(1, rows(2, 1.0F, 4)));
  ASSERT_TRUE(q.try_push(0, rows(1, 2.0F, 1)));
  ASSERT_TRUE(q.try_push(1, rows(1, 3.0F, 2)));
  EXPECT_EQ(q.rows(), 4U);
  const auto taken = q.take();
  ASSERT_EQ(taken.size(), 2U);
  EXPECT_EQ(taken[0].first, 0);
  EXPECT_EQ(taken[1].first, 1);
  EXPECT_EQ(taken[1].second.rewards, (std::vector<float>{1, 1, 3}));
  EXPECT_EQ(taken[1].second.weights_version, 4U);
  EXPECT_TRUE(nodes::consistent(taken[1].second));
  EXPECT_EQ(q.rows(), 0U);
  EXPECT_TRUE(q.take().empty());
}

TEST(ExperienceQueueTest, RefusesRowsBeyondItsBound) {
  ExperienceQueue q(3);
  EXPECT_TRUE(q.try_push(0, rows(2, 1.0F)));
  EXPECT_FALSE(q.try_push(0, rows(2, 1.0F)));  // 4 > 3: nothing of it is queued
  EXPECT_TRUE(q.try_push(0, rows(1, 1.0F)));
  EXPECT_EQ(q.rows(), 3U);
  (void)q.take();
  EXPECT_TRUE(q.try_push(0, rows(3, 1.0F)));
}

TEST(ExperienceQueueTest, StressEveryRowPushedIsTakenOnceOrRefused) {
  ExperienceQueue q(64);
  std::atomic<bool> done{false};
  std::atomic<std::size_t> pushed{0};
  std::vector<std::thread> producers;
  for (int t = 0; t < 2; ++t) {
    producers.emplace_back([&, t] {
      for (int i = 0; i < 20000; ++i) {
        if (q.try_push(t, rows(1 + static_cast<std::size_t>(i % 3), 1.0F))) {
          pushed.fetch_add(1 + static_cast<std::size_t>(i % 3));
        }
      }
    });
  }
  std::size_t taken = 0;
  std::thread consumer([&] {
    while (!done.load()) {
      for (const auto& [policy, m] : q.take()) {
        EXPECT_TRUE(nodes::consistent(m));
        taken += m.rows();
      }
    }
  });
  for (std::thread& t : producers) t.join();
  done.store(true);
  consumer.join();
  for (const auto& [policy, m] : q.take()) taken += m.rows();
  EXPECT_EQ(taken, pushed.load());
  EXPECT_GT(taken, 0U);
}

}  // namespace
}  // namespace tagflow::gateway
