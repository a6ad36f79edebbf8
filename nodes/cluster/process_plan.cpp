#include "nodes/cluster/process_plan.hpp"

#include <algorithm>
#include <map>
#include <string_view>

namespace tagflow::cluster {

std::vector<ProcessPlan> plan_processes(const ClusterConfig& config) {
  std::vector<ProcessPlan> plans;
  std::map<std::string, std::size_t> by_name;
  for (const NodeConfig& node : config.nodes) {
    const bool torch = node.kind->needs_torch;
    for (int i = 0; i < node.replicas; ++i) {
      const std::string replica = replica_name(node, i);
      const std::string name = node.process.empty() ? replica : node.process;
      auto [it, inserted] = by_name.emplace(name, plans.size());
      if (inserted) plans.push_back(ProcessPlan{name, node.host, {}, false});
      ProcessPlan& plan = plans[it->second];
      plan.replicas.push_back(replica);
      plan.needs_torch = plan.needs_torch || torch;
    }
  }
  std::map<std::string, int> dealt;  // host -> processes dealt so far
  for (ProcessPlan& plan : plans) {
    plan.node = dealt[plan.host]++ % node_count(config.hosts.at(plan.host));
  }
  return plans;
}

bool is_coordinator_node(const ClusterConfig& config, const std::string& host, int node) {
  return host == config.coordinator.host && node == 0;
}

bool runs_with_coordinator(const ClusterConfig& config, const ProcessPlan& process) {
  return is_coordinator_node(config, process.host, process.node);
}

std::string process_address(const ClusterConfig& config, const ProcessPlan& process) {
  const HostConfig& host = config.hosts.at(process.host);
  const auto node = static_cast<std::size_t>(process.node);
  return node < host.node_addresses.size() ? host.node_addresses[node] : host.address;
}

std::string replica_address(const ClusterConfig& config, const std::string& replica) {
  const std::vector<ProcessPlan> processes = plan_processes(config);
  if (const ProcessPlan* process = process_of_replica(processes, replica)) {
    return process_address(config, *process);
  }
  const NodeConfig* group = find_replica(config, replica).first;
  return group == nullptr ? std::string() : config.hosts.at(group->host).address;
}

const ProcessPlan* find_process(const std::vector<ProcessPlan>& plans, const std::string& name) {
  for (const ProcessPlan& plan : plans) {
    if (plan.name == name) return &plan;
  }
  return nullptr;
}

const ProcessPlan* process_of_replica(const std::vector<ProcessPlan>& plans,
                                      const std::string& replica) {
  for (const ProcessPlan& plan : plans) {
    if (std::find(plan.replicas.begin(), plan.replicas.end(), replica) != plan.replicas.end()) {
      return &plan;
    }
  }
  return nullptr;
}

std::pair<const NodeConfig*, int> find_replica(const ClusterConfig& config,
                                               const std::string& replica) {
  // A replica's name is its group's, alone or with "-INDEX" (replica_name()): read off the
  // name, not made for every replica of every group (a call per replica was quadratic).
  for (const NodeConfig& node : config.nodes) {
    if (replica.compare(0, node.name.size(), node.name) != 0) continue;
    if (node.replicas == 1) {
      if (replica.size() == node.name.size()) return {&node, 0};
      continue;
    }
    const std::string_view suffix = std::string_view(replica).substr(node.name.size());
    if (suffix.size() < 2 || suffix.size() > 5 || suffix[0] != '-' ||
        (suffix[1] == '0' && suffix.size() > 2)) {
      continue;
    }
    int index = 0;
    for (const char c : suffix.substr(1)) {
      if (c < '0' || c > '9') {
        index = -1;
        break;
      }
      index = index * 10 + (c - '0');
    }
    if (index >= 0 && index < node.replicas) return {&node, index};
  }
  return {nullptr, -1};
}

}  // namespace tagflow::cluster
