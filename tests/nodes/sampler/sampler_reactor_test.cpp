// Sampler and replay reactors wired without LibTorch: a local-policy sampler bank feeding one
// replay reactor.
#include "nodes/sampler/sampler_reactor.hpp"

#include <gtest/gtest.h>

#include "nodes/replay/replay_reactor.hpp"

namespace tagflow::nodes {
namespace {

struct SamplerRun {
  std::vector<std::uint64_t> transition_hashes;
  std::int64_t inserts = 0;
  std::int64_t batches = 0;
  std::int64_t env_steps = 0;
};

// Two samplers (policy: local, 4 envs) → replay; stops after 200 steps per sampler.
SamplerRun run_samplers(unsigned workers) {
  reactors::EnvironmentConfig config;
  config.workers = workers;
  config.start_time_ns = 0;
  config.keepalive = true;
  reactors::Environment env(config);
  ReplayConfig rc;
  rc.min_size = 64;
  rc.batch_size = 16;
  rc.samples_per_insert = 2.0;
  rc.max_batches_per_call = 100;
  auto& replay = env.add<ReplayReactor>("replay", rc, ReplayPortWidths{2, 0, 0});
  std::vector<SamplerReactor*> samplers;
  for (std::uint32_t i = 0; i < 2; ++i) {
    SamplerConfig sc;
    sc.num_envs = 4;
    sc.local_policy = true;
    sc.epsilon_start = 0.5;
    sc.epsilon_end = 0.5;
    sc.seed = 10 + i;
    sc.index = i;
    auto& s = env.add<SamplerReactor>("sampler-" + std::to_string(i), sc,
                                      SamplerPortWidths{0, 0, 1, 0}, std::chrono::milliseconds(1));
    s.set_step_limit(200);
    env.connect(s.transitions[0], replay.transitions[i]);
    samplers.push_back(&s);
  }
  env.run();
  SamplerRun run;
  for (const SamplerReactor* s : samplers) {
    run.transition_hashes.push_back(s->transitions_digest().hash(0));
    run.env_steps += s->env_steps.load();
  }
  run.inserts = replay.inserts.load();
  run.batches = replay.batches_sent.load();
  return run;
}

TEST(SamplerReactor, LocalPolicySamplersFeedReplayUntilTheirStepLimit) {
  const SamplerRun run = run_samplers(1);
  EXPECT_EQ(run.env_steps, 400);  // 50 rounds of 4 envs, two samplers
  EXPECT_EQ(run.inserts, 400);
  // Credits start at the 64th insert: (400 - 63) × 2 / 16 = 42 batches.
  EXPECT_EQ(run.batches, 42);
  EXPECT_NE(run.transition_hashes[0], run.transition_hashes[1]);  // different seeds
}

TEST(SamplerReactor, WhatCrossesTheConnectionsDoesNotDependOnWorkers) {
  const SamplerRun one = run_samplers(1);
  const SamplerRun two = run_samplers(2);
  EXPECT_EQ(one.transition_hashes, two.transition_hashes);
  EXPECT_EQ(one.batches, two.batches);
}

}  // namespace
}  // namespace tagflow::nodes
