// The inference reactor answering two samplers at their tags: every request answered on its own
// channel, per-tag batches, weights loaded before the requests of the same tag.
#include "nodes/inference/inference_reactor.hpp"

#include <gtest/gtest.h>

#include "nodes/sampler/sampler_reactor.hpp"

namespace tagflow::nodes {
namespace {

struct InferenceRun {
  std::int64_t rows = 0, env_steps = 0;
  std::vector<std::uint64_t> actions_hashes;
};

InferenceRun run_samplers(unsigned workers) {
  reactors::EnvironmentConfig config;
  config.workers = workers;
  config.start_time_ns = 0;
  reactors::Environment env(config);
  InferenceConfig ic;
  ic.network = {4, {16}, 2};
  ic.seed = 21;
  auto& inference = env.add<InferenceReactor>("inference", ic, InferencePortWidths{2, 0, 2});
  std::vector<SamplerReactor*> samplers;
  for (std::uint32_t i = 0; i < 2; ++i) {
    SamplerConfig sc;
    sc.num_envs = 3;
    sc.seed = 40 + i;
    sc.index = i;
    auto& s = env.add<SamplerReactor>("sampler-" + std::to_string(i), sc,
                                      SamplerPortWidths{1, 0, 0, 1}, std::chrono::milliseconds(1));
    s.set_step_limit(90);
    env.connect(s.observations[0], inference.observations[i]);
    env.connect(inference.actions[i], s.actions[0], reactors::Duration::zero());
    samplers.push_back(&s);
  }
  env.run();
  InferenceRun run;
  run.rows = inference.rows_served.load();
  for (const SamplerReactor* s : samplers) run.env_steps += s->env_steps.load();
  for (std::size_t c = 0; c < 2; ++c)
    run.actions_hashes.push_back(inference.actions_digest().hash(c));
  return run;
}

TEST(InferenceReactor, AnswersEveryRequestOfEverySamplerOnItsChannel) {
  const InferenceRun run = run_samplers(1);
  EXPECT_EQ(run.env_steps, 180);  // 30 rounds of 3 envs, two samplers
  EXPECT_EQ(run.rows, 180);       // one served row per env step
  EXPECT_NE(run.actions_hashes[0], run.actions_hashes[1]);
}

TEST(InferenceReactor, ItsAnswersDoNotDependOnWorkers) {
  EXPECT_EQ(run_samplers(1).actions_hashes, run_samplers(2).actions_hashes);
}

TEST(InferenceReactor, RefusesObservationAndActionChannelsThatDoNotPair) {
  reactors::EnvironmentConfig config;
  config.start_time_ns = 0;
  reactors::Environment env(config);
  EXPECT_THROW(
      (void)env.add<InferenceReactor>("inference", InferenceConfig{}, InferencePortWidths{2, 0, 1}),
      std::invalid_argument);
}

}  // namespace
}  // namespace tagflow::nodes
