// Tests of the `process:` key (nodes/cluster/process_plan.hpp): the processes of a cluster file,
// and each class of mistake in the key refused with file, line and key.
#include "nodes/cluster/process_plan.hpp"

#include <gtest/gtest.h>

namespace tagflow::cluster {
namespace {

constexpr const char* kCluster = R"(cluster: t
hosts:
  a: {address: 127.0.0.1}
  b: {address: 127.0.0.2}
nodes:
  sampler: {kind: sampler, replicas: 2, host: a, data_port: 7000}
  replay: {kind: replay, host: b, data_port: 7100}
  learner: {kind: learner, host: b, data_port: 7200}
  inference: {kind: inference, host: a, data_port: 7300}
connections:
  - {from: sampler.transitions, to: replay.transitions}
  - {from: replay.batches, to: learner.batches}
stop: {env_steps: 1000}
)";

std::string with_replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

ConfigError plan_error_of(const std::string& text) {
  try {
    parse_cluster_config(text, "p.yaml");
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "expected a ConfigError for:\n" << text;
  return ConfigError("", 0, "", "");
}

std::vector<std::string> names(const std::vector<ProcessPlan>& plans) {
  std::vector<std::string> out;
  for (const ProcessPlan& p : plans) out.push_back(p.name);
  return out;
}

TEST(ProcessPlan, WithoutTheKeyEveryReplicaIsItsOwnProcess) {
  const auto plans = plan_processes(parse_cluster_config(kCluster, "p.yaml"));
  EXPECT_EQ(names(plans),
            (std::vector<std::string>{"sampler-0", "sampler-1", "replay", "learner", "inference"}));
  EXPECT_EQ(plans[0].replicas, std::vector<std::string>{"sampler-0"});
  EXPECT_EQ(plans[0].host, "a");
  EXPECT_FALSE(plans[0].needs_torch);
  EXPECT_FALSE(plans[2].needs_torch);
  EXPECT_TRUE(plans[3].needs_torch);
  EXPECT_TRUE(plans[4].needs_torch);
  ASSERT_NE(find_process(plans, "replay"), nullptr);
  EXPECT_EQ(find_process(plans, "replay")->host, "b");
  EXPECT_EQ(find_process(plans, "nope"), nullptr);
}

TEST(ProcessPlan, GroupsWithTheSameProcessShareOneInFileOrder) {
  std::string text = with_replaced(kCluster, "host: b, data_port: 7100}",
                                   "host: b, data_port: 7100, process: trainer}");
  text = with_replaced(text, "host: b, data_port: 7200}",
                       "host: b, data_port: 7200, process: trainer}");
  text = with_replaced(text, "replicas: 2, host: a, data_port: 7000}",
                       "replicas: 2, host: a, data_port: 7000, process: actors}");
  const auto plans = plan_processes(parse_cluster_config(text, "p.yaml"));
  EXPECT_EQ(names(plans), (std::vector<std::string>{"actors", "trainer", "inference"}));
  EXPECT_EQ(plans[0].replicas, (std::vector<std::string>{"sampler-0", "sampler-1"}));
  EXPECT_FALSE(plans[0].needs_torch);
  EXPECT_EQ(plans[1].replicas, (std::vector<std::string>{"replay", "learner"}));
  EXPECT_EQ(plans[1].host, "b");
  EXPECT_TRUE(plans[1].needs_torch);
}

TEST(ProcessPlan, AProcessMayTakeTheNameOfOneOfItsOwnReplicas) {
  std::string text = with_replaced(kCluster, "host: b, data_port: 7100}",
                                   "host: b, data_port: 7100, process: replay}");
  text = with_replaced(text, "host: b, data_port: 7200}",
                       "host: b, data_port: 7200, process: replay}");
  const auto plans = plan_processes(parse_cluster_config(text, "p.yaml"));
  ASSERT_NE(find_process(plans, "replay"), nullptr);
  EXPECT_EQ(find_process(plans, "replay")->replicas,
            (std::vector<std::string>{"replay", "learner"}));
}

TEST(ProcessPlan, TheProcessOfAReplicaIsTheOneThatHostsIt) {
  const std::string text = with_replaced(kCluster, "host: b, data_port: 7200}",
                                         "host: b, data_port: 7200, process: trainer}");
  const auto plans = plan_processes(parse_cluster_config(text, "p.yaml"));
  ASSERT_NE(process_of_replica(plans, "learner"), nullptr);
  EXPECT_EQ(process_of_replica(plans, "learner")->name, "trainer");
  ASSERT_NE(process_of_replica(plans, "replay"), nullptr);
  EXPECT_EQ(process_of_replica(plans, "replay")->name, "replay");
  EXPECT_EQ(process_of_replica(plans, "nope"), nullptr);
}

TEST(ProcessPlan, AProcessOverTwoHostsIsRefused) {
  std::string text = with_replaced(kCluster, "host: b, data_port: 7100}",
                                   "host: b, data_port: 7100, process: mixed}");
  text =
      with_replaced(text, "host: a, data_port: 7300}", "host: a, data_port: 7300, process: mixed}");
  const ConfigError e = plan_error_of(text);
  EXPECT_EQ(e.key(), "nodes.inference.process");
  EXPECT_EQ(e.line(), 9);
  EXPECT_NE(std::string(e.what()).find("one host"), std::string::npos) << e.what();
}

TEST(ProcessPlan, AProcessNamedLikeAnotherGroupsReplicaIsRefused) {
  const ConfigError e = plan_error_of(with_replaced(
      kCluster, "host: b, data_port: 7200}", "host: b, data_port: 7200, process: sampler-1}"));
  EXPECT_EQ(e.key(), "nodes.learner.process");
  EXPECT_EQ(e.line(), 8);
  EXPECT_NE(std::string(e.what()).find("sampler-1"), std::string::npos) << e.what();
}

TEST(ProcessPlan, AMalformedOrMistypedProcessNameIsRefused) {
  const ConfigError bad = plan_error_of(with_replaced(
      kCluster, "host: b, data_port: 7200}", "host: b, data_port: 7200, process: 'two words'}"));
  EXPECT_EQ(bad.key(), "nodes.learner.process");
  EXPECT_EQ(bad.line(), 8);
  const ConfigError list = plan_error_of(with_replaced(
      kCluster, "host: b, data_port: 7200}", "host: b, data_port: 7200, process: [a, b]}"));
  EXPECT_EQ(list.key(), "nodes.learner.process");
}

TEST(ProcessPlan, FindReplicaNamesItsGroupAndIndex) {
  const ClusterConfig config = parse_cluster_config(kCluster, "p.yaml");
  const auto [group, index] = find_replica(config, "sampler-1");
  ASSERT_NE(group, nullptr);
  EXPECT_EQ(group->name, "sampler");
  EXPECT_EQ(index, 1);
  EXPECT_EQ(find_replica(config, "sampler").first, nullptr);
  // Every replica's own name, and none of the names that only look like one.
  for (const NodeConfig& node : config.nodes) {
    for (int i = 0; i < node.replicas; ++i) {
      const auto [found, at] = find_replica(config, replica_name(node, i));
      EXPECT_EQ(found, &node) << replica_name(node, i);
      EXPECT_EQ(at, i) << replica_name(node, i);
    }
  }
  for (const char* stranger : {"sampler-2", "sampler-01", "sampler-", "sampler-+1", "sampler-1x",
                               "samplers-1", "sampler-99999", "replay-0", "", "-1"}) {
    EXPECT_EQ(find_replica(config, stranger).first, nullptr) << stranger;
  }
}

}  // namespace
}  // namespace tagflow::cluster
