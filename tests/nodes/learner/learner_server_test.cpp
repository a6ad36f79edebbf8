#include "nodes/learner/learner_server.hpp"

#include <gtest/gtest.h>

namespace tagflow::nodes {
namespace {

SampleBatchMessage batch_of(std::size_t rows, float reward) {
  SampleBatchMessage b;
  b.observation_size = 4;
  for (std::size_t i = 0; i < rows; ++i) {
    b.keys.push_back(100 + i);
    for (int j = 0; j < 4; ++j) {
      b.observations.push_back(0.1F * static_cast<float>(j) - 0.05F * static_cast<float>(i));
      b.next_observations.push_back(0.1F * static_cast<float>(j));
    }
    b.actions.push_back(static_cast<std::int64_t>(i % 2));
    b.rewards.push_back(reward);
    b.terminated.push_back(1);
    b.importance_weights.push_back(1.0F);
    b.weights_versions.push_back(0);
  }
  return b;
}

LearnerConfig config(std::int64_t publish_every) {
  const NodeParams p("learner", {{"learning_rate", "0.01"},
                                 {"hidden", "16"},
                                 {"publish_every", std::to_string(publish_every)}});
  return LearnerConfig::from_params(p, 3, 4, 2);
}

TEST(LearnerServer, AnswersEveryBatchWithPrioritiesForItsKeys) {
  LearnerServer learner(config(1));
  const SampleBatchMessage b = batch_of(8, 1.0F);
  const LearnerOutput out = learner.on_batch(b);
  EXPECT_EQ(out.priorities.keys, b.keys);
  ASSERT_EQ(out.priorities.priorities.size(), 8U);
  for (const float p : out.priorities.priorities) EXPECT_GT(p, 0.0F);
  ASSERT_TRUE(out.weights.has_value());
  EXPECT_EQ(out.weights->version, 1U);
  EXPECT_EQ(out.weights->values.size(), static_cast<std::size_t>(4 * 16 + 16 + 16 * 2 + 2));
}

TEST(LearnerServer, PublishesWeightsEveryNUpdates) {
  LearnerServer learner(config(3));
  const SampleBatchMessage b = batch_of(8, 1.0F);
  std::vector<std::uint64_t> versions;
  for (int i = 0; i < 7; ++i) {
    const LearnerOutput out = learner.on_batch(b);
    if (out.weights) versions.push_back(out.weights->version);
  }
  EXPECT_EQ(versions, (std::vector<std::uint64_t>{3, 6}));
  EXPECT_EQ(learner.updates(), 7);
}

TEST(LearnerServer, TerminalTargetsAreLearned) {
  // Every transition is terminal with reward 1: Q(s, a) must move toward 1 and the TD error
  // (the priority) must shrink.
  LearnerServer learner(config(1));
  const SampleBatchMessage b = batch_of(8, 1.0F);
  const float first = learner.on_batch(b).priorities.priorities[0];
  float last = first;
  for (int i = 0; i < 200; ++i) last = learner.on_batch(b).priorities.priorities[0];
  EXPECT_LT(last, first * 0.2F);
}

TEST(LearnerServer, SameSeedAndBatchesGiveTheSameWeights) {
  LearnerServer a(config(1));
  LearnerServer b(config(1));
  for (int i = 0; i < 5; ++i) {
    (void)a.on_batch(batch_of(8, static_cast<float>(i)));
    (void)b.on_batch(batch_of(8, static_cast<float>(i)));
  }
  EXPECT_EQ(a.weights().values, b.weights().values);
}

TEST(LearnerServer, BadParamsAndBatchesAreErrors) {
  EXPECT_THROW((void)LearnerConfig::from_params(NodeParams("learner", {{"algo", "ppo"}}), 1, 4, 2),
               ParamError);
  EXPECT_THROW((void)LearnerConfig::from_params(NodeParams("learner", {{"gamma", "1.5"}}), 1, 4, 2),
               ParamError);
  LearnerServer learner(config(1));
  SampleBatchMessage wrong = batch_of(4, 1.0F);
  wrong.observation_size = 2;
  EXPECT_THROW((void)learner.on_batch(wrong), std::invalid_argument);
}

// algo: vdn needs the agents of a multi-agent policy; its batches are joint rows of them.
TEST(LearnerServer, AVdnLearnerTrainsOnJointRowsOfItsPolicysAgents) {
  const NodeParams vdn("learner", {{"algo", "vdn"}});
  EXPECT_THROW((void)LearnerConfig::from_params(vdn, 1, 4, 2), ParamError);
  EXPECT_THROW((void)LearnerConfig::from_params(vdn, 1, 4, 2, 1), ParamError);
  const LearnerConfig joint = LearnerConfig::from_params(vdn, 1, 4, 2, 3);
  EXPECT_EQ(joint.dqn.joint_agents, 3);
  EXPECT_EQ(joint.dqn.row_size(), 3 * (4 + 1));
  EXPECT_EQ(LearnerConfig::from_params(NodeParams("learner", {}), 1, 4, 2, 3).dqn.joint_agents, 0);
  LearnerServer learner(joint);
  EXPECT_THROW((void)learner.on_batch(batch_of(4, 1.0F)), std::invalid_argument);  // per-agent rows
}

}  // namespace
}  // namespace tagflow::nodes
