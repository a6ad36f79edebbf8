// Tests of nodes/cluster/policy_config.hpp: the agent → policy mapping in its three forms, which
// replica hosts which policy, the link plan that routes by policy, and every mistake refused with
// file, line and key.
#include "nodes/cluster/policy_config.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>

#include "nodes/cluster/link_plan.hpp"

namespace tagflow::cluster {
namespace {

/// A TrafficJunction4-v1 cluster with `policies` (and `agents`) as given; inference split over
/// `servers` replicas, one replay and learner per policy when `learners` > 0.
std::string marl_file(const std::string& policies, int servers = 1, int learners = 0) {
  std::string text = "cluster: m\nmode: reactor\nseed: 1\n" + policies +
                     "nodes:\n"
                     "  junction: {kind: multi_agent, data_port: 7000, params: {env: "
                     "TrafficJunction4-v1}}\n"
                     "  inference: {kind: inference, replicas: " +
                     std::to_string(servers) + ", data_port: 7100}\n";
  if (learners > 0) {
    text += "  replay: {kind: replay, replicas: " + std::to_string(learners) +
            ", data_port: 7200}\n"
            "  learner: {kind: learner, replicas: " +
            std::to_string(learners) + ", data_port: 7300}\n";
  }
  text +=
      "connections:\n"
      "  - {from: junction.observations, to: inference.observations}\n"
      "  - {from: inference.actions, to: junction.actions, after: 0}\n";
  if (learners > 0) {
    text +=
        "  - {from: junction.transitions, to: replay.transitions}\n"
        "  - {from: replay.batches, to: learner.batches}\n"
        "  - {from: learner.priorities, to: replay.priorities, after: 0}\n"
        "  - {from: learner.weights, to: inference.weights, after: 0}\n";
  }
  return text + "stop: {env_steps: 100}\n";
}

ConfigError policy_error_of(const std::string& text) {
  try {
    parse_cluster_config(text, "m.yaml");
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "expected a ConfigError for:\n" << text;
  return ConfigError("", 0, "", "");
}

// Two env nodes step the file's env: the first one's, TrafficJunction4-v1 when it names none. A
// later node without `env` steps it; one that names another is refused at its `env`.
TEST(PolicyConfig, EveryMultiAgentNodeStepsTheFirstOnesEnv) {
  const auto file = [](const std::string& first, const std::string& second) {
    return "cluster: m\nmode: reactor\nseed: 1\npolicies:\n  car: {}\n"
           "nodes:\n"
           "  j1: {kind: multi_agent, data_port: 7000" +
           first +
           "}\n"
           "  j2: {kind: multi_agent, data_port: 7001" +
           second +
           "}\n"
           "  inference: {kind: inference, data_port: 7100}\n"
           "connections:\n"
           "  - {from: j1.observations, to: inference.observations}\n"
           "  - {from: inference.actions, to: j1.actions, after: 0}\n"
           "  - {from: j2.observations, to: inference.observations}\n"
           "  - {from: inference.actions, to: j2.actions, after: 0}\n"
           "stop: {env_steps: 100}\n";
  };
  EXPECT_EQ(parse_cluster_config(file(", params: {env: TrafficJunction10-v1}", ""), "m.yaml")
                .multi_agent.env,
            "TrafficJunction10-v1");
  const ConfigError e = policy_error_of(file("", ", params: {env: TrafficJunction10-v1}"));
  EXPECT_EQ(e.line(), 8);
  EXPECT_EQ(e.key(), "nodes.j2.params.env");
  EXPECT_NE(std::string(e.what()).find("(j1 has TrafficJunction4-v1, the default)"),
            std::string::npos)
      << e.what();
}

// A multi-agent file without `policies:` is refused at the line of the env node that needs them
// (line 5 here), not at the file's first line: the missing key has no line of its own.
TEST(PolicyConfig, AMissingPoliciesMapIsNamedAtTheNodeThatNeedsIt) {
  const ConfigError e = policy_error_of(marl_file(""));
  EXPECT_EQ(e.line(), 5) << e.what();
  EXPECT_NE(std::string(e.what()).find("m.yaml:5: policies: missing: the multi_agent node "
                                       "'junction' (this line) needs a top-level `policies:` map"),
            std::string::npos)
      << e.what();
}

TEST(PolicyConfig, APerAgentPolicyBecomesOnePolicyPerAgent) {
  const ClusterConfig c =
      parse_cluster_config(marl_file("policies:\n  car: {per_agent: true}\n"), "m.yaml");
  const MultiAgentConfig& m = c.multi_agent;
  EXPECT_EQ(m.env, "TrafficJunction4-v1");
  EXPECT_EQ(m.num_agents, 4);
  EXPECT_EQ(m.observation_size, 324);
  ASSERT_EQ(m.policies.size(), 4U);
  for (int a = 0; a < 4; ++a) {
    EXPECT_EQ(m.policies[static_cast<std::size_t>(a)].name, "car_" + std::to_string(a));
    EXPECT_EQ(m.agent_policy[static_cast<std::size_t>(a)], a);
    // One agent per policy: no agent feature.
    EXPECT_EQ(m.input_size(a), 324);
  }
}

TEST(PolicyConfig, TimeInputMakesEveryPolicysInputOneFloatWider) {
  std::string text = marl_file("policies:\n  car: {per_agent: true}\n");
  const std::string env = "params: {env: TrafficJunction4-v1";
  text.replace(text.find(env), env.size(), env + ", time_input: true");
  const MultiAgentConfig m = parse_cluster_config(text, "m.yaml").multi_agent;
  EXPECT_EQ(m.observation_size, 325);
  EXPECT_EQ(m.input_size(2), 325);

  // Two multi_agent nodes must agree (their rows go to the same policies).
  const std::string second =
      "  junction2: {kind: multi_agent, data_port: 7050, params: {env: TrafficJunction4-v1}}\n";
  text.insert(text.find("  inference:"), second);
  const ConfigError e = policy_error_of(text);
  EXPECT_EQ(e.key(), "nodes.junction2.params");  // left at its default: named at its params
  EXPECT_NE(std::string(e.what()).find("same input"), std::string::npos) << e.what();
}

TEST(PolicyConfig, OneSharedPolicySeesTheAgentIndexAsAFeature) {
  const ClusterConfig c =
      parse_cluster_config(marl_file("policies:\n  shared: {hidden: \"32,32\"}\n"), "m.yaml");
  const MultiAgentConfig& m = c.multi_agent;
  ASSERT_EQ(m.policies.size(), 1U);
  EXPECT_EQ(m.policies[0].agents, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(m.input_size(0), 324 + 4);
  EXPECT_EQ(m.policies[0].hidden, "32,32");
}

TEST(PolicyConfig, GroupsMapAgentsWithAFallback) {
  const ClusterConfig c =
      parse_cluster_config(marl_file("policies:\n  north: {}\n  south: {agent_id_input: false}\n"
                                     "agents: {0: north, 2: north, \"*\": south}\n"),
                           "m.yaml");
  const MultiAgentConfig& m = c.multi_agent;
  EXPECT_EQ(m.agent_policy, (std::vector<int>{0, 1, 0, 1}));
  EXPECT_EQ(m.input_size(0), 328);
  EXPECT_EQ(m.input_size(1), 324);
}

TEST(PolicyConfig, ServersSplitThePoliciesAndTheLinkPlanRoutesByPolicy) {
  const ClusterConfig c =
      parse_cluster_config(marl_file("policies:\n  car: {per_agent: true}\n", 2, 4), "m.yaml");
  const NodeConfig& inference = *c.find_node("inference");
  EXPECT_EQ(hosted_policies(c, inference, 0), (std::vector<int>{0, 1}));
  EXPECT_EQ(hosted_policies(c, inference, 1), (std::vector<int>{2, 3}));
  EXPECT_EQ(hosted_policies(c, *c.find_node("learner"), 3), (std::vector<int>{3}));

  const LinkPlan plan = plan_links(c);
  // The env reaches each server once, carrying only its policies.
  EXPECT_EQ(plan.output_policies("junction", "observations"),
            (std::vector<std::vector<int>>{{0, 1}, {2, 3}}));
  EXPECT_EQ(plan.output_policies("junction", "transitions"),
            (std::vector<std::vector<int>>{{0}, {1}, {2}, {3}}));
  // learner-i's weights go only to the server of policy i; replay-i feeds learner-i alone.
  EXPECT_EQ(plan.input_policies("inference-1", "weights"),
            (std::vector<std::vector<int>>{{2}, {3}}));
  EXPECT_EQ(plan.output_width("learner-0", "weights"), 1U);
  EXPECT_EQ(plan.output_width("replay-2", "batches"), 1U);
  EXPECT_EQ(plan.input_policies("learner-2", "batches"), (std::vector<std::vector<int>>{{2}}));
}

TEST(PolicyConfig, AnInferenceNodesExperienceReachesTheReplayOfEachPolicy) {
  std::string text = marl_file("policies:\n  car: {per_agent: true}\n", 2, 4);
  const std::string env_link = "  - {from: junction.transitions, to: replay.transitions}\n";
  const std::string experience = "  - {from: inference.experience, to: replay.transitions}\n";
  text.replace(text.find(env_link), env_link.size(), experience);
  const LinkPlan plan = plan_links(parse_cluster_config(text, "m.yaml"));
  EXPECT_EQ(plan.output_policies("inference-0", "experience"),
            (std::vector<std::vector<int>>{{0}, {1}}));
  EXPECT_EQ(plan.output_policies("inference-1", "experience"),
            (std::vector<std::vector<int>>{{2}, {3}}));
  EXPECT_EQ(plan.input_width("replay-3", "transitions"), 1U);

  // Only to a replay's transitions.
  const std::string wrong = "  - {from: inference.experience, to: learner.batches}\n";
  text.replace(text.find(experience), experience.size(), wrong);
  const ConfigError e = policy_error_of(text);
  EXPECT_EQ(e.key(), "connections[2].to");
  EXPECT_NE(std::string(e.what()).find("inference.experience carries transitions, and "
                                       "learner.batches takes batches; connect it to an input "
                                       "that takes transitions (replay.transitions)"),
            std::string::npos)
      << e.what();
}

// A policy a replay stores must be trained by a learner its batches reach: `south` stored and
// never learned from was run without a word (and never exported).
TEST(PolicyConfig, APolicyAReplayStoresButNoLearnerTrainsIsRefusedAtTheReplaysPolicies) {
  std::string text =
      marl_file("policies:\n  north: {}\n  south: {}\nagents: {0: north, \"*\": south}\n", 1, 2);
  EXPECT_NO_THROW((void)parse_cluster_config(text, "m.yaml"));
  const std::string learner = "  learner: {kind: learner, replicas: 2, data_port: 7300}\n";
  const std::string replay = "  replay: {kind: replay, replicas: 2, data_port: 7200}\n";
  text.replace(text.find(learner), learner.size(),
               "  learner: {kind: learner, data_port: 7300, params: {policies: north}}\n");
  text.replace(text.find(replay), replay.size(),
               "  replay: {kind: replay, replicas: 2, data_port: 7200,\n"
               "           params: {policies: [north, south]}}\n");
  const ConfigError e = policy_error_of(text);
  EXPECT_EQ(e.key(), "nodes.replay.params.policies");
  EXPECT_EQ(e.line(), 12);
  EXPECT_NE(std::string(e.what()).find("replay-1 stores policy 'south', which no learner its "
                                       "batches reach trains: add 'south' to that learner's "
                                       "`policies` (or leave it out of this replay's)"),
            std::string::npos)
      << e.what();
}

TEST(PolicyConfig, MistakesAreRefusedWithFileLineAndKey) {
  const std::string per_agent = "policies:\n  car: {per_agent: true}\n";
  ConfigError e =
      policy_error_of(marl_file("policies:\n  a: {}\n  b: {}\nagents: {7: a, \"*\": b}\n"));
  EXPECT_EQ(e.key(), "agents.7");
  EXPECT_EQ(e.line(), 7);
  EXPECT_NE(std::string(e.what()).find("no agent 7"), std::string::npos) << e.what();

  e = policy_error_of(marl_file("policies:\n  a: {}\nagents: {0: zebra, \"*\": a}\n"));
  EXPECT_EQ(e.key(), "agents.0");
  EXPECT_NE(std::string(e.what()).find("no policy 'zebra'"), std::string::npos) << e.what();

  e = policy_error_of(marl_file("policies:\n  a: {}\n  b: {}\nagents: {0: a, 1: b}\n"));
  EXPECT_NE(std::string(e.what()).find("agent 2 has no policy"), std::string::npos) << e.what();
  EXPECT_EQ(e.key(), "agents");  // the map has no "*" to name
  EXPECT_EQ(e.line(), 7);        // cluster, mode, seed, policies, a, b, agents

  e = policy_error_of(marl_file("policies:\n  a: {}\n  b: {}\nagents: {\"*\": a}\n"));
  EXPECT_EQ(e.key(), "policies.b");
  EXPECT_NE(std::string(e.what()).find("serves no agent"), std::string::npos) << e.what();

  e = policy_error_of(marl_file("policies:\n  a: {}\n  b: {}\n"));
  EXPECT_EQ(e.key(), "policies");

  e = policy_error_of(marl_file("policies:\n  a: {hidden: \"64,x\"}\n"));
  EXPECT_EQ(e.key(), "policies.a.hidden");

  // Four policies for three replays (and learners): one short.
  e = policy_error_of(marl_file(per_agent, 1, 3));
  EXPECT_EQ(e.key(), "nodes.replay.params.policies");

  // A multi_agent node without policies, policies without a multi_agent node.
  e = policy_error_of(marl_file(""));
  EXPECT_EQ(e.key(), "policies");
  e = policy_error_of(
      "cluster: s\npolicies: {a: {}}\nnodes:\n  sampler: {kind: sampler, data_port: 7000}\n"
      "stop: {env_steps: 10}\n");
  EXPECT_EQ(e.key(), "policies");

  // A node of a single-agent kind beside the multi_agent node is named with its kind.
  std::string evaluator = marl_file("policies:\n  car: {}\n", 1, 1);
  evaluator.replace(evaluator.find("nodes:\n"), 7,
                    "nodes:\n  ev: {kind: evaluator, data_port: 7400}\n");
  evaluator.replace(evaluator.find("connections:\n"), 13,
                    "connections:\n  - {from: learner.weights, to: ev.weights}\n");
  e = policy_error_of(evaluator);
  EXPECT_EQ(e.key(), "nodes.ev");
  EXPECT_NE(std::string(e.what()).find("drives its env with a multi_agent node, not with a node "
                                       "of kind evaluator"),
            std::string::npos)
      << e.what();
}

/// marl_file() with `learners` learners whose params are `params`.
std::string with_learner_params(const std::string& policies, int learners,
                                const std::string& params) {
  std::string text = marl_file(policies, 1, learners);
  const std::string learner = "data_port: 7300}";
  text.replace(text.find(learner), learner.size(), "data_port: 7300,\n    params: " + params + "}");
  return text;
}

// A policy's name names its exported file (export_dir/NAME.pt): a path, or nothing, is refused.
TEST(PolicyConfig, APolicyNameThatIsNoSafeFileNameIsRefusedAtItsLine) {
  for (const char* name : {"\"../esc\"", "\"a/b\"", "\"\"", "\".hidden\"", "\"a b\""}) {
    SCOPED_TRACE(name);
    const ConfigError e =
        policy_error_of(marl_file(std::string("policies:\n  ") + name + ": {}\n"));
    EXPECT_EQ(e.line(), 5);
    EXPECT_NE(std::string(e.what()).find("policy names are 1 to 64 letters"), std::string::npos)
        << e.what();
  }
  for (const char* name : {"car", "Car-1", "car_2.v3", "7up"}) {
    SCOPED_TRACE(name);
    const ClusterConfig c =
        parse_cluster_config(marl_file(std::string("policies:\n  ") + name + ": {}\n"), "m.yaml");
    EXPECT_EQ(c.multi_agent.policies.at(0).name, name);
  }
}

TEST(PolicyConfig, AVdnLearnersPolicyGetsJointTransitions) {
  const ClusterConfig c = parse_cluster_config(
      with_learner_params("policies:\n  car: {}\n", 1, "{algo: vdn}"), "m.yaml");
  ASSERT_EQ(c.multi_agent.policies.size(), 1U);
  EXPECT_TRUE(c.multi_agent.policies[0].joint_transitions);
  const ClusterConfig dqn = parse_cluster_config(
      with_learner_params("policies:\n  car: {}\n", 1, "{algo: dqn}"), "m.yaml");
  EXPECT_FALSE(dqn.multi_agent.policies[0].joint_transitions);
  // Groups: each vdn learner sums the Qs of its own policy's agents.
  const ClusterConfig groups = parse_cluster_config(
      with_learner_params("policies:\n  north: {}\n  south: {}\nagents: {0: north, 1: north, "
                          "\"*\": south}\n",
                          2, "{algo: vdn}"),
      "m.yaml");
  EXPECT_TRUE(groups.multi_agent.policies[0].joint_transitions);
  EXPECT_TRUE(groups.multi_agent.policies[1].joint_transitions);
}

TEST(PolicyConfig, AVdnLearnerOfAOneAgentPolicyIsRefusedWithFileLineAndKey) {
  const ConfigError e = policy_error_of(
      with_learner_params("policies:\n  car: {per_agent: true}\n", 4, "{algo: vdn}"));
  EXPECT_EQ(e.key(), "nodes.learner.params.algo");
  EXPECT_EQ(e.line(), 11);  // the learner's params line, where algo is
  EXPECT_NE(std::string(e.what()).find("policy 'car_0' serves 1 agent"), std::string::npos)
      << e.what();
  EXPECT_NE(std::string(e.what()).find("m.yaml:11"), std::string::npos) << e.what();
}

TEST(PolicyConfig, APolicyMayBatchWithItsOwnMaxBatchAndMaxWait) {
  const ClusterConfig c = parse_cluster_config(
      marl_file("policies:\n  car: {per_agent: true, max_batch: 8, max_wait: 2ms}\n"), "m.yaml");
  for (const PolicyConfig& p : c.multi_agent.policies) {
    EXPECT_EQ(p.max_batch, std::optional<std::uint32_t>(8U)) << p.name;
    EXPECT_EQ(p.max_wait, std::optional<std::chrono::nanoseconds>(std::chrono::milliseconds(2)));
  }
  const ClusterConfig plain =
      parse_cluster_config(marl_file("policies:\n  car: {per_agent: true}\n"), "m.yaml");
  EXPECT_FALSE(plain.multi_agent.policies[0].max_batch.has_value());
  EXPECT_FALSE(plain.multi_agent.policies[0].max_wait.has_value());

  ConfigError e = policy_error_of(marl_file("policies:\n  car: {per_agent: true, max_batch: 0}\n"));
  EXPECT_EQ(e.key(), "policies.car.max_batch");
  e = policy_error_of(marl_file("policies:\n  car: {per_agent: true, max_wait: soon}\n"));
  EXPECT_EQ(e.key(), "policies.car.max_wait");
  EXPECT_EQ(e.line(), 5);
}

TEST(PolicyConfig, EachPolicyIsServedExactlyOncePerPort) {
  // Two inference groups that both host car_0.
  std::string text = marl_file("policies:\n  car: {per_agent: true}\n");
  text.replace(text.find("connections:"), 0,
               "  spare: {kind: inference, data_port: 7400, params: {policies: car_0}}\n");
  text.replace(text.find("stop:"), 0,
               "  - {from: junction.observations, to: spare.observations}\n"
               "  - {from: spare.actions, to: junction.actions, after: 0}\n");
  const ConfigError e = policy_error_of(text);
  EXPECT_NE(std::string(e.what()).find("reaches policy 'car_0' on both"), std::string::npos)
      << e.what();
}

TEST(PolicyConfig, TheShippedMultiAgentFilesLoad) {
  for (const char* name :
       {"marl.yaml", "marl-serve.yaml", "marl-per-agent.yaml", "marl-vdn.yaml"}) {
    const ClusterConfig c =
        load_cluster_config(std::string(TAGFLOW_SOURCE_DIR) + "/configs/" + name);
    EXPECT_FALSE(c.multi_agent.empty()) << name;
    const bool vdn = std::string(name) == "marl-vdn.yaml";
    for (const PolicyConfig& p : c.multi_agent.policies)
      EXPECT_EQ(p.joint_transitions, vdn) << name;
  }
}

TEST(PolicyConfig, TimeInputWidensTheObservationByTheElapsedFractionOfTheStepLimit) {
  const ClusterConfig marl =
      load_cluster_config(std::string(TAGFLOW_SOURCE_DIR) + "/configs/marl.yaml");
  const ClusterConfig plain = parse_cluster_config(marl_file("policies:\n  a: {}\n"), "m.yaml");
  EXPECT_TRUE(marl.multi_agent.time_input);
  EXPECT_FALSE(plain.multi_agent.time_input);
  EXPECT_EQ(marl.multi_agent.observation_size, plain.multi_agent.observation_size + 1);
  EXPECT_GT(marl.multi_agent.max_episode_steps, 0);
  EXPECT_EQ(marl.multi_agent.max_episode_steps, plain.multi_agent.max_episode_steps);
}

TEST(PolicyConfig, HiddenSizesAndAgentIndexesAreWrittenOneWay) {
  for (const char* hidden :
       {"\"99999999999999999999\"", "\"1048577\"", "\"\"", "\"64,,64\"", "\"64,\"", "\"0\""}) {
    SCOPED_TRACE(hidden);
    const ConfigError e =
        policy_error_of(marl_file(std::string("policies:\n  a: {hidden: ") + hidden + "}\n"));
    EXPECT_EQ(e.key(), "policies.a.hidden");
    EXPECT_EQ(e.line(), 5);
  }
  EXPECT_NO_THROW(
      parse_cluster_config(marl_file("policies:\n  a: {hidden: \"1048576,1\"}\n"), "m.yaml"));
  // "00" and "+1" would name agents 0 and 1 a second time.
  for (const char* index : {"\"00\"", "\"+1\"", "\"1.0\""}) {
    SCOPED_TRACE(index);
    const ConfigError e = policy_error_of(marl_file(
        std::string("policies:\n  a: {}\n  b: {}\nagents: {0: a, ") + index + ": b, \"*\": a}\n"));
    EXPECT_NE(std::string(e.what()).find("agents are named by index"), std::string::npos)
        << e.what();
  }
}

TEST(PolicyConfig, AGatewayPortIsCheckedAgainstTheFilesOtherPorts) {
  std::string file = marl_file("policies:\n  a: {}\n");
  file.replace(file.find("data_port: 7100}"), 16, "data_port: 7100, params: {gateway_port: 7000}}");
  const ConfigError e = policy_error_of(file);
  EXPECT_EQ(e.key(), "nodes.inference.params.gateway_port");
  EXPECT_NE(std::string(e.what()).find("port 7000 on 127.0.0.1 is used by both junction data and "
                                       "inference gateway"),
            std::string::npos)
      << e.what();
}

// A gateway serves policies; a single-agent file has none, so its inference node would claim the
// port and serve nothing.
TEST(PolicyConfig, AGatewayPortInAFileWithoutPoliciesIsRefusedWithFileLineAndKey) {
  const ConfigError e = policy_error_of(
      "cluster: c\nmode: reactor\nseed: 1\nnodes:\n"
      "  sampler: {kind: sampler, data_port: 7000, params: {env: CartPole-v1}}\n"
      "  inference:\n"
      "    kind: inference\n"
      "    data_port: 7100\n"
      "    params:\n"
      "      gateway_port: 7830\n"
      "connections:\n"
      "  - {from: sampler.observations, to: inference.observations}\n"
      "  - {from: inference.actions, to: sampler.actions, after: 0}\n"
      "stop: {env_steps: 100}\n");
  EXPECT_EQ(e.key(), "nodes.inference.params.gateway_port");
  EXPECT_EQ(e.line(), 10);
  EXPECT_NE(std::string(e.what()).find("the inference service serves the policies of a "
                                       "multi-agent file (top-level policies:), and this file "
                                       "names none"),
            std::string::npos)
      << e.what();
}

TEST(PolicyConfig, AMultiAgentNodeMustSendItsObservationsAndGetItsActions) {
  const std::string file = marl_file("policies:\n  a: {}\n");
  const auto without = [&](const std::string& line) {
    std::string text = file;
    const auto at = text.find(line);
    EXPECT_NE(at, std::string::npos) << line;
    return text.erase(at, line.size());
  };
  ConfigError e =
      policy_error_of(without("  - {from: junction.observations, to: inference.observations}\n"));
  EXPECT_EQ(e.key(), "nodes.junction");
  EXPECT_NE(std::string(e.what()).find("its observations reach no inference server"),
            std::string::npos)
      << e.what();
  e = policy_error_of(without("  - {from: inference.actions, to: junction.actions, after: 0}\n"));
  EXPECT_EQ(e.key(), "nodes.junction");
  EXPECT_NE(std::string(e.what()).find("no connection brings its actions"), std::string::npos)
      << e.what();
}

}  // namespace
}  // namespace tagflow::cluster
