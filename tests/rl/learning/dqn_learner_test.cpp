#include "rl/learning/dqn_learner.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tests/rl/learning/learning_test_util.hpp"

namespace tagflow::learning {
namespace {

using testing::synthetic_batch;

DqnConfig small_config() {
  DqnConfig config;
  config.network = MlpSpec{3, {32}, 2};
  config.learning_rate = 3e-3;
  config.target_update = 1000000;
  config.seed = 11;
  return config;
}

std::vector<float> q_of(const DqnLearner& learner, const std::vector<float>& observations,
                        std::int64_t rows) {
  std::vector<float> q(static_cast<std::size_t>(rows * learner.config().network.output_size));
  learner.q_values(observations.data(), rows, q.data());
  return q;
}

TEST(DqnLearner, LossFallsWhenFittingTerminalTransitions) {
  DqnLearner learner(small_config());
  const TransitionBatch batch = synthetic_batch(3, 2, 128, 5, /*discount=*/0.0F);
  const double first = learner.update(batch).loss;
  double last = first;
  for (int i = 0; i < 400; ++i) last = learner.update(batch).loss;
  EXPECT_LT(last, 0.1 * first) << "first loss " << first << ", last " << last;
  EXPECT_EQ(learner.updates(), 401);
}

TEST(DqnLearner, ReturnsAbsoluteTdErrorsAsPriorities) {
  DqnLearner learner(small_config());
  const TransitionBatch batch = synthetic_batch(3, 2, 16, 6, 0.0F);
  const std::vector<float> q = q_of(learner, batch.observations, batch.size);
  const UpdateResult result = learner.update(batch);
  ASSERT_EQ(result.priorities.size(), 16U);
  for (std::size_t i = 0; i < 16; ++i) {
    const float expected =
        std::abs(batch.rewards[i] - q[i * 2 + static_cast<std::size_t>(batch.actions[i])]);
    EXPECT_NEAR(result.priorities[i], expected, 1e-5);
  }
}

void expect_bootstrap_target(bool double_dqn) {
  DqnConfig config = small_config();
  config.double_dqn = double_dqn;
  DqnLearner learner(config);
  const DqnLearner frozen(config);  // same seed: holds the target network's weights
  for (int i = 0; i < 50; ++i) (void)learner.update(synthetic_batch(3, 2, 32, 100 + i, 0.0F));

  const TransitionBatch batch = synthetic_batch(3, 2, 16, 7, /*discount=*/0.9F);
  const std::vector<float> q = q_of(learner, batch.observations, batch.size);
  const std::vector<float> next_online = q_of(learner, batch.next_observations, batch.size);
  const std::vector<float> next_target = q_of(frozen, batch.next_observations, batch.size);
  const UpdateResult result = learner.update(batch);
  int disagreements = 0;
  for (std::size_t i = 0; i < 16; ++i) {
    const std::vector<float>& chooser = double_dqn ? next_online : next_target;
    const std::size_t best = chooser[i * 2 + 1] > chooser[i * 2] ? 1 : 0;
    const std::size_t online_best = next_online[i * 2 + 1] > next_online[i * 2] ? 1 : 0;
    const std::size_t target_best = next_target[i * 2 + 1] > next_target[i * 2] ? 1 : 0;
    disagreements += online_best != target_best ? 1 : 0;
    const float y = batch.rewards[i] + 0.9F * next_target[i * 2 + best];
    const float expected = std::abs(y - q[i * 2 + static_cast<std::size_t>(batch.actions[i])]);
    EXPECT_NEAR(result.priorities[i], expected, 1e-4) << "sample " << i;
  }
  EXPECT_GT(disagreements, 0) << "the test needs online and target to disagree somewhere";
}

TEST(DqnLearner, DoubleDqnValuesTheOnlineArgmaxWithTheTargetNetwork) {
  expect_bootstrap_target(true);
}

TEST(DqnLearner, PlainDqnBootstrapsFromTheTargetMaximum) { expect_bootstrap_target(false); }

TEST(DqnLearner, ZeroImportanceWeightsLeaveTheWeightsUnchanged) {
  DqnLearner learner(small_config());
  TransitionBatch batch = synthetic_batch(3, 2, 8, 8, 0.0F);
  batch.importance_weights.assign(8, 0.0F);
  const std::string before = learner.weights().digest();
  (void)learner.update(batch);
  EXPECT_EQ(learner.weights().digest(), before);
  batch.importance_weights.assign(8, 1.0F);
  (void)learner.update(batch);
  EXPECT_NE(learner.weights().digest(), before);
}

TEST(DqnLearner, HardTargetSyncCopiesTheOnlineWeightsEveryNUpdates) {
  DqnConfig config = small_config();
  config.target_update = 3;
  DqnLearner learner(config);
  const std::vector<float> initial = learner.state().target;
  const TransitionBatch batch = synthetic_batch(3, 2, 8, 9, 0.5F);
  (void)learner.update(batch);
  (void)learner.update(batch);
  EXPECT_EQ(learner.state().target, initial);
  (void)learner.update(batch);
  const LearnerState state = learner.state();
  EXPECT_EQ(state.target, state.online);
  EXPECT_NE(state.target, initial);
}

TEST(DqnLearner, SoftTargetUpdateMovesTauOfTheWayToTheOnlineWeights) {
  DqnConfig config = small_config();
  config.target_tau = 0.25;
  DqnLearner learner(config);
  const std::vector<float> before = learner.state().target;
  (void)learner.update(synthetic_batch(3, 2, 8, 10, 0.5F));
  const LearnerState state = learner.state();
  for (std::size_t i = 0; i < before.size(); ++i) {
    EXPECT_NEAR(state.target[i], 0.75F * before[i] + 0.25F * state.online[i], 1e-6);
  }
}

TEST(DqnLearner, SameSeedAndBatchesGiveBitIdenticalWeights) {
  DqnLearner a(small_config());
  DqnLearner b(small_config());
  DqnConfig other = small_config();
  other.seed = 12;
  DqnLearner c(other);
  for (int i = 0; i < 20; ++i) {
    const TransitionBatch batch = synthetic_batch(3, 2, 32, 200 + i, 0.9F);
    (void)a.update(batch);
    (void)b.update(batch);
    (void)c.update(batch);
  }
  EXPECT_EQ(a.weights().digest(), b.weights().digest());
  EXPECT_EQ(a.weights().values, b.weights().values);
  EXPECT_NE(a.weights().digest(), c.weights().digest());
  EXPECT_EQ(a.weights().version, 20U);
}

TEST(DqnLearner, LoadedWeightsDriveActionsAndTheTarget) {
  DqnLearner trained(small_config());
  for (int i = 0; i < 30; ++i) (void)trained.update(synthetic_batch(3, 2, 32, 300 + i, 0.0F));
  DqnConfig other = small_config();
  other.seed = 99;
  DqnLearner receiver(other);
  receiver.load_weights(trained.weights());
  EXPECT_EQ(receiver.weights().values, trained.weights().values);
  EXPECT_EQ(receiver.state().target, trained.weights().values);
  const TransitionBatch probe = synthetic_batch(3, 2, 20, 400, 0.0F);
  for (std::int64_t i = 0; i < probe.size; ++i) {
    const float* row = probe.observations.data() + i * 3;
    EXPECT_EQ(receiver.greedy_action(row), trained.greedy_action(row));
  }
  WeightsBuffer wrong;
  wrong.values.assign(5, 0.0F);
  EXPECT_THROW(receiver.load_weights(wrong), std::invalid_argument);
}

TEST(DqnLearner, RejectsMalformedBatchesAndConfigs) {
  DqnLearner learner(small_config());
  TransitionBatch batch = synthetic_batch(3, 2, 8, 1, 0.0F);
  batch.rewards.pop_back();
  EXPECT_THROW((void)learner.update(batch), std::invalid_argument);
  DqnConfig bad = small_config();
  bad.learning_rate = 0.0;
  EXPECT_THROW(DqnLearner{bad}, std::invalid_argument);
}

// Hysteretic learning: a sample whose outcome is worse than its estimate (negative TD error)
// weighs negative_td_weight in the loss, a better one 1.
TEST(DqnLearner, HystereticLearningWeighsNegativeTdErrorsLess) {
  DqnConfig config = small_config();
  config.negative_td_weight = 0.25;
  DqnLearner learner(config);
  TransitionBatch batch = synthetic_batch(3, 2, 16, 12, /*discount=*/0.0F);
  for (std::size_t i = 0; i < 16; ++i) batch.rewards[i] = i % 2 == 0 ? -20.0F : 20.0F;
  const std::vector<float> q = q_of(learner, batch.observations, batch.size);
  const UpdateResult result = learner.update(batch);
  double expected = 0.0;
  for (std::size_t i = 0; i < 16; ++i) {
    const double td = batch.rewards[i] - q[i * 2 + static_cast<std::size_t>(batch.actions[i])];
    ASSERT_GT(std::abs(td), 1.0) << "the test needs TD errors in Huber's linear part";
    expected += (td < 0 ? 0.25 : 1.0) * (std::abs(td) - 0.5) / 16.0;
    // Priorities stay the unweighted TD errors.
    EXPECT_NEAR(result.priorities[i], std::abs(td), 1e-4) << "sample " << i;
  }
  EXPECT_NEAR(result.loss, expected, 1e-4);

  DqnLearner plain(small_config());
  EXPECT_GT(plain.update(batch).loss, result.loss + 1.0);
  for (const double bad : {0.0, -0.5, 1.5}) {
    DqnConfig wrong = small_config();
    wrong.negative_td_weight = bad;
    EXPECT_THROW(DqnLearner{wrong}, std::invalid_argument) << bad;
  }
}

// Value decomposition: three agents of width 3 sharing a 3→32→2 network.
constexpr int kAgents = 3;
constexpr int kWidth = 3;

DqnConfig vdn_config() {
  DqnConfig config = small_config();
  config.joint_agents = kAgents;
  return config;
}

/// Joint rows built from a plain batch of size·k agent rows: row i holds agent rows i·k .. i·k+k-1,
/// then the alive flags `alive` / `alive_next` (the same for every row); the joint action codes
/// their actions, the team reward is `team_reward[i]`.
struct JointBatch {
  TransitionBatch plain;  // the agent rows
  TransitionBatch joint;
};

JointBatch joint_batch(std::int64_t size, std::uint64_t seed, float discount,
                       const std::vector<float>& alive, const std::vector<float>& alive_next) {
  JointBatch b;
  b.plain = synthetic_batch(kWidth, 2, size * kAgents, seed, discount);
  TransitionBatch& j = b.joint;
  j.size = size;
  for (std::int64_t i = 0; i < size; ++i) {
    const auto from = static_cast<std::ptrdiff_t>(i * kAgents * kWidth);
    const auto to = from + kAgents * kWidth;
    j.observations.insert(j.observations.end(), b.plain.observations.begin() + from,
                          b.plain.observations.begin() + to);
    j.observations.insert(j.observations.end(), alive.begin(), alive.end());
    j.next_observations.insert(j.next_observations.end(), b.plain.next_observations.begin() + from,
                               b.plain.next_observations.begin() + to);
    j.next_observations.insert(j.next_observations.end(), alive_next.begin(), alive_next.end());
    std::int64_t code = 0;
    for (int a = kAgents - 1; a >= 0; --a) {
      code = code * 2 + b.plain.actions[static_cast<std::size_t>(i * kAgents + a)];
    }
    j.actions.push_back(code);
    j.rewards.push_back(0.5F * static_cast<float>(i) - 2.0F);
    j.discounts.push_back(discount);
  }
  return b;
}

TEST(DqnLearner, VdnTdErrorIsTheTeamRewardMinusTheSumOfTheAliveAgentsQs) {
  DqnLearner learner(vdn_config());
  const std::vector<float> alive{1.0F, 0.0F, 1.0F};
  const JointBatch b = joint_batch(8, 21, 0.0F, alive, {0.0F, 0.0F, 0.0F});
  const std::vector<float> q = q_of(learner, b.plain.observations, b.plain.size);
  const UpdateResult result = learner.update(b.joint);
  ASSERT_EQ(result.priorities.size(), 8U);
  for (std::size_t i = 0; i < 8; ++i) {
    float q_tot = 0.0F;
    for (std::size_t a = 0; a < kAgents; ++a) {
      const std::size_t row = i * kAgents + a;
      q_tot += alive[a] * q[row * 2 + static_cast<std::size_t>(b.plain.actions[row])];
    }
    EXPECT_NEAR(result.priorities[i], std::abs(b.joint.rewards[i] - q_tot), 1e-5) << "row " << i;
  }
}

TEST(DqnLearner, VdnBootstrapsFromTheSumOfTheAgentsTargetValuesWhereTheyStillAct) {
  DqnConfig config = vdn_config();
  DqnLearner learner(config);
  const DqnLearner frozen(config);  // holds the target network's weights
  const std::vector<float> all{1.0F, 1.0F, 1.0F};
  for (int i = 0; i < 30; ++i) (void)learner.update(joint_batch(16, 200 + i, 0.0F, all, all).joint);

  const std::vector<float> alive_next{1.0F, 1.0F, 0.0F};
  const JointBatch b = joint_batch(8, 22, 0.9F, all, alive_next);
  const std::vector<float> q = q_of(learner, b.plain.observations, b.plain.size);
  const std::vector<float> next_online = q_of(learner, b.plain.next_observations, b.plain.size);
  const std::vector<float> next_target = q_of(frozen, b.plain.next_observations, b.plain.size);
  const UpdateResult result = learner.update(b.joint);
  for (std::size_t i = 0; i < 8; ++i) {
    float q_tot = 0.0F, next = 0.0F;
    for (std::size_t a = 0; a < kAgents; ++a) {
      const std::size_t row = i * kAgents + a;
      q_tot += q[row * 2 + static_cast<std::size_t>(b.plain.actions[row])];
      const std::size_t best = next_online[row * 2 + 1] > next_online[row * 2] ? 1 : 0;  // double
      next += alive_next[a] * next_target[row * 2 + best];
    }
    const float y = b.joint.rewards[i] + 0.9F * next;
    EXPECT_NEAR(result.priorities[i], std::abs(y - q_tot), 1e-4) << "row " << i;
  }
}

TEST(DqnLearner, VdnLearnsTheTeamRewardOfJointActions) {
  // The team reward is the sum of per-agent rewards the plain batch defines; VDN recovers the
  // per-agent Qs from the sums alone.
  DqnLearner learner(vdn_config());
  const std::vector<float> all{1.0F, 1.0F, 1.0F};
  JointBatch b = joint_batch(64, 23, 0.0F, all, all);
  for (std::size_t i = 0; i < 64; ++i) {
    float sum = 0.0F;
    for (std::size_t a = 0; a < kAgents; ++a) sum += b.plain.rewards[i * kAgents + a];
    b.joint.rewards[i] = sum;
  }
  const double first = learner.update(b.joint).loss;
  double last = first;
  for (int i = 0; i < 600; ++i) last = learner.update(b.joint).loss;
  EXPECT_LT(last, 0.1 * first) << "first loss " << first << ", last " << last;
}

TEST(DqnLearner, VdnRejectsRowsWithoutTheAliveFlags) {
  DqnLearner learner(vdn_config());
  const TransitionBatch per_agent = synthetic_batch(kAgents * kWidth, 2, 8, 1, 0.0F);
  EXPECT_THROW((void)learner.update(per_agent), std::invalid_argument);
  DqnConfig bad = vdn_config();
  bad.joint_agents = 70;  // 2^70 joint actions do not fit one code
  EXPECT_THROW(DqnLearner{bad}, std::invalid_argument);
}

}  // namespace
}  // namespace tagflow::learning
