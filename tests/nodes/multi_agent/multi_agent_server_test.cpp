// Tests of nodes/multi_agent/multi_agent_server.hpp: each server is asked only for its agents,
// answers are checked before they count, a joint step makes one transition per agent in its
// policy's message, and the evaluation beside random play is reproducible.
#include "nodes/multi_agent/multi_agent_server.hpp"

#include <gtest/gtest.h>

#include "nodes/cluster/cluster_config.hpp"

namespace tagflow::nodes {
namespace {

cluster::MultiAgentConfig groups_of_tj4() {
  const cluster::ClusterConfig c = cluster::parse_cluster_config(
      "cluster: m\npolicies:\n  north: {}\n  south: {}\nagents: {0: north, 1: north, \"*\": "
      "south}\n"
      "nodes:\n  junction: {kind: multi_agent, data_port: 7000, params: {env: "
      "TrafficJunction4-v1}}\n  inference: {kind: inference, data_port: 7100}\n"
      "connections:\n  - {from: junction.observations, to: inference.observations}\n"
      "  - {from: inference.actions, to: junction.actions, after: 0}\nstop: {env_steps: 10}\n",
      "m.yaml");
  return c.multi_agent;
}

MultiAgentNodeConfig config(int eval_episodes = 0) {
  MultiAgentNodeConfig c;
  c.agents = groups_of_tj4();
  c.epsilon_start = c.epsilon_end = 0.0;
  c.eval_episodes = eval_episodes;
  c.seed = 3;
  c.eval_seed = 99;
  return c;
}

/// Every agent's answer: action `action`, from the policy the file gives it.
AgentActionsMessage answer_all(const MultiAgentServer& server, std::int64_t action) {
  AgentActionsMessage a;
  for (int agent = 0; agent < server.num_agents(); ++agent) {
    a.agents.push_back(static_cast<std::uint32_t>(agent));
    a.policies.push_back(static_cast<std::uint32_t>(
        server.config().agents.agent_policy[static_cast<std::size_t>(agent)]));
    a.versions.push_back(7);
    a.actions.push_back(action);
  }
  return a;
}

TEST(MultiAgentServer, EachServerIsAskedOnlyForTheAgentsOfItsPolicies) {
  const MultiAgentServer server(config());
  const AgentObservationsMessage north = server.observations({0});
  EXPECT_EQ(north.agents, (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(north.policies, (std::vector<std::uint32_t>{0, 0}));
  EXPECT_EQ(north.observations.size(), 2U * 324U);
  EXPECT_EQ(server.observations({1}).agents, (std::vector<std::uint32_t>{2, 3}));
  EXPECT_EQ(server.observations({0, 1}).rows(), 4U);
}

TEST(MultiAgentServer, AnswersForTheWrongAgentOrPolicyAreRefusedAndChangeNothing) {
  MultiAgentServer server(config());
  std::string why;
  AgentActionsMessage wrong = answer_all(server, 0);
  wrong.policies[2] = 0;  // agent 2 belongs to south
  EXPECT_FALSE(server.on_actions(wrong, &why));
  EXPECT_NE(why.find("agent 2"), std::string::npos) << why;
  AgentActionsMessage unknown = answer_all(server, 0);
  unknown.agents[0] = 9;
  EXPECT_FALSE(server.on_actions(unknown, &why));
  AgentActionsMessage out_of_range = answer_all(server, 0);
  out_of_range.actions[1] = 5;
  EXPECT_FALSE(server.on_actions(out_of_range, &why));
  EXPECT_FALSE(server.ready());
  EXPECT_THROW((void)server.step(), std::logic_error);
}

TEST(MultiAgentServer, AJointStepNeedsEveryAgentAndMakesOneRowPerAgentInItsPolicy) {
  MultiAgentServer server(config());
  AgentActionsMessage all = answer_all(server, 1);
  AgentActionsMessage north = all, south = all;
  north.agents.resize(2), north.policies.resize(2), north.versions.resize(2),
      north.actions.resize(2);
  south.agents.erase(south.agents.begin(), south.agents.begin() + 2);
  south.policies.erase(south.policies.begin(), south.policies.begin() + 2);
  south.versions.erase(south.versions.begin(), south.versions.begin() + 2);
  south.actions.erase(south.actions.begin(), south.actions.begin() + 2);
  ASSERT_TRUE(server.on_actions(north, nullptr));
  EXPECT_FALSE(server.ready());
  ASSERT_TRUE(server.on_actions(south, nullptr));
  ASSERT_TRUE(server.ready());
  const std::vector<TransitionsMessage> rows = server.step();
  ASSERT_EQ(rows.size(), 2U);
  for (const TransitionsMessage& m : rows) {
    EXPECT_EQ(m.rows(), 2U);
    EXPECT_EQ(m.observation_size, 324U + 4U);  // a group's policy sees the agent index
    EXPECT_EQ(m.weights_version, 7U);
    EXPECT_EQ(m.actions, (std::vector<std::int64_t>{1, 1}));
  }
  // The agent feature: the one-hot of agents 0 and 1 after their observations.
  EXPECT_EQ(rows[0].observations[324], 1.0F);
  EXPECT_EQ(rows[0].observations[328 + 325], 1.0F);
  EXPECT_EQ(server.joint_steps(), 1);
  EXPECT_FALSE(server.ready());  // the next step waits for new answers
}

TEST(MultiAgentServer, TheFinalEvaluationPlaysTheRandomPolicysSeedsGreedily) {
  const auto play = [] {
    MultiAgentServer server(config(2));
    server.finish();
    EXPECT_TRUE(server.evaluating());
    int steps = 0;
    while (!server.finished()) {
      EXPECT_TRUE(server.on_actions(answer_all(server, 1), nullptr));  // always brake
      EXPECT_TRUE(server.step().empty());  // no transitions while evaluating
      ++steps;
    }
    EXPECT_EQ(server.joint_steps(), 0);
    EXPECT_EQ(steps, 2 * 100);  // TrafficJunction episodes last max_steps
    return std::make_pair(server.last_evaluation(), server.random_baseline());
  };
  const auto [greedy, random] = play();
  EXPECT_EQ(greedy.episodes, 2);
  EXPECT_EQ(greedy.collisions_per_episode, 0.0);  // nobody moves, nobody collides
  EXPECT_LT(greedy.mean_return, 0.0);
  EXPECT_NE(random.mean_return, 0.0);
  const auto [again, random_again] = play();
  EXPECT_EQ(again.mean_return, greedy.mean_return);
  EXPECT_EQ(random_again.mean_return, random.mean_return);
}

}  // namespace
}  // namespace tagflow::nodes
