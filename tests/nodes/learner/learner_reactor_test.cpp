// The learner reactor in a small loop — local-policy sampler → replay → learner, priorities back
// to replay and weights back to the sampler one microstep later — run to a step limit, and to a
// target return through its evaluator.
#include "nodes/learner/learner_reactor.hpp"

#include <gtest/gtest.h>

#include "nodes/replay/replay_reactor.hpp"
#include "nodes/sampler/sampler_reactor.hpp"

namespace tagflow::nodes {
namespace {

struct LearnerRun {
  std::int64_t updates = 0;
  std::uint64_t weights_version = 0;
  std::uint64_t priorities_hash = 0, weights_hash = 0, final_weights = 0;
  std::vector<double> evaluations;
  bool target_reached = false;
};

LearnerRun run_loop(unsigned workers, std::optional<double> target) {
  reactors::EnvironmentConfig config;
  config.workers = workers;
  config.start_time_ns = 0;
  reactors::Environment env(config);
  SamplerConfig sc;
  sc.num_envs = 4;
  sc.local_policy = true;
  sc.hidden = {16};
  sc.seed = 11;
  auto& sampler = env.add<SamplerReactor>("sampler", sc, SamplerPortWidths{0, 1, 1, 0},
                                          std::chrono::milliseconds(1));
  sampler.set_step_limit(800);
  ReplayConfig rc;
  rc.min_size = 100;
  rc.batch_size = 16;
  rc.samples_per_insert = 1.0;
  auto& replay = env.add<ReplayReactor>("replay", rc, ReplayPortWidths{1, 1, 1});
  LearnerConfig lc;
  lc.dqn.network = {4, {16}, 2};
  lc.dqn.seed = 5;
  lc.dqn.target_update = 10;
  lc.eval_every = 20;
  lc.eval_episodes = 2;
  lc.eval_max_steps = 30;
  std::unique_ptr<Evaluator> evaluator;
  if (target)
    evaluator = std::make_unique<Evaluator>("CartPole-v1", std::vector<int>{16}, 2, 9, 30);
  auto& learner = env.add<LearnerReactor>("learner", lc, LearnerPortWidths{1, 1, 1},
                                          std::move(evaluator), target);
  env.connect(sampler.transitions[0], replay.transitions[0]);
  env.connect(replay.batches[0], learner.batches[0]);
  env.connect(learner.priorities[0], replay.priorities[0], reactors::Duration::zero());
  env.connect(learner.weights[0], sampler.weights[0], reactors::Duration::zero());
  env.run();
  LearnerRun run;
  run.updates = learner.updates.load();
  run.weights_version = learner.server().weights().version;
  run.priorities_hash = learner.priorities_digest().hash(0);
  run.weights_hash = learner.weights_digest().hash(0);
  run.final_weights = learner.weights_hash_before(reactors::Tag::forever());
  run.evaluations = learner.evaluations();
  run.target_reached = learner.target_reached();
  return run;
}

TEST(LearnerReactor, OneUpdatePerBatchWithPrioritiesAndWeightsSentBack) {
  const LearnerRun run = run_loop(1, std::nullopt);
  // Credits from the 100th of 800 inserts: (800 - 99) / 16 = 43 batches, one update each.
  EXPECT_EQ(run.updates, 43);
  EXPECT_EQ(run.weights_version, 43U);
  EXPECT_TRUE(run.evaluations.empty()) << "no target, no evaluation";
}

TEST(LearnerReactor, EverythingItSendsIsTheSameWithMoreWorkers) {
  const LearnerRun one = run_loop(1, std::nullopt);
  const LearnerRun two = run_loop(2, std::nullopt);
  EXPECT_EQ(one.priorities_hash, two.priorities_hash);
  EXPECT_EQ(one.weights_hash, two.weights_hash);
  EXPECT_EQ(one.final_weights, two.final_weights);
}

TEST(LearnerReactor, ATargetItCanReachStopsTheRunAtTheFirstEvaluation) {
  // Every CartPole step pays 1, so a 30-step cap makes 1 an easy target.
  const LearnerRun run = run_loop(1, 1.0);
  ASSERT_EQ(run.evaluations.size(), 1U);
  EXPECT_GE(run.evaluations[0], 1.0);
  EXPECT_TRUE(run.target_reached);
  EXPECT_EQ(run.updates, 20);
}

}  // namespace
}  // namespace tagflow::nodes
