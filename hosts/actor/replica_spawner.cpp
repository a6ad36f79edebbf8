#include "hosts/actor/replica_spawner.hpp"

#include <stdexcept>

#include "nodes/kind/actor_registry.hpp"
#include "nodes/kind/node_kind.hpp"

namespace tagflow::hosts {

caf::actor spawn_replica(caf::actor_system& system, const ReplicaSpawnSetup& s) {
  nodes::install_actor_kinds();  // the first spawn of the process fills them in
  const nodes::NodeKind& kind = *s.config.kind;
  if (kind.actor == nullptr) {
    throw std::invalid_argument(kind.name + " replica " + s.config.name +
                                " needs LibTorch (run it from tagflow-torch)");
  }
  return kind.actor(system, s);
}

}  // namespace tagflow::hosts
