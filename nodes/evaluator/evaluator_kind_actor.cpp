// The evaluator kind's CAF factory, its actor() (nodes/kind/node_kind.hpp), installed by
// install_actor_kinds() (nodes/kind/actor_registry.hpp). It lives apart from evaluator_kind.cpp so
// that the kinds, and the cluster-file parser that reads them, build without CAF.
#include "nodes/evaluator/evaluator_actor.hpp"
#include "nodes/kind/actor_setup.hpp"
#include "nodes/kind/node_kind.hpp"

namespace tagflow::nodes {

namespace evaluator_kind_actor_parts {

caf::actor spawn_actor(caf::actor_system& system, const ReplicaSpawnSetup& s) {
  return caf::actor_cast<caf::actor>(spawn_evaluator_actor(
      system, EvaluatorSettings::of(s.config), s.config.name, s.report, s.metrics, s.recovery));
}

}  // namespace evaluator_kind_actor_parts

void install_evaluator_actor(NodeKind& kind) {
  kind.actor = evaluator_kind_actor_parts::spawn_actor;
}

}  // namespace tagflow::nodes
