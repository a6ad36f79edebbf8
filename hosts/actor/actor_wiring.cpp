#include "hosts/actor/actor_wiring.hpp"

#include "nodes/kind/replica_config.hpp"

namespace tagflow::hosts {

const nodes::NodeKind& replica_kind(const cluster::ClusterConfig& config, const std::string& name) {
  return *locate_replica(config, name).first->kind;
}

std::vector<WiringStep> plan_wiring(const cluster::ClusterConfig& config,
                                    const cluster::LinkPlan& links) {
  std::vector<WiringStep> steps;
  for (const cluster::Link& link : links.links) {
    if (replica_kind(config, link.to.replica).transient) {
      if (link.to.port == "actions") continue;  // replies to the sampler's observations
      steps.push_back({link.to.replica, link.to.port, link.from.replica});
    } else {
      steps.push_back({link.from.replica, link.from.port, link.to.replica});
    }
  }
  return steps;
}

}  // namespace tagflow::hosts
