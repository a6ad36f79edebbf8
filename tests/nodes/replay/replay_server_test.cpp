#include "nodes/replay/replay_server.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "rl/envs/step_workers.hpp"

namespace tagflow::nodes {
namespace {

// `rows` transitions whose observation, action and reward all encode their index.
TransitionsMessage numbered(int first, int rows) {
  TransitionsMessage t;
  t.observation_size = 2;
  t.weights_version = static_cast<std::uint64_t>(1000 + first);
  for (int i = first; i < first + rows; ++i) {
    t.observations.push_back(static_cast<float>(i));
    t.observations.push_back(-static_cast<float>(i));
    t.actions.push_back(i);
    t.rewards.push_back(static_cast<float>(i));
    t.terminated.push_back(static_cast<std::uint8_t>(i % 2));
    t.next_observations.push_back(static_cast<float>(i + 1));
    t.next_observations.push_back(0.0F);
  }
  return t;
}

ReplayConfig small(double samples_per_insert) {
  ReplayConfig c;
  c.capacity = 1000;
  c.min_size = 8;
  c.batch_size = 4;
  c.samples_per_insert = samples_per_insert;
  c.max_batches_per_call = 100;
  return c;
}

TEST(ReplayServer, NothingIsSampledBeforeMinSize) {
  ReplayServer r(small(2.0));
  r.insert(numbered(0, 7));
  EXPECT_TRUE(r.due_batches().empty());
  EXPECT_EQ(r.size(), 7U);
}

TEST(ReplayServer, EachInsertFromMinSizeOnEarnsSamplesPerInsertCredits) {
  ReplayServer r(small(2.0));
  r.insert(numbered(0, 8));  // the 8th insert reaches min size: 2 credits
  EXPECT_TRUE(r.due_batches().empty());
  r.insert(numbered(8, 9));  // 2 + 18 = 20 credits = 5 batches of 4
  EXPECT_EQ(r.due_batches().size(), 5U);
  EXPECT_TRUE(r.due_batches().empty());
  r.insert(numbered(17, 2));  // 4 more credits
  EXPECT_EQ(r.due_batches().size(), 1U);
  EXPECT_EQ(r.batches_sampled(), 6U);
}

TEST(ReplayServer, MaxBatchesPerCallLeavesTheRestOwed) {
  ReplayConfig c = small(4.0);
  c.max_batches_per_call = 2;
  ReplayServer r(c);
  r.insert(numbered(0, 10));  // 3 inserts from min size on: 12 credits, 3 batches
  EXPECT_EQ(r.due_batches().size(), 2U);
  EXPECT_EQ(r.due_batches().size(), 1U);
}

TEST(ReplayServer, SampledRowsAreWholeInsertedTransitions) {
  ReplayServer r(small(8.0));
  r.insert(numbered(0, 16));
  const auto batches = r.due_batches();
  ASSERT_FALSE(batches.empty());
  for (const SampleBatchMessage& b : batches) {
    ASSERT_EQ(b.rows(), 4U);
    for (std::size_t row = 0; row < 4; ++row) {
      const auto i = b.actions[row];
      EXPECT_EQ(b.observations[row * 2], static_cast<float>(i));
      EXPECT_EQ(b.observations[row * 2 + 1], -static_cast<float>(i));
      EXPECT_EQ(b.rewards[row], static_cast<float>(i));
      EXPECT_EQ(b.terminated[row], i % 2);
      EXPECT_EQ(b.next_observations[row * 2], static_cast<float>(i + 1));
      EXPECT_EQ(b.importance_weights[row], 1.0F);
      EXPECT_EQ(b.weights_versions[row], 1000U);  // the version that acted, kept per row
    }
  }
}

TEST(ReplayServer, SameInsertsGiveTheSameBatches) {
  ReplayServer a(small(4.0));
  ReplayServer b(small(4.0));
  a.insert(numbered(0, 40));
  b.insert(numbered(0, 40));
  const auto from_a = a.due_batches();
  const auto from_b = b.due_batches();
  ASSERT_EQ(from_a.size(), from_b.size());
  for (std::size_t i = 0; i < from_a.size(); ++i) EXPECT_EQ(from_a[i].keys, from_b[i].keys);
}

// sample_threads: the minibatches resolved on 3 threads hold the same items, in the same order,
// as those resolved one after the other, over several calls and priority updates.
TEST(ReplayServer, MinibatchesResolvedOnSeveralThreadsAreTheSameAsInTurn) {
  ReplayConfig c = small(4.0);
  c.prioritized = true;
  ReplayServer serial(c);
  ReplayServer parallel(c);
  envs::StepWorkers workers(3);
  parallel.set_parallel_for([&](std::size_t count, const std::function<void(std::size_t)>& body) {
    workers.run(count, [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) body(i);
    });
  });
  for (int round = 0; round < 5; ++round) {
    serial.insert(numbered(round * 40, 40));
    parallel.insert(numbered(round * 40, 40));
    const auto from_serial = serial.due_batches();
    const auto from_parallel = parallel.due_batches();
    ASSERT_EQ(from_serial.size(), from_parallel.size());
    ASSERT_GT(from_serial.size(), 1U);
    for (std::size_t i = 0; i < from_serial.size(); ++i) {
      EXPECT_EQ(from_serial[i].keys, from_parallel[i].keys);
      EXPECT_EQ(from_serial[i].observations, from_parallel[i].observations);
      EXPECT_EQ(from_serial[i].importance_weights, from_parallel[i].importance_weights);
      PriorityUpdateMessage update;
      update.keys = from_serial[i].keys;
      for (std::size_t k = 0; k < update.keys.size(); ++k) {
        update.priorities.push_back(static_cast<float>((k + i + round) % 5));
      }
      serial.update(update);
      parallel.update(update);
    }
  }
  EXPECT_EQ(serial.batches_sampled(), parallel.batches_sampled());
}

TEST(ReplayServer, PrioritiesSteerPrioritizedSampling) {
  ReplayConfig c = small(100.0);
  c.prioritized = true;
  c.priority_exponent = 1.0;
  ReplayServer r(c);
  r.insert(numbered(0, 8));
  const auto first = r.due_batches();
  ASSERT_FALSE(first.empty());
  // Zero every key but the one holding action 5 (100 draws over 8 items see every key).
  std::map<std::int64_t, std::uint64_t> key_of_action;
  for (const auto& batch : first) {
    for (std::size_t row = 0; row < batch.rows(); ++row) {
      key_of_action[batch.actions[row]] = batch.keys[row];
    }
  }
  ASSERT_EQ(key_of_action.size(), 8U);
  PriorityUpdateMessage update;
  for (const auto& [action, key] : key_of_action) {
    update.keys.push_back(key);
    update.priorities.push_back(action == 5 ? 1.0F : 0.0F);
  }
  r.update(update);
  r.insert(numbered(8, 1));  // new item: priority 1, like key 5
  for (const auto& batch : r.due_batches()) {
    for (const auto action : batch.actions) EXPECT_TRUE(action == 5 || action == 8) << action;
  }
}

TEST(ReplayServer, BadParamsNameTheParam) {
  const NodeParams bad("replay", {{"selector", "random"}});
  try {
    (void)ReplayConfig::from_params(bad, 1);
    FAIL() << "accepted selector: random";
  } catch (const ParamError& e) {
    EXPECT_NE(std::string(e.what()).find("param 'selector'"), std::string::npos);
  }
  const NodeParams small_min("replay", {{"min_size", "10"}, {"batch_size", "64"}});
  EXPECT_THROW((void)ReplayConfig::from_params(small_min, 1), ParamError);
}

}  // namespace
}  // namespace tagflow::nodes
