// ReplicaMetrics serving a real HTTP endpoint: the replica's labels, its index over the group's
// metrics_port (a joined sampler too), and a taken port reported without stopping the replica.
#include "hosts/replica_metrics.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "common/loopback_ports.hpp"
#include "tests/monitoring/http_get.hpp"
#include "tests/support/kind_families.hpp"

namespace tagflow::hosts {
namespace {

/// A free port pair on 127.0.0.1, below the kernel's ephemeral range (common/loopback_ports.hpp).
std::uint16_t free_port() {
  const int base = free_loopback_port_range(2);
  if (base < 0) throw std::runtime_error("no free port pair");
  return static_cast<std::uint16_t>(base);
}

cluster::ClusterConfig cluster_with_metrics_port(std::uint16_t port) {
  const std::string text = R"(cluster: metrics
mode: actor
hosts:
  local: {address: 127.0.0.1}
coordinator: {host: local, port: 7600}
nodes:
  sampler:
    kind: sampler
    replicas: 2
    host: local
    data_port: 7610
    metrics_port: )" + std::to_string(port) +
                           R"(
  replay: {kind: replay, host: local, data_port: 7620}
connections:
  - {from: sampler.transitions, to: replay.transitions}
stop: {env_steps: 100}
monitoring: {bind: 127.0.0.1}
)";
  return cluster::parse_cluster_config(text, "metrics.yaml");
}

TEST(ReplicaMetrics, ServesTheReplicasLabelsOnTheGroupsPortPlusItsIndex) {
  const std::uint16_t base = free_port();
  const cluster::ClusterConfig config = cluster_with_metrics_port(base);
  const ClusterFacts facts = ClusterFacts::of(config);
  std::vector<std::string> log;
  ReplicaMetrics metrics(config, replica_config(config, facts, "sampler-0"), true,
                         [&](const std::string& line) { log.push_back(line); });
  ASSERT_EQ(metrics.port(), base) << (log.empty() ? "" : log.front());
  metrics.node().add_env_steps(42);
  const testing::HttpResponse response = testing::http_get(base, "/metrics");
  ASSERT_EQ(response.status, 200);
  EXPECT_NE(response.body.find("node=\"sampler-0\""), std::string::npos);
  EXPECT_NE(response.body.find("kind=\"sampler\""), std::string::npos);
  EXPECT_NE(response.body.find("mode=\"actor\""), std::string::npos);
  EXPECT_NE(response.body.find("tagflow_env_steps_total{"), std::string::npos);
}

TEST(ReplicaMetrics, ATakenPortIsReportedAndTheReplicaKeepsItsRegistry) {
  const std::uint16_t base = free_port();
  const cluster::ClusterConfig config = cluster_with_metrics_port(base);
  const ClusterFacts facts = ClusterFacts::of(config);
  monitoring::ProcessMetrics squatter({"other", "replay", "reactor"},
                                      tagflow::test::families("replay"));
  const monitoring::MetricsEndpoint taken(squatter, "127.0.0.1", base);
  std::vector<std::string> log;
  ReplicaMetrics metrics(config, replica_config(config, facts, "sampler-0"), true,
                         [&](const std::string& line) { log.push_back(line); });
  EXPECT_EQ(metrics.port(), 0);
  ASSERT_EQ(log.size(), 1U);
  EXPECT_NE(log[0].find("sampler-0"), std::string::npos) << log[0];
  metrics.node().add_env_steps(1);  // still usable
}

TEST(ReplicaMetrics, NothingIsServedWhenNotAskedOrWithoutAMetricsPort) {
  const cluster::ClusterConfig config = cluster_with_metrics_port(free_port());
  const ClusterFacts facts = ClusterFacts::of(config);
  ReplicaMetrics quiet(config, replica_config(config, facts, "sampler-1"), false, {});
  EXPECT_EQ(quiet.port(), 0);
  ReplicaMetrics replay(config, replica_config(config, facts, "replay"), true, {});
  EXPECT_EQ(replay.port(), 0);
}

}  // namespace
}  // namespace tagflow::hosts
