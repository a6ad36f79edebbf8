#include "nodes/kind/actor_registry.hpp"

#include <mutex>

#include "nodes/kind/registry.hpp"

// The torch-free kinds with a CAF factory, one line each: X(name) calls
// `void install_name_actor(NodeKind&)`, defined in nodes/name/name_kind_actor.cpp.
#define TAGFLOW_ACTOR_KINDS(X) \
  X(sampler)                   \
  X(replay)                    \
  X(multi_agent)               \
  X(evaluator)

namespace tagflow::nodes {

#define TAGFLOW_DECLARE_ACTOR_KIND(name) void install_##name##_actor(NodeKind& kind);
TAGFLOW_ACTOR_KINDS(TAGFLOW_DECLARE_ACTOR_KIND)
#undef TAGFLOW_DECLARE_ACTOR_KIND

void install_actor_kinds() {
  static std::once_flag installed;
  std::call_once(installed, [] {
#define TAGFLOW_INSTALL_ACTOR_KIND(name) install_##name##_actor(kind_to_complete(#name));
    TAGFLOW_ACTOR_KINDS(TAGFLOW_INSTALL_ACTOR_KIND)
#undef TAGFLOW_INSTALL_ACTOR_KIND
  });
}

}  // namespace tagflow::nodes
