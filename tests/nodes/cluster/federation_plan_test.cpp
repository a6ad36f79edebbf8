// Tests of nodes/cluster/federation_plan.hpp: the federation a cluster file runs as, and the
// coordinator process started from a cluster file.
#include "nodes/cluster/federation_plan.hpp"

#include <fstream>

#include <gtest/gtest.h>

#include "tests/support/run_command.hpp"

namespace tagflow::cluster {
namespace {

using coordinator::ConnectionDelay;

const coordinator::UpstreamLink* upstream(const coordinator::FederationSpec& spec,
                                          const std::string& id, const std::string& from) {
  for (const auto& link : spec.find(id)->upstreams) {
    if (link.federate == from) return &link;
  }
  return nullptr;
}

TEST(FederationPlan, LocalConfigHasOneFederatePerReplicaLinkedByItsConnections) {
  const coordinator::FederationSpec spec =
      federation_spec(load_cluster_config(std::string(TAGFLOW_SOURCE_DIR) + "/configs/local.yaml"));
  EXPECT_EQ(spec.address, "tcp://127.0.0.1:7600");
  std::vector<std::string> ids;
  for (const auto& f : spec.federates) ids.push_back(f.id);
  EXPECT_EQ(ids,
            (std::vector<std::string>{"sampler-0", "sampler-1", "replay", "learner", "inference"}));
  // sampler.transitions -> replay.transitions has no delay: same tag.
  ASSERT_NE(upstream(spec, "replay", "sampler-1"), nullptr);
  EXPECT_EQ(upstream(spec, "replay", "sampler-1")->delay, ConnectionDelay(std::nullopt));
  // learner.priorities -> replay.priorities is `after: 4ms`; inference.actions -> sampler.actions
  // is `after: 0`.
  ASSERT_NE(upstream(spec, "replay", "learner"), nullptr);
  EXPECT_EQ(upstream(spec, "replay", "learner")->delay, ConnectionDelay(4'000'000));
  ASSERT_NE(upstream(spec, "sampler-0", "inference"), nullptr);
  EXPECT_EQ(upstream(spec, "sampler-0", "inference")->delay, ConnectionDelay(0));
  // Both samplers talk to the inference server, which answers both.
  EXPECT_NE(upstream(spec, "inference", "sampler-0"), nullptr);
  EXPECT_NE(upstream(spec, "sampler-0", "inference"), nullptr);
  EXPECT_EQ(upstream(spec, "sampler-0", "sampler-1"), nullptr);
  EXPECT_EQ(spec.find("learner")->downstreams, (std::vector<std::string>{"inference", "replay"}));
}

TEST(FederationPlan, TwoConnectionsBetweenTheSameNodesKeepTheSmallerDelay) {
  const ClusterConfig config = parse_cluster_config(R"(cluster: t
nodes:
  learner: {kind: learner, data_port: 7000}
  sampler: {kind: sampler, data_port: 7100}
  inference: {kind: inference, data_port: 7200}
  replay: {kind: replay, data_port: 7300}
connections:
  - {from: learner.weights, to: sampler.weights, after: 5ms}
  - {from: learner.weights, to: inference.weights, after: 5ms}
  - {from: inference.actions, to: sampler.actions, after: 0}
  - {from: sampler.observations, to: inference.observations, after: 2ms}
  - {from: sampler.transitions, to: replay.transitions}
  - {from: replay.batches, to: learner.batches}
stop: {seconds: 1}
)",
                                                    "t.yaml");
  const coordinator::FederationSpec spec = federation_spec(config);
  EXPECT_EQ(upstream(spec, "sampler", "learner")->delay, ConnectionDelay(5'000'000));
  EXPECT_EQ(upstream(spec, "sampler", "inference")->delay, ConnectionDelay(0));
  EXPECT_EQ(upstream(spec, "inference", "sampler")->delay, ConnectionDelay(2'000'000));
}

TEST(CoordinatorCommand, RunsFromAClusterFileAndNamesFederatesThatNeverJoined) {
  const std::string path = ::testing::TempDir() + "coordinator_cluster.yaml";
  std::ofstream(path) << R"(cluster: t
coordinator: {port: 0, join_timeout: 300ms}
nodes:
  sampler: {kind: sampler, data_port: 7100}
  replay: {kind: replay, data_port: 7200}
connections:
  - {from: sampler.transitions, to: replay.transitions}
stop: {seconds: 1}
)";
  // Port 0 is refused by the cluster file (ports are 1..65535); bind a free port explicitly.
  const auto refused =
      testing::run_command(testing::tagflow_binary() + " coordinator --config " + path + " 2>&1");
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("coordinator.port"), std::string::npos) << refused.output;

  std::ofstream(path) << R"(cluster: t
coordinator: {port: 7600, join_timeout: 300ms}
nodes:
  sampler: {kind: sampler, data_port: 7100}
  replay: {kind: replay, data_port: 7200}
connections:
  - {from: sampler.transitions, to: replay.transitions}
stop: {seconds: 1}
)";
  const auto result = testing::run_command(testing::tagflow_binary() + " coordinator --config " +
                                           path + " --bind tcp://127.0.0.1:* 2>&1");
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find("sampler"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("replay"), std::string::npos) << result.output;
}

}  // namespace
}  // namespace tagflow::cluster
