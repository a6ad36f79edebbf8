// SamplerServer checkpoints: a server loaded from another's saved state steps exactly as the
// saved one goes on to step (envs, their generators, ε and its generator, returns in progress).
#include <gtest/gtest.h>

#include "nodes/sampler/sampler_server.hpp"

namespace tagflow::nodes {
namespace {

SamplerConfig config() {
  SamplerConfig c;
  c.num_envs = 4;
  c.epsilon_start = 1.0;
  c.epsilon_end = 0.1;
  c.epsilon_decay_steps = 400;
  c.seed = 11;
  return c;
}

std::vector<Bytes> steps(SamplerServer& server, int rounds) {
  std::vector<Bytes> out;
  for (int i = 0; i < rounds; ++i) {
    out.push_back(encode(server.step(std::vector<std::int64_t>(4, i % 2))));
  }
  return out;
}

TEST(SamplerServerState, ALoadedServerStepsAsTheSavedOneGoesOnToStep) {
  SamplerServer original(config());
  (void)steps(original, 37);  // mid-episode, part of the way down the ε schedule
  StateWriter saved;
  original.save(saved);
  const std::vector<Bytes> expected = steps(original, 60);

  SamplerServer loaded(config());
  StateReader in(saved.data(), "sampler state");
  loaded.load(in);
  in.expect_end();
  EXPECT_EQ(loaded.env_steps(), 37 * 4);
  EXPECT_EQ(steps(loaded, 60), expected);
  EXPECT_EQ(loaded.take_finished_returns(), original.take_finished_returns());
}

TEST(SamplerServerState, TruncatedStateIsRefused) {
  SamplerServer original(config());
  StateWriter saved;
  original.save(saved);
  const std::string cut = saved.data().substr(0, saved.data().size() / 2);
  SamplerServer loaded(config());
  StateReader in(cut, "sampler state");
  EXPECT_THROW(loaded.load(in), StateError);
}

TEST(SamplerServerState, AnEnvWithoutStateCannotBeSaved) {
  SamplerConfig c = config();
  c.env = "PixelPongNoFrameskip-v0";
  SamplerServer server(c);
  StateWriter out;
  EXPECT_THROW(server.save(out), std::logic_error);
}

}  // namespace
}  // namespace tagflow::nodes
