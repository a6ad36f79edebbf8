#include "nodes/sampler/sampler_server.hpp"

#include <gtest/gtest.h>

namespace tagflow::nodes {
namespace {

SamplerConfig config(double epsilon, std::uint64_t seed = 5) {
  SamplerConfig c;
  c.num_envs = 4;
  c.epsilon_start = epsilon;
  c.epsilon_end = epsilon;
  c.seed = seed;
  c.index = 1;
  return c;
}

TEST(SamplerServer, ObservationsAreTaggedWithTheReplicaIndex) {
  SamplerServer s(config(0.0));
  const ObservationBatchMessage o = s.observations();
  EXPECT_EQ(o.source, 1U);
  EXPECT_EQ(o.observation_size, 4U);
  EXPECT_EQ(o.rows(), 4U);
}

TEST(SamplerServer, WithoutExplorationItStepsTheGivenActions) {
  SamplerServer s(config(0.0));
  const std::vector<std::int64_t> greedy{1, 0, 1, 0};
  const ObservationBatchMessage before = s.observations();
  const TransitionsMessage t = s.step(greedy);
  EXPECT_EQ(t.actions, greedy);
  EXPECT_EQ(t.observations, before.observations);
  EXPECT_EQ(t.next_observations, s.observations().observations);
  EXPECT_EQ(t.rows(), 4U);
  EXPECT_EQ(s.env_steps(), 4);
}

TEST(SamplerServer, FullExplorationDrawsActionsFromItsSeed) {
  SamplerServer a(config(1.0, 5));
  SamplerServer b(config(1.0, 5));
  SamplerServer c(config(1.0, 6));
  std::vector<std::int64_t> zeros(4, 0);
  std::vector<std::int64_t> from_a, from_b, from_c;
  for (int i = 0; i < 50; ++i) {
    for (auto x : a.step(zeros).actions) from_a.push_back(x);
    for (auto x : b.step(zeros).actions) from_b.push_back(x);
    for (auto x : c.step(zeros).actions) from_c.push_back(x);
  }
  EXPECT_EQ(from_a, from_b);
  EXPECT_NE(from_a, from_c);
  EXPECT_GT(std::count(from_a.begin(), from_a.end(), 1), 50);  // not the greedy zeros
}

TEST(SamplerServer, EndedEpisodesGiveTheirLastObservationAndTheirReturn) {
  SamplerServer s(config(0.0));
  const std::vector<std::int64_t> push_left(4, 0);  // CartPole falls within ~10 steps
  bool saw_end = false;
  for (int i = 0; i < 40 && !saw_end; ++i) {
    const TransitionsMessage t = s.step(push_left);
    const ObservationBatchMessage now = s.observations();
    for (std::size_t row = 0; row < t.rows(); ++row) {
      if (t.terminated[row] == 0) continue;
      saw_end = true;
      // The next observation is the fallen pole, not the reset state that replaced it.
      EXPECT_NE(t.next_observations[row * 4 + 2], now.observations[row * 4 + 2]);
    }
  }
  ASSERT_TRUE(saw_end);
  const std::vector<double> returns = s.take_finished_returns();
  ASSERT_FALSE(returns.empty());
  EXPECT_GT(returns.front(), 1.0);
  EXPECT_LT(returns.front(), 40.0);
  EXPECT_TRUE(s.take_finished_returns().empty());
}

TEST(SamplerServer, LocalPolicyActsGreedilyWithTheLoadedWeights) {
  SamplerConfig c = config(0.0);
  c.hidden = {3};
  SamplerServer s(c);
  // 4 → 3 → 2 with every weight 0 and output biases [0, 1]: always action 1.
  WeightsMessage w;
  w.version = 9;
  w.values.assign(4 * 3 + 3 + 3 * 2 + 2, 0.0F);
  w.values.back() = 1.0F;
  s.on_weights(w);
  EXPECT_EQ(s.weights_version(), 9U);
  EXPECT_EQ(s.step_local().actions, (std::vector<std::int64_t>(4, 1)));
  // Older weights are ignored, until a learner links again (restarted, counting from 1).
  WeightsMessage older = w;
  older.version = 2;
  older.values.back() = 0.0F;
  older.values[older.values.size() - 2] = 1.0F;  // always action 0
  s.on_weights(older);
  EXPECT_EQ(s.weights_version(), 9U);
  EXPECT_EQ(s.step_local().actions, (std::vector<std::int64_t>(4, 1)));
  s.on_new_weights_source();
  s.on_weights(older);
  EXPECT_EQ(s.weights_version(), 2U);
  EXPECT_EQ(s.step_local().actions, (std::vector<std::int64_t>(4, 0)));
  older.version = 1;
  s.on_weights(older);
  EXPECT_EQ(s.weights_version(), 2U);
  w.values.resize(3);
  EXPECT_THROW(s.on_weights(w), std::invalid_argument);
}

TEST(SamplerServer, BadActionsAndParamsAreErrors) {
  SamplerServer s(config(0.0));
  EXPECT_THROW((void)s.step({0, 1}), std::invalid_argument);
  EXPECT_THROW((void)s.step({0, 1, 2, 0}), std::invalid_argument);
  const NodeParams bad("sampler", {{"policy", "remote"}});
  EXPECT_THROW((void)SamplerConfig::from_params(bad, 1, 0), ParamError);
  const NodeParams typo("sampler", {{"num_env", "8"}});
  EXPECT_THROW((void)SamplerConfig::from_params(typo, 1, 0), ParamError);
  const NodeParams good("sampler",
                        {{"env", "CartPole-v1"}, {"num_envs", "2"}, {"policy", "local"}});
  const SamplerConfig c = SamplerConfig::from_params(good, 3, 1);
  EXPECT_EQ(c.num_envs, 2U);
  EXPECT_TRUE(c.local_policy);
}

}  // namespace
}  // namespace tagflow::nodes
