#include "hosts/actor/actor_wiring.hpp"

#include <stdexcept>

#include "nodes/cluster/process_plan.hpp"

namespace tagflow::hosts {

cluster::NodeKind replica_kind(const cluster::ClusterConfig& config, const std::string& name) {
  const auto [group, index] = cluster::find_replica(config, name);
  if (group != nullptr) return group->kind;
  const auto dash = name.rfind('-');
  if (dash != std::string::npos) {
    if (const cluster::NodeConfig* g = config.find_node(name.substr(0, dash))) return g->kind;
  }
  throw std::invalid_argument("no replica '" + name + "' in " + config.file);
}

std::vector<WiringStep> plan_wiring(const cluster::ClusterConfig& config,
                                    const cluster::LinkPlan& links) {
  std::vector<WiringStep> steps;
  for (const cluster::Link& link : links.links) {
    if (replica_kind(config, link.to.replica) == cluster::NodeKind::sampler) {
      if (link.to.port == "actions") continue;  // replies to the sampler's observations
      steps.push_back({link.to.replica, link.to.port, link.from.replica});
    } else {
      steps.push_back({link.from.replica, link.from.port, link.to.replica});
    }
  }
  return steps;
}

}  // namespace tagflow::hosts
