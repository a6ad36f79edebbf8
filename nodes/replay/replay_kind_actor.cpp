// The replay kind's CAF factory, its actor() (nodes/kind/node_kind.hpp), installed by
// install_actor_kinds() (nodes/kind/actor_registry.hpp). It lives apart from replay_kind.cpp so
// that the kinds, and the cluster-file parser that reads them, build without CAF.
#include "nodes/kind/actor_setup.hpp"
#include "nodes/kind/node_kind.hpp"
#include "nodes/replay/replay_actor.hpp"

namespace tagflow::nodes {

namespace replay_kind_actor_parts {

caf::actor spawn_actor(caf::actor_system& system, const ReplicaSpawnSetup& s) {
  ReplayActorOptions options{s.config.name, 0, s.report, s.metrics, s.recovery};
  return caf::actor_cast<caf::actor>(spawn_replay_actor(system, *s.config.replay, options));
}

}  // namespace replay_kind_actor_parts

void install_replay_actor(NodeKind& kind) { kind.actor = replay_kind_actor_parts::spawn_actor; }

}  // namespace tagflow::nodes
