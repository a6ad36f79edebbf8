// Tests of hosts/replica_params_check.hpp: a bad param of any replica is found at load time,
// naming the file, the node group's line and the param.
#include "hosts/replica_params_check.hpp"

#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "nodes/kind/replica_config.hpp"
#include "tests/support/launched_processes.hpp"

namespace tagflow::hosts {
namespace {

const char* const kParamsCluster = R"(cluster: params
nodes:
  sampler: {kind: sampler, replicas: 2, data_port: 7610, params: {num_envs: 2}}
  replay:
    kind: replay
    data_port: 7620
    params: {capacity: 1000, min_size: 100}
  learner: {kind: learner, data_port: 7630, params: {eval_episodes: 3}}
connections:
  - {from: sampler.transitions, to: replay.transitions}
  - {from: replay.batches, to: learner.batches}
stop: {env_steps: 1000}
)";

/// `kParamsCluster` with `from` replaced by `to`, parsed as c.yaml.
cluster::ClusterConfig edited(const std::string& from, const std::string& to) {
  std::string text = kParamsCluster;
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return cluster::parse_cluster_config(text.replace(at, from.size(), to), "c.yaml");
}

/// The message check_replica_params throws for `config` ("" when none).
std::string error_of(const cluster::ClusterConfig& config) {
  try {
    check_replica_params(config);
  } catch (const cluster::ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(ReplicaParamsCheck, AcceptsAFileWhoseParamsAreValid) {
  EXPECT_EQ(error_of(edited("capacity: 1000", "capacity: 1000")), "");
}

TEST(ReplicaParamsCheck, ANegativeReplayCapacityNamesTheFileTheNodeAndTheParam) {
  const std::string error = error_of(edited("capacity: 1000", "capacity: -5"));
  // The param's own line and key (the node's name is on line 4, `capacity` on line 7).
  EXPECT_EQ(
      error.rfind("c.yaml:7: nodes.replay.params.capacity: node 'replay': param 'capacity'", 0), 0U)
      << error;
}

// The largest values that can run are the limits: a replay table holds at most 2^30 items, a
// sampler steps at most 65536 envs (beyond, the run used to start and fail: every transition
// dropped, or the sampler's memory gone).
TEST(ReplicaParamsCheck, ACapacityOrNumEnvsPastItsLimitIsRefusedAtItsLine) {
  EXPECT_EQ(error_of(edited("capacity: 1000", "capacity: 1073741824")), "");
  EXPECT_EQ(error_of(edited("capacity: 1000", "capacity: 1073741825")),
            "c.yaml:7: nodes.replay.params.capacity: node 'replay': param 'capacity' (line 7): "
            "must be at most 2^30 (1073741824 transitions, the most a replay table holds)");
  EXPECT_EQ(error_of(edited("num_envs: 2", "num_envs: 65536")), "");
  EXPECT_EQ(error_of(edited("num_envs: 2", "num_envs: 65537")),
            "c.yaml:3: nodes.sampler.params.num_envs: node 'sampler': param 'num_envs' (line 3): "
            "must be at most 65536 (the envs of one sampler, each stepped every round)");
}

// A list or a map where a param takes a string (a path, a name) is refused, not read as its text.
TEST(ReplicaParamsCheck, AListOrAMapWhereAStringGoesIsRefused) {
  EXPECT_EQ(error_of(edited("capacity: 1000", "capacity: 1000, selector: {a: 1}")),
            "c.yaml:7: nodes.replay.params.selector: node 'replay': param 'selector' (line 7): "
            "expected a string, got a map ({a: 1})");
  EXPECT_EQ(error_of(edited("num_envs: 2", "num_envs: 2, env: [CartPole-v1]"))
                .rfind("c.yaml:3: nodes.sampler.params.env: node 'sampler': param 'env' (line 3): "
                       "expected a string, got a list",
                       0),
            0U);
}

// An env id no sampler can step is named by its line and key, as a bad param is, before any
// process starts (it used to end `tagflow up` with no file, line or key, exit 1).
TEST(ReplicaParamsCheck, AnUnknownSamplerEnvNamesItsLineAndKey) {
  const std::string error = error_of(edited("num_envs: 2", "num_envs: 2, env: NoSuchEnv-v0"));
  EXPECT_EQ(error.rfind("c.yaml:3: nodes.sampler.params.env: unknown env 'NoSuchEnv-v0'", 0), 0U)
      << error;
}

// A sampler on `policy: inference` steps its envs only when an inference server answers its
// observations: without both connections it stepped nothing until the run's time ran out. Where
// the file writes no policy, a sampler connected to no inference node acts on its own copy.
TEST(ReplicaParamsCheck, ASamplerActsOnInferenceOnlyWithBothLinksAndLocallyWithNeither) {
  const cluster::ClusterConfig unlinked = edited("num_envs: 2", "num_envs: 2");
  const ClusterFacts facts = ClusterFacts::of(unlinked);
  EXPECT_TRUE(replica_config(unlinked, facts, "sampler-1").sampler->local_policy);
  EXPECT_EQ(error_of(edited("num_envs: 2", "num_envs: 2, policy: inference")),
            "c.yaml:3: nodes.sampler.params.policy: node 'sampler': param 'policy' (line 3): a "
            "sampler with policy inference steps its envs on an inference server's answers, and "
            "no connection takes sampler.observations: connect it to an inference node's "
            "observations, or act with policy: local");

  const std::string server = "  inference: {kind: inference, data_port: 7640}\nconnections:\n";
  const std::string asks = "  - {from: sampler.observations, to: inference.observations}\n";
  const std::string answers = "  - {from: inference.actions, to: sampler.actions, after: 0}\n";
  EXPECT_EQ(error_of(edited("connections:\n", server + asks)),
            "c.yaml:3: nodes.sampler.params: node 'sampler': param 'policy': a sampler with "
            "policy inference (the default when it is connected to an inference node) steps its "
            "envs on an inference server's answers, and no connection brings sampler.actions: "
            "connect an inference node's actions to it (after: 0), or act with policy: local");
  const cluster::ClusterConfig linked = edited("connections:\n", server + asks + answers);
  EXPECT_EQ(error_of(linked), "");
  EXPECT_FALSE(replica_config(linked, ClusterFacts::of(linked), "sampler-0").sampler->local_policy);
  EXPECT_EQ(error_of(edited("num_envs: 2", "num_envs: 2, policy: local")), "");
}

TEST(ReplicaParamsCheck, ABadSamplerOrLearnerParamIsFoundToo) {
  EXPECT_NE(
      error_of(edited("num_envs: 2", "num_envs: 2, nmu_envs: 3")).find("nodes.sampler.params"),
      std::string::npos);
  EXPECT_NE(error_of(edited("eval_episodes: 3", "eval_episodes: 0")).find("'eval_episodes'"),
            std::string::npos);
}

// The learner's LibTorch-side params (network, optimiser) used to be read only by the learner
// process, after every other process had started.
TEST(ReplicaParamsCheck, EveryLearnerParamIsCheckedWithoutLibTorch) {
  for (const char* bad : {"learning_rate: 5", "gamma: 1.5", "eval_max_steps: -1", "algo: ppo",
                          "target_update: 0", "max_grad_norm: -1", "negative_td_weight: 0",
                          "negative_td_weight: 2", "publish_every: 0", "optimiser: sgd"}) {
    const std::string error = error_of(edited("eval_episodes: 3", bad));
    const std::string name = std::string(bad).substr(0, std::string(bad).find(':'));
    EXPECT_EQ(
        error.rfind(
            "c.yaml:8: nodes.learner.params." + name + ": node 'learner': param '" + name + "'", 0),
        0U)
        << bad << ": " << error;
  }
}

// The samplers build their networks from the learner's `hidden`: a bad one is the learner's, at
// its line (it was reported as the first sampler's param, at the sampler's line).
TEST(ReplicaParamsCheck, ABadLearnerNetworkIsTheLearnersErrorNotASamplers) {
  for (const char* bad : {"hidden: \"abc\"", "hidden: \"0,64\""}) {
    const std::string error = error_of(edited("eval_episodes: 3", bad));
    EXPECT_EQ(
        error.rfind("c.yaml:8: nodes.learner.params.hidden: node 'learner': param 'hidden'", 0), 0U)
        << bad << ": " << error;
  }
}

TEST(ReplicaParamsCheck, EverySamplerGroupStepsTheFirstGroupsEnv) {
  const std::string second =
      "  other: {kind: sampler, data_port: 7640, params: {env: Acrobot-v1}}\nconnections:";
  std::string yaml = kParamsCluster;
  yaml.replace(yaml.find("connections:"), 12, second);
  const std::string error = error_of(cluster::parse_cluster_config(yaml, "c.yaml"));
  EXPECT_EQ(error,
            "c.yaml:9: nodes.other.params.env: every sampler group steps one env, 'CartPole-v1' "
            "(nodes.sampler); got 'Acrobot-v1'");
  // A group that leaves `env` at its default is named at its params, whose line it has.
  std::string acrobot = kParamsCluster;
  acrobot.replace(acrobot.find("num_envs: 2"), 11, "num_envs: 2, env: Acrobot-v1");
  acrobot.replace(acrobot.find("connections:"), 12,
                  "  other:\n    kind: sampler\n    data_port: 7640\n    params: {num_envs: 1}\n"
                  "connections:");
  EXPECT_EQ(error_of(cluster::parse_cluster_config(acrobot, "c.yaml")),
            "c.yaml:12: nodes.other.params: every sampler group steps one env, 'Acrobot-v1' "
            "(nodes.sampler); got 'CartPole-v1' (the default)");
}

// A multi-agent learner's `hidden`, when given, must be its policy's network: compared as sizes.
TEST(ReplicaParamsCheck, AMultiAgentLearnersHiddenIsComparedAsLayerSizes) {
  const auto marl = [](const std::string& hidden) {
    return cluster::parse_cluster_config(
        "cluster: m\nseed: 1\npolicies:\n  car: {hidden: \"64\"}\nnodes:\n"
        "  junction: {kind: multi_agent, data_port: 7000}\n"
        "  inference: {kind: inference, data_port: 7100}\n"
        "  replay: {kind: replay, data_port: 7200}\n"
        "  learner: {kind: learner, data_port: 7300, params: {hidden: " +
            hidden +
            "}}\n"
            "connections:\n"
            "  - {from: junction.observations, to: inference.observations}\n"
            "  - {from: inference.actions, to: junction.actions, after: 0}\n"
            "  - {from: junction.transitions, to: replay.transitions}\n"
            "  - {from: replay.batches, to: learner.batches}\n"
            "  - {from: learner.priorities, to: replay.priorities, after: 0}\n"
            "  - {from: learner.weights, to: inference.weights, after: 0}\n"
            "stop: {env_steps: 100}\n",
        "m.yaml");
  };
  for (const char* same : {"\"64\"", "\"064\"", "\" 64\"", "[64]"}) {
    EXPECT_EQ(error_of(marl(same)), "") << same;
  }
  EXPECT_NE(error_of(marl("\"32\"")).find("the network of policy 'car' is set under policies (64)"),
            std::string::npos)
      << error_of(marl("\"32\""));
  EXPECT_NE(error_of(marl("\"0\"")).find("sizes must be in [1, 2^20]"), std::string::npos)
      << error_of(marl("\"0\""));
}

// A sampler steps discrete actions: an env with continuous ones is refused when the file loads,
// at its `env`, not when the sampler's process starts.
TEST(ReplicaParamsCheck, ASamplerEnvWithContinuousActionsIsRefusedAtLoad) {
  std::string pendulum = kParamsCluster;
  pendulum.replace(pendulum.find("num_envs: 2"), 11, "num_envs: 2, env: Pendulum-v1");
  EXPECT_EQ(error_of(cluster::parse_cluster_config(pendulum, "c.yaml")),
            "c.yaml:3: nodes.sampler.params.env: Pendulum-v1: a sampler needs an env with "
            "discrete actions and float32 or uint8 observations");
}

TEST(ReplicaParamsCheck, ACheckpointedEnvWithoutStateIsRefusedAtLoad) {
  const auto checkpointed = [](const std::string& env) {
    std::string yaml = std::string(kParamsCluster) + "checkpoint: {every: 1s}\n";
    yaml.replace(yaml.find("num_envs: 2"), 11, "num_envs: 2, env: " + env);
    return cluster::parse_cluster_config(yaml, "c.yaml");
  };
  const std::string error = error_of(checkpointed("Blackjack-v1"));
  EXPECT_EQ(error, "c.yaml:13: checkpoint: sampler: Blackjack-v1 cannot be checkpointed (no state)")
      << error;
  EXPECT_EQ(error_of(checkpointed("CartPole-v1")), "");
}

TEST(ReplicaParamsCheck, ARangeIsWrittenAsAPersonWritesIt) {
  const std::string error =
      error_of(edited("eval_episodes: 3", "eval_episodes: 3, learning_rate: 0"));
  EXPECT_NE(error.find("param 'learning_rate' (line 8): must be in [1e-09, 1], got 0"),
            std::string::npos)
      << error;
}

// A gateway binds a ZeroMQ socket, which takes '*', an IPv4 or IPv6 address or an interface,
// never a host name: `localhost` there used to leave the service off at run time ("No such
// device").
TEST(ReplicaParamsCheck, AGatewayBindIsAnAddressOrAnInterfaceNotAHostName) {
  const std::string marl =
      "cluster: m\nmode: reactor\nseed: 1\npolicies:\n  car: {}\nnodes:\n"
      "  junction: {kind: multi_agent, data_port: 7000, params: {env: TrafficJunction4-v1}}\n"
      "  inference: {kind: inference, data_port: 7100, params: {gateway_port: 7830, "
      "gateway_bind: BIND}}\n"
      "connections:\n"
      "  - {from: junction.observations, to: inference.observations}\n"
      "  - {from: inference.actions, to: junction.actions, after: 0}\n"
      "stop: {env_steps: 100}\n";
  const auto error_with = [&](const std::string& bind) {
    std::string text = marl;
    text.replace(text.find("BIND"), 4, bind);
    return error_of(cluster::parse_cluster_config(text, "m.yaml"));
  };
  for (const std::string ok :
       {"127.0.0.1", "0.0.0.0", "\"*\"", "lo", "eth0", "\"::1\"", "\"::\"", "\"fd00::a\""}) {
    EXPECT_EQ(error_with(ok), "") << ok;
  }
  const std::string host = error_with("localhost");
  EXPECT_NE(host.find("m.yaml:8: nodes.inference.params.gateway_bind: node 'inference': param "
                      "'gateway_bind' (line 8): ZeroMQ binds to an address or an interface, not a "
                      "host name: write "
                      "127.0.0.1 for 'localhost'"),
            std::string::npos)
      << host;
  EXPECT_NE(error_with("10.0.0.300").find("'10.0.0.300' is not an IPv4 address"),
            std::string::npos);
  // An IPv6 address is written as the metrics' bind addresses are, without brackets.
  EXPECT_NE(error_with("\"[::1]\"").find("'[::1]': write an IPv6 address without brackets"),
            std::string::npos);
  EXPECT_NE(error_with("\"fd00::g\"").find("'fd00::g' is not an IPv6 address"), std::string::npos);
  EXPECT_NE(error_with("\"127.0.0.1:80\"")
                .find("'127.0.0.1:80' is not an address: the port goes in a key of its own"),
            std::string::npos)
      << error_with("\"127.0.0.1:80\"");
  EXPECT_NE(error_with("a/b").find("neither '*', an IP address nor an interface name"),
            std::string::npos);
  // Quoted values are read without their quotes: an empty one is empty, not the name '""'.
  EXPECT_NE(error_with("''").find("param 'gateway_bind' (line 8): must not be empty"),
            std::string::npos)
      << error_with("''");
  const cluster::ClusterConfig star = [&] {
    std::string text = marl;
    text.replace(text.find("BIND"), 4, "\"*\"");
    return cluster::parse_cluster_config(text, "m.yaml");
  }();
  EXPECT_EQ(star.find_node("inference")->params.at("gateway_bind"), "*");
}

TEST(ReplicaParamsCheck, LayerSizesHaveNoEmptyEntryAndTheEvaluatorPlaysTheLearnersNetwork) {
  for (const char* hidden : {"\"64,,64\"", "\"64,\"", "\",64\""}) {
    SCOPED_TRACE(hidden);
    const std::string error =
        error_of(edited("eval_episodes: 3", std::string("eval_episodes: 3, hidden: ") + hidden));
    EXPECT_NE(error.find("nodes.learner.params.hidden"), std::string::npos) << error;
  }
  EXPECT_EQ(error_of(edited("eval_episodes: 3", "eval_episodes: 3, hidden: [32, 32]")), "");
  std::string yaml = kParamsCluster;
  yaml.replace(yaml.find("connections:"), 12,
               "  evaluator: {kind: evaluator, data_port: 7650, params: {hidden: \"32\"}}\n"
               "connections:\n  - {from: learner.weights, to: evaluator.weights}");
  const std::string error = error_of(cluster::parse_cluster_config(yaml, "c.yaml"));
  EXPECT_NE(error.find("nodes.evaluator.params.hidden"), std::string::npos) << error;
  EXPECT_NE(error.find("the evaluator plays the learner's network"), std::string::npos) << error;
}

// A sampler or inference server that a learner's weights reach plays the learner's network: its
// own `hidden` of another shape is refused at load, at its line (it used to load, then fail the
// run at the first weights with no file, line or key). One no learner feeds keeps its own.
TEST(ReplicaParamsCheck, ANetworkThatALearnersWeightsReachMustBeTheLearners) {
  const std::string local_sampler =
      "  sampler: {kind: sampler, replicas: 2, data_port: 7610, params: {num_envs: 2, policy: "
      "local, hidden: \"32\"}}";
  std::string yaml = kParamsCluster;
  yaml.replace(yaml.find("  sampler:"),
               yaml.find('\n', yaml.find("  sampler:")) - yaml.find("  sampler:"), local_sampler);
  const std::string unfed = error_of(cluster::parse_cluster_config(yaml, "c.yaml"));
  EXPECT_EQ(unfed, "");  // no weights reach it: its own network stands
  yaml.replace(yaml.find("stop:"), 5,
               "  - {from: learner.weights, to: sampler.weights, after: 0}\nstop:");
  const std::string error = error_of(cluster::parse_cluster_config(yaml, "c.yaml"));
  EXPECT_EQ(error.rfind("c.yaml:3: nodes.sampler.params.hidden: ", 0), 0U) << error;
  EXPECT_NE(error.find("the weights of learner 'learner' are for hidden \"64,64\""),
            std::string::npos)
      << error;
  // The same sizes written otherwise are the learner's.
  std::string same = yaml;
  same.replace(same.find("hidden: \"32\""), 12, "hidden: [64, 64]");
  EXPECT_EQ(error_of(cluster::parse_cluster_config(same, "c.yaml")), "") << same;
}

// A learner's export_dir names a directory: an empty one is refused at its line, not taken as
// "export nothing" (configs/marl.yaml with its export_dir emptied).
TEST(ReplicaParamsCheck, AnEmptyExportDirIsRefused) {
  std::string text =
      testing::read_text_file(std::string(TAGFLOW_SOURCE_DIR) + "/configs/marl.yaml");
  const std::string from = "export_dir: runs/marl-policies";
  const std::size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos);
  EXPECT_EQ(error_of(cluster::parse_cluster_config(text, "marl.yaml")), "");
  text.replace(at, from.size(), "export_dir: \"\"");
  const std::string error = error_of(cluster::parse_cluster_config(text, "marl.yaml"));
  EXPECT_EQ(error.rfind("marl.yaml:68: nodes.learner.params.export_dir: ", 0), 0U) << error;
  EXPECT_NE(error.find("an empty directory"), std::string::npos) << error;
}

// An inference node's own batching is bounded as a policy's is (policies.NAME, configs/README.md).
TEST(ReplicaParamsCheck, AnInferenceNodesBatchingIsBoundedAsAPolicysIs) {
  const std::string single =
      "cluster: s\nnodes:\n"
      "  sampler: {kind: sampler, data_port: 7000, params: {policy: inference}}\n"
      "  inference: {kind: inference, data_port: 7100, params: {BATCHING}}\n"
      "connections:\n"
      "  - {from: sampler.observations, to: inference.observations}\n"
      "  - {from: inference.actions, to: sampler.actions, after: 0}\n"
      "stop: {env_steps: 100}\n";
  const std::string marl =
      "cluster: m\nmode: reactor\nseed: 1\npolicies:\n  car: {}\nnodes:\n"
      "  junction: {kind: multi_agent, data_port: 7000, params: {env: TrafficJunction4-v1}}\n"
      "  inference: {kind: inference, data_port: 7100, params: {BATCHING}}\n"
      "connections:\n"
      "  - {from: junction.observations, to: inference.observations}\n"
      "  - {from: inference.actions, to: junction.actions, after: 0}\n"
      "stop: {env_steps: 100}\n";
  for (const auto& [file, line] : {std::pair{single, 4}, std::pair{marl, 8}}) {
    const std::string text = file;
    const auto error_with = [&text](const std::string& batching) {
      std::string edited = text;
      edited.replace(edited.find("BATCHING"), 8, batching);
      return error_of(cluster::parse_cluster_config(edited, "i.yaml"));
    };
    const std::string at = "i.yaml:" + std::to_string(line) + ": nodes.inference.params.";
    const std::string own = " (line " + std::to_string(line) + "): ";
    EXPECT_EQ(error_with("max_batch: 1048576, max_wait: 1440m"), "");
    EXPECT_EQ(error_with("max_batch: 1048577"),
              at + "max_batch: node 'inference': param 'max_batch'" + own +
                  "at most 1048576 rows per forward pass");
    EXPECT_EQ(error_with("max_wait: 1441m"),
              at + "max_wait: node 'inference': param 'max_wait'" + own +
                  "at most 24 hours (1440m): it is how long a request may wait for a batch");
  }
}

// In a multi-agent file `policies` and a learner's `export_dir` are read where the file is
// loaded: a learner's unknown param names them among the known ones, and another kind's
// `export_dir` is as unknown as any other param.
TEST(ReplicaParamsCheck, AMultiAgentFilesOwnParamsAreKnownWhereTheyApplyOnly) {
  const std::string marl =
      "cluster: m\nmode: reactor\nseed: 1\npolicies:\n  car: {}\nnodes:\n"
      "  junction: {kind: multi_agent, data_port: 7000, params: {env: TrafficJunction4-v1}}\n"
      "  inference: {kind: inference, data_port: 7100}\n"
      "  replay: {kind: replay, data_port: 7200, params: {REPLAY}}\n"
      "  learner: {kind: learner, data_port: 7300, params: {LEARNER}}\n"
      "connections:\n"
      "  - {from: junction.observations, to: inference.observations}\n"
      "  - {from: inference.actions, to: junction.actions, after: 0}\n"
      "  - {from: junction.transitions, to: replay.transitions}\n"
      "  - {from: replay.batches, to: learner.batches}\n"
      "  - {from: learner.weights, to: inference.weights, after: 0}\n"
      "stop: {env_steps: 100}\n";
  const auto error_with = [&](const std::string& replay, const std::string& learner) {
    std::string text = marl;
    text.replace(text.find("REPLAY"), 6, replay);
    text.replace(text.find("LEARNER"), 7, learner);
    return error_of(cluster::parse_cluster_config(text, "m.yaml"));
  };
  EXPECT_EQ(error_with("policies: car", "policies: car, export_dir: out"), "");
  const std::string typo = error_with("capacity: 1000", "export_dri: out");
  EXPECT_NE(typo.find("param 'export_dri' (line 10): unknown param (known: "), std::string::npos)
      << typo;
  EXPECT_NE(typo.find(", policies, export_dir)"), std::string::npos) << typo;
  const std::string replay = error_with("export_dir: out", "gamma: 0.9");
  EXPECT_NE(replay.find("nodes.replay.params.export_dir: node 'replay': param 'export_dir' "
                        "(line 9): unknown param (known: capacity, "),
            std::string::npos)
      << replay;
  EXPECT_NE(replay.find(", policies)"), std::string::npos) << replay;
}

}  // namespace
}  // namespace tagflow::hosts
