#include "nodes/cluster/scrape_targets.hpp"

#include "nodes/cluster/process_plan.hpp"

namespace tagflow::cluster {
namespace {

std::string host_address(const cluster::ClusterConfig& config, const std::string& host) {
  const auto it = config.hosts.find(host);
  if (it != config.hosts.end() && !it->second.address.empty()) return it->second.address;
  if (host.empty() && config.hosts.count(config.first_host) != 0) {
    return config.hosts.at(config.first_host).address;
  }
  return host.empty() ? std::string("127.0.0.1") : host;
}

/// Where an endpoint of a process at `address` answers. An endpoint bound to one address
/// (`monitoring.bind: 127.0.0.1`, the default, or `::1`) answers only there, so on a file whose
/// processes all run on one machine that is the target; an endpoint bound to every address
/// (0.0.0.0 or ::) answers at its host's address. Across machines, a loopback bind answers no
/// other machine, and each host has its own: the host's address stays (a target that is down,
/// which `tagflow monitoring prometheus-config` notes).
std::string endpoint_host(const cluster::ClusterConfig& config, const std::string& address) {
  const std::string& bind = config.monitoring.bind;
  return binds_every_address(bind) || !on_one_machine(config) ? address : bind;
}

}  // namespace

bool binds_every_address(const std::string& bind) { return bind == "0.0.0.0" || bind == "::"; }

bool on_one_machine(const cluster::ClusterConfig& config) {
  const auto loopback = [](const std::string& address) {
    return address == "::1" || address == "localhost" || address.rfind("127.", 0) == 0;
  };
  const std::string* first = nullptr;
  bool all_loopback = true;
  bool one_address = true;
  for (const auto& [name, host] : config.hosts) {
    // A Slurm or Kubernetes host's nodes are learned in the allocation.
    if (host.slurm || host.kubernetes || host.address.empty()) return false;
    one_address = one_address && (first == nullptr || host.address == *first);
    all_loopback = all_loopback && loopback(host.address);
    first = &host.address;
  }
  return one_address || all_loopback;
}

std::string ScrapeTarget::address() const {
  const bool ipv6 = host.find(':') != std::string::npos;
  return (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

std::vector<ScrapeTarget> scrape_targets(const cluster::ClusterConfig& config,
                                         std::optional<cluster::Mode> mode) {
  std::vector<ScrapeTarget> targets;
  // Actor mode runs no coordinator: its port would only ever be a target that is down.
  if (mode.value_or(config.mode) == cluster::Mode::reactor &&
      config.coordinator.metrics_port != 0) {
    targets.push_back({"coordinator", "coordinator", "coordinator",
                       endpoint_host(config, host_address(config, config.coordinator.host)),
                       config.coordinator.metrics_port});
  }
  for (const cluster::NodeConfig& node : config.nodes) {
    if (node.metrics_port == 0) continue;
    for (int i = 0; i < node.replicas; ++i) {
      const std::string replica = replica_name(node, i);
      const std::string at = replica_address(config, replica);
      targets.push_back({replica, node.name, node.kind->name,
                         endpoint_host(config, at.empty() ? host_address(config, node.host) : at),
                         static_cast<std::uint16_t>(node.metrics_port + i)});
    }
  }
  return targets;
}

std::optional<ScrapeTarget> find_scrape_target(const cluster::ClusterConfig& config,
                                               const std::string& process) {
  for (ScrapeTarget& target : scrape_targets(config)) {
    if (target.process == process) return target;
  }
  return std::nullopt;
}

std::optional<ScrapeTarget> transient_scrape_target(const cluster::ClusterConfig& config,
                                                    const std::string& replica) {
  const auto dash = replica.rfind('-');
  if (dash == std::string::npos || dash + 1 == replica.size()) return std::nullopt;
  const std::string digits = replica.substr(dash + 1);
  if (digits.size() > 5 || digits.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  const cluster::NodeConfig* group = config.find_node(replica.substr(0, dash));
  if (group == nullptr || !group->kind->transient || group->metrics_port == 0) {
    return std::nullopt;
  }
  const long port = group->metrics_port + std::stol(digits);
  if (port > 65535) return std::nullopt;
  return ScrapeTarget{replica, group->name, group->kind->name,
                      endpoint_host(config, host_address(config, group->host)),
                      static_cast<std::uint16_t>(port)};
}

}  // namespace tagflow::cluster
