// Tests of nodes/cluster/service_endpoints.hpp: where a cluster file's inference service listens
// and what its clients connect to, as `tagflow up` prints it.
#include "nodes/cluster/service_endpoints.hpp"

#include <gtest/gtest.h>

#include <string>

#include "nodes/cluster/policy_config.hpp"

namespace tagflow::cluster {
namespace {

/// A TrafficJunction4-v1 cluster with two policies served by `servers` inference replicas on host
/// `far` (address `address`) with `params` (one replica is named `inference`, two `inference-0`
/// and `inference-1`).
ClusterConfig served(const std::string& params, int servers = 2,
                     const std::string& address = "10.0.0.2") {
  const std::string text =
      "cluster: m\nmode: reactor\nseed: 1\n"
      "hosts:\n  near: {address: 127.0.0.1}\n  far: {address: \"" +
      address +
      "\"}\n"
      "policies:\n  a: {}\n  b: {}\nagents: {0: a, 1: a, \"*\": b}\n"
      "nodes:\n"
      "  junction: {kind: multi_agent, host: near, data_port: 7000, params: {env: "
      "TrafficJunction4-v1}}\n"
      "  inference: {kind: inference, host: far, replicas: " +
      std::to_string(servers) + ", data_port: 7100, params: {" + params +
      "}}\n"
      "connections:\n"
      "  - {from: junction.observations, to: inference.observations}\n"
      "  - {from: inference.actions, to: junction.actions, after: 0}\n"
      "stop: {env_steps: 100}\n";
  return parse_cluster_config(text, "m.yaml");
}

TEST(ServiceEndpoints, EachReplicaWithAPolicyListensOnItsPortAtTheBindAddress) {
  const ClusterConfig config = served("gateway_port: 7830");
  const std::vector<GatewayEndpoint> endpoints = gateway_endpoints(config);
  ASSERT_EQ(endpoints.size(), 2U);
  EXPECT_EQ(endpoints[0].replica, "inference-0");
  EXPECT_EQ(endpoints[0].host, "far");
  EXPECT_EQ(endpoints[0].bind, "127.0.0.1");
  EXPECT_EQ(endpoints[1].port, 7831);
  // The default bind answers only on the machine itself.
  EXPECT_EQ(describe_gateways(endpoints),
            "inference-0 tcp://127.0.0.1:7830, inference-1 tcp://127.0.0.1:7831");
  // Only the gateways of the hosts a launcher plays.
  EXPECT_EQ(describe_gateways(endpoints, {"near"}), "");
  EXPECT_EQ(describe_gateways(endpoints, {"far"}), describe_gateways(endpoints));
  // No gateway_port, no service.
  EXPECT_TRUE(gateway_endpoints(served("max_batch: 8")).empty());
}

TEST(ServiceEndpoints, OnEveryAddressClientsUseTheHostsAddress) {
  EXPECT_EQ(describe_gateways(gateway_endpoints(served("gateway_port: 7830, gateway_bind: \"*\""))),
            "inference-0 tcp://10.0.0.2:7830, inference-1 tcp://10.0.0.2:7831");
  EXPECT_EQ(describe_gateways(gateway_endpoints(
                served("gateway_port: 7830, gateway_bind: \"::\"", 1, "fd00::b"))),
            "inference tcp://[fd00::b]:7830");
  EXPECT_EQ(
      describe_gateways(gateway_endpoints(served("gateway_port: 7830, gateway_bind: \"::1\"", 1))),
      "inference tcp://[::1]:7830");
  // What the file cannot say: an interface's address, an IPv4 wildcard on a host known by IPv6.
  EXPECT_EQ(
      describe_gateways(gateway_endpoints(served("gateway_port: 7830, gateway_bind: eth0", 1))),
      "inference on host far port 7830 (gateway_bind eth0)");
  const auto v4_on_v6 =
      gateway_endpoints(served("gateway_port: 7830, gateway_bind: \"*\"", 1, "fd00::b"));
  ASSERT_EQ(v4_on_v6.size(), 1U);
  EXPECT_EQ(v4_on_v6[0].connect, "");
  // What the launcher checks before start: the address each binds.
  EXPECT_EQ(v4_on_v6[0].bind_address, "0.0.0.0");
  EXPECT_EQ(gateway_endpoints(served("gateway_port: 7830, gateway_bind: eth0", 1))[0].bind_address,
            "");
  EXPECT_EQ(gateway_endpoints(served("gateway_port: 7830", 1))[0].bind_address, "127.0.0.1");
}

}  // namespace
}  // namespace tagflow::cluster
