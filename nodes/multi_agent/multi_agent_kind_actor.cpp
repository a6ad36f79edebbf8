// The multi-agent env kind's CAF factory, its actor() (nodes/kind/node_kind.hpp), installed by
// install_actor_kinds() (nodes/kind/actor_registry.hpp). It lives apart from multi_agent_kind.cpp
// so that the kinds, and the cluster-file parser that reads them, build without CAF.
#include "nodes/kind/actor_setup.hpp"
#include "nodes/kind/node_kind.hpp"
#include "nodes/multi_agent/multi_agent_actor.hpp"

namespace tagflow::nodes {

namespace multi_agent_kind_actor_parts {

caf::actor spawn_actor(caf::actor_system& system, const ReplicaSpawnSetup& s) {
  const ReplicaConfig& r = s.config;
  return caf::actor_cast<caf::actor>(
      spawn_multi_agent_actor(system, *r.multi_agent,
                              {r.name, r.step_limit, r.transition_links, r.observation_links,
                               r.replica_policies, s.report, s.metrics, s.recovery}));
}

}  // namespace multi_agent_kind_actor_parts

void install_multi_agent_actor(NodeKind& kind) {
  kind.actor = multi_agent_kind_actor_parts::spawn_actor;
}

}  // namespace tagflow::nodes
