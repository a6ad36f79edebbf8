#include "nodes/cluster/service_endpoints.hpp"

#include <algorithm>

#include "common/bind_address.hpp"
#include "nodes/cluster/policy_config.hpp"
#include "nodes/cluster/yaml_reader.hpp"
#include "transport/tcp_endpoint.hpp"

namespace tagflow::cluster {
namespace {

/// Where a client reaches a gateway listening on `address` (zmq_bind_listen_address(),
/// common/bind_address.hpp) at `port` on `host`; "" when the file cannot say.
std::string client_endpoint(const std::string& address, const HostConfig* host,
                            std::uint16_t port) {
  const bool ipv4_wildcard = address == "0.0.0.0";
  if (address.empty()) return "";
  if (!ipv4_wildcard && address != "::") return transport::tcp_endpoint(address, port);
  if (host == nullptr || host->address.empty()) return "";
  if (ipv4_wildcard && is_ipv6_address(host->address)) return "";
  return transport::tcp_endpoint(host->address, port);
}

}  // namespace

std::vector<GatewayEndpoint> gateway_endpoints(const ClusterConfig& config) {
  std::vector<GatewayEndpoint> endpoints;
  for (const NodeConfig& node : config.nodes) {
    const auto port_param = node.params.find("gateway_port");
    if (!node.kind->hosts_policies || port_param == node.params.end()) continue;
    bool out_of_range = false;
    const std::optional<long> first = parse_yaml_integer(port_param->second, out_of_range);
    if (!first) continue;  // refused where the file is loaded
    const auto bind_param = node.params.find("gateway_bind");
    const std::string bind =
        bind_param == node.params.end() ? kDefaultGatewayBind : bind_param->second;
    const auto host = config.hosts.find(node.host);
    for (int i = 0; i < node.replicas; ++i) {
      if (hosted_policies(config, node, i).empty()) continue;  // no policy, no gateway
      GatewayEndpoint e;
      e.replica = replica_name(node, i);
      e.host = node.host;
      e.bind = bind;
      e.bind_address = zmq_bind_listen_address(bind);
      e.port = static_cast<std::uint16_t>(*first + i);
      e.connect = client_endpoint(e.bind_address,
                                  host == config.hosts.end() ? nullptr : &host->second, e.port);
      endpoints.push_back(std::move(e));
    }
  }
  return endpoints;
}

std::string describe_gateways(const std::vector<GatewayEndpoint>& endpoints,
                              const std::vector<std::string>& hosts) {
  std::string text;
  for (const GatewayEndpoint& e : endpoints) {
    if (!hosts.empty() && std::find(hosts.begin(), hosts.end(), e.host) == hosts.end()) continue;
    text += text.empty() ? "" : ", ";
    text += e.replica + " " +
            (e.connect.empty() ? "on host " + e.host + " port " + std::to_string(e.port) +
                                     " (gateway_bind " + e.bind + ")"
                               : e.connect);
  }
  return text;
}

}  // namespace tagflow::cluster
