#include "nodes/cluster/federation_plan.hpp"

#include <filesystem>
#include <map>

#include "nodes/cluster/link_plan.hpp"
#include "transport/tcp_endpoint.hpp"

namespace tagflow::cluster {
namespace {

using coordinator::ConnectionDelay;

/// The smaller of two delays: no delay (same tag) < after 0 (next microstep) < after d.
ConnectionDelay min_delay(const ConnectionDelay& a, const ConnectionDelay& b) {
  if (!a.has_value() || !b.has_value()) return std::nullopt;
  return std::min(*a, *b);
}

std::vector<std::string> replicas_of(const NodeConfig& node) {
  std::vector<std::string> names;
  for (int i = 0; i < node.replicas; ++i) names.push_back(replica_name(node, i));
  return names;
}

}  // namespace

coordinator::FederationSpec federation_spec(const ClusterConfig& config) {
  coordinator::FederationSpec spec;
  spec.address = transport::tcp_endpoint(config.hosts.at(config.coordinator.host).address,
                                         config.coordinator.port);
  spec.heartbeat_timeout = config.coordinator.heartbeat_timeout;
  spec.join_timeout = config.coordinator.join_timeout;
  spec.file_digest = config.file_digest;
  if (config.security.curve) spec.keys_dir = resolved_keys_dir(config);

  // upstream federate -> downstream federate -> minimum delay, from the link plan (the same
  // replica pairs every placement connects).
  std::map<std::string, std::map<std::string, ConnectionDelay>> links;
  for (const Link& l : plan_links(config).links) {
    if (l.from.replica == l.to.replica) continue;
    const ConnectionDelay delay =
        l.after ? ConnectionDelay(l.after->count()) : ConnectionDelay(std::nullopt);
    auto& link = links[l.from.replica];
    const auto existing = link.find(l.to.replica);
    link[l.to.replica] = existing == link.end() ? delay : min_delay(existing->second, delay);
  }
  for (const NodeConfig& node : config.nodes) {
    for (const std::string& id : replicas_of(node)) {
      coordinator::FederateSpec federate;
      federate.id = id;
      for (const auto& [to, delay] : links[id]) federate.downstreams.push_back(to);
      spec.federates.push_back(std::move(federate));
    }
  }
  for (coordinator::FederateSpec& federate : spec.federates) {
    for (const auto& [from, downstreams] : links) {
      const auto link = downstreams.find(federate.id);
      if (link != downstreams.end()) federate.upstreams.push_back({from, link->second});
    }
  }
  spec.validate();
  return spec;
}

}  // namespace tagflow::cluster
