#include "rl/learning/dqn_trainer.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

namespace tagflow::learning {
namespace {

// A short CartPole run: small network, a few hundred updates, a couple of seconds.
TrainConfig short_config(std::uint64_t seed) {
  TrainConfig config;
  config.seed = seed;
  config.total_env_steps = 6000;
  config.learning_starts = 500;
  config.train_every = 64;
  config.updates_per_round = 48;
  config.batch_size = 64;
  config.epsilon = EpsilonSchedule{1.0, 0.05, 3000};
  config.dqn.network.hidden_sizes = {64, 64};
  config.dqn.learning_rate = 2e-3;
  config.dqn.target_update = 48;
  config.final_learning_rate_fraction = 1.0;
  config.eval_episodes = 10;
  config.eval_every = 0;
  config.keep_best = false;
  config.stop_at_threshold = false;
  return config;
}

TEST(DqnTrainer, ShortCartPoleRunImprovesOnItsInitialPolicyAndIsReproducible) {
  const TrainConfig config = short_config(3);
  const TrainSummary first = train_dqn(config);
  const TrainSummary second = train_dqn(config);

  // The untrained network (same seed) as the baseline.
  MlpSpec network = config.dqn.network;
  network.input_size = 4;
  network.output_size = 2;
  WeightsBuffer initial;
  initial.values = init_mlp_parameters(network, config.seed);
  const double initial_return = evaluate_greedy("CartPole-v1", network, initial, 10, 2000006);

  EXPECT_GT(first.mean_return, initial_return + 40.0)
      << "initial " << initial_return << ", trained " << first.mean_return;
  EXPECT_EQ(first.digest, second.digest);
  EXPECT_EQ(first.eval_returns, second.eval_returns);
  EXPECT_EQ(first.env_steps, 6000);
  EXPECT_EQ(first.updates, second.updates);
  EXPECT_GT(first.updates, 3000);
  EXPECT_EQ(first.eval_returns.size(), 10U);
  EXPECT_EQ(first.digest, first.weights.digest());
  EXPECT_EQ(first.network.to_string(), "4-64-64-2");
  EXPECT_EQ(first.policy, "final");
}

TEST(DqnTrainer, PrioritizedNStepRunReportsProgressAndDiffersFromUniform) {
  TrainConfig config = short_config(3);
  config.total_env_steps = 1500;
  config.prioritized = true;
  config.n_step = 3;
  config.progress_interval_seconds = 0.0;
  int reports = 0;
  double last_epsilon = 2.0;
  const TrainSummary prioritized = train_dqn(config, [&](const TrainProgress& p) {
    ++reports;
    EXPECT_TRUE(std::isfinite(p.loss));
    EXPECT_LE(p.epsilon, last_epsilon);
    last_epsilon = p.epsilon;
  });
  EXPECT_GT(reports, 1);
  config.prioritized = false;
  config.n_step = 1;
  EXPECT_NE(train_dqn(config).digest, prioritized.digest);
}

TEST(DqnTrainer, KeepBestReturnsTheBestEvaluatedWeights) {
  TrainConfig config = short_config(4);
  config.total_env_steps = 2000;
  config.eval_every = 1000;
  config.eval_interval_episodes = 3;
  config.keep_best = true;
  const TrainSummary summary = train_dqn(config);
  EXPECT_EQ(summary.policy.rfind("best@", 0), 0U) << summary.policy;
  EXPECT_EQ(summary.digest, summary.weights.digest());
}

TEST(DqnTrainer, RejectsEnvsDqnCannotDrive) {
  TrainConfig config = short_config(1);
  config.env_id = "Pendulum-v1";
  EXPECT_THROW((void)train_dqn(config), std::invalid_argument);
  config.env_id = "NoSuchEnv-v0";
  EXPECT_THROW((void)train_dqn(config), std::invalid_argument);
  config = short_config(1);
  config.batch_size = 0;
  EXPECT_THROW((void)train_dqn(config), std::invalid_argument);
}

}  // namespace
}  // namespace tagflow::learning
