#include "nodes/gateway/episode_experience.hpp"

#include <gtest/gtest.h>

namespace tagflow::gateway {
namespace {

/// 3 agents of 2 floats: p0 serves agents 0 and 1 with the agent's one-hot added, p1 agent 2.
GatewayModel model() {
  GatewayModel m;
  m.server = "inference-0";
  m.num_agents = 3;
  m.observation_size = 2;
  m.num_actions = 2;
  m.policy_names = {"p0", "p1"};
  m.agent_policy = {0, 0, 1};
  m.policy_server = {"inference-0", "inference-0"};
  m.hosted = {0, 1};
  m.agent_id_input = {true, false};
  return m;
}

GatewayRequest act(std::vector<std::uint32_t> agents, std::vector<float> observations,
                   std::vector<std::pair<std::uint32_t, double>> rewards = {},
                   std::vector<std::pair<std::uint32_t, bool>> dones = {}) {
  GatewayRequest r;
  r.op = GatewayOp::act;
  r.agents = std::move(agents);
  r.observations = std::move(observations);
  r.rewards = std::move(rewards);
  r.dones = std::move(dones);
  return r;
}

TEST(EpisodeExperienceTest, TheNextActCompletesEachAgentsTransitionWithItsRewardAndObservation) {
  const GatewayModel m = model();
  EpisodeExperience e(m);
  std::vector<nodes::TransitionsMessage> out;
  const GatewayRequest first = act({0, 2}, {1, 2, 5, 6});
  EXPECT_EQ(e.complete(first, false, out), 0U);  // nothing open yet
  e.open(first.agents, first.observations, {1, 0}, {7, 3});
  EXPECT_EQ(e.open_steps(), 2U);

  const GatewayRequest second = act({0, 2}, {3, 4, 7, 8}, {{0, 0.5}, {2, -1.0}});
  ASSERT_EQ(e.check(second), "");
  EXPECT_EQ(e.complete(second, false, out), 2U);
  ASSERT_EQ(out.size(), 2U);
  const nodes::TransitionsMessage& p0 = out[0];
  EXPECT_EQ(p0.observation_size, 5U);  // 2 floats + the one-hot of 3 agents
  EXPECT_EQ(p0.observations, (std::vector<float>{1, 2, 1, 0, 0}));
  EXPECT_EQ(p0.next_observations, (std::vector<float>{3, 4, 1, 0, 0}));
  EXPECT_EQ(p0.actions, (std::vector<std::int64_t>{1}));
  EXPECT_EQ(p0.rewards, (std::vector<float>{0.5F}));
  EXPECT_EQ(p0.terminated, (std::vector<std::uint8_t>{0}));
  EXPECT_EQ(p0.weights_version, 7U);
  const nodes::TransitionsMessage& p1 = out[1];
  EXPECT_EQ(p1.observation_size, 2U);
  EXPECT_EQ(p1.observations, (std::vector<float>{5, 6}));
  EXPECT_EQ(p1.next_observations, (std::vector<float>{7, 8}));
  EXPECT_EQ(p1.rewards, (std::vector<float>{-1.0F}));
  EXPECT_EQ(p1.weights_version, 3U);
  EXPECT_EQ(e.open_steps(), 0U);
}

TEST(EpisodeExperienceTest, RewardsAddUpWhileAnAgentIsAbsentAndDoneIsTerminal) {
  const GatewayModel m = model();
  EpisodeExperience e(m);
  std::vector<nodes::TransitionsMessage> out;
  const GatewayRequest first = act({2}, {5, 6});
  e.open(first.agents, first.observations, {1}, {0});
  // Agent 2 is not observed: its reward waits on its open step.
  EXPECT_EQ(e.complete(act({0}, {1, 1}, {{2, 1.0}}), false, out), 0U);
  EXPECT_EQ(e.open_steps(), 1U);
  // Done without an observation: terminal, next observation = the last one.
  EXPECT_EQ(e.complete(act({0}, {1, 1}, {{2, 2.0}}, {{2, true}}), false, out), 1U);
  EXPECT_EQ(out[1].rewards, (std::vector<float>{3.0F}));
  EXPECT_EQ(out[1].terminated, (std::vector<std::uint8_t>{1}));
  EXPECT_EQ(out[1].next_observations, (std::vector<float>{5, 6}));
}

TEST(EpisodeExperienceTest, TheEndCompletesEveryOpenStepAsTerminalOnItsLastObservation) {
  const GatewayModel m = model();
  EpisodeExperience e(m);
  std::vector<nodes::TransitionsMessage> out;
  const GatewayRequest first = act({0, 1, 2}, {1, 1, 2, 2, 3, 3});
  e.open(first.agents, first.observations, {0, 1, 0}, {1, 1, 1});
  GatewayRequest end;
  end.op = GatewayOp::episode_end;
  end.rewards = {{1, 4.0}};
  ASSERT_EQ(e.check(end), "");
  EXPECT_EQ(e.complete(end, true, out), 3U);
  EXPECT_EQ(out[0].rows(), 2U);
  EXPECT_EQ(out[0].rewards, (std::vector<float>{0.0F, 4.0F}));
  EXPECT_EQ(out[0].terminated, (std::vector<std::uint8_t>{1, 1}));
  EXPECT_EQ(out[0].next_observations, out[0].observations);
  EXPECT_EQ(out[1].rows(), 1U);
  EXPECT_EQ(e.open_steps(), 0U);
}

TEST(EpisodeExperienceTest, RefusesRewardsOrDonesOfAgentsWithoutAnOpenStepAndSeveralRows) {
  const GatewayModel m = model();
  EpisodeExperience e(m);
  EXPECT_NE(e.check(act({0}, {1, 1}, {{0, 1.0}})).find("agent 0"), std::string::npos);
  EXPECT_NE(e.check(act({0}, {1, 1}, {}, {{1, true}})).find("dones for agent 1"),
            std::string::npos);
  GatewayRequest rows = act({0}, {1, 1, 2, 2});
  rows.rows = 2;
  EXPECT_NE(e.check(rows).find("one observation per agent"), std::string::npos);
  const GatewayRequest first = act({0}, {1, 1});
  e.open(first.agents, first.observations, {1}, {0});
  EXPECT_EQ(e.check(act({0}, {1, 1}, {{0, 1.0}})), "");
  EXPECT_NE(e.check(act({0}, {1, 1}, {{2, 1.0}})), "");
}

}  // namespace
}  // namespace tagflow::gateway
