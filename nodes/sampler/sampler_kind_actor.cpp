// The sampler kind's CAF factory, its actor() (nodes/kind/node_kind.hpp), installed by
// install_actor_kinds() (nodes/kind/actor_registry.hpp). It lives apart from sampler_kind.cpp so
// that the kinds, and the cluster-file parser that reads them, build without CAF.
#include "nodes/kind/actor_setup.hpp"
#include "nodes/kind/node_kind.hpp"
#include "nodes/sampler/sampler_actor.hpp"

namespace tagflow::nodes {

namespace sampler_kind_actor_parts {

caf::actor spawn_actor(caf::actor_system& system, const ReplicaSpawnSetup& s) {
  const ReplicaConfig& r = s.config;
  SamplerActorOptions options{r.name, r.step_limit, s.report, s.metrics, s.recovery};
  return caf::actor_cast<caf::actor>(spawn_sampler_actor(system, *r.sampler, options));
}

}  // namespace sampler_kind_actor_parts

void install_sampler_actor(NodeKind& kind) { kind.actor = sampler_kind_actor_parts::spawn_actor; }

}  // namespace tagflow::nodes
