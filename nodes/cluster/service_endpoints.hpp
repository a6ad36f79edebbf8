// Where a cluster's inference service listens, as the cluster file places it: one gateway per
// replica of a group with `gateway_port` that hosts a policy (nodes/gateway/PROTOCOL.md §1),
// replica i on port gateway_port + i at `gateway_bind` (default 127.0.0.1) on its group's host.
// What a client connects to: the bind address when it is one address; the host's address from
// `hosts` when the gateway listens on every address (`*` or `0.0.0.0` for IPv4, `::` for both);
// nothing the file can say for an interface name, a Slurm or Kubernetes host before its
// allocation, or an IPv4 wildcard on a host known by an IPv6 address.
// Pure functions over a validated ClusterConfig; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nodes/cluster/cluster_config.hpp"

namespace tagflow::cluster {

/// The address a gateway binds when the file gives no `gateway_bind`.
inline constexpr const char* kDefaultGatewayBind = "127.0.0.1";

struct GatewayEndpoint {
  std::string replica;       // inference-0, ...
  std::string host;          // its host in the file
  std::string bind;          // gateway_bind
  std::string bind_address;  // the address it binds: 0.0.0.0 for `*`; "" for an interface name
  std::uint16_t port = 0;
  std::string connect;  // tcp://ADDRESS:PORT for clients ([ADDRESS] for IPv6); "" when unknown
};

/// Every gateway of the file, in file order.
[[nodiscard]] std::vector<GatewayEndpoint> gateway_endpoints(const ClusterConfig& config);

/// "inference-0 tcp://127.0.0.1:7830, inference-1 tcp://127.0.0.1:7831": each gateway of
/// `endpoints` on one of `hosts` (all when `hosts` is empty) by where clients connect, or by its
/// host, port and bind when that is unknown; "" when there is none.
[[nodiscard]] std::string describe_gateways(const std::vector<GatewayEndpoint>& endpoints,
                                            const std::vector<std::string>& hosts = {});

}  // namespace tagflow::cluster
