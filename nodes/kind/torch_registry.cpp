#include "nodes/kind/torch_registry.hpp"

#include "nodes/kind/registry.hpp"

// The kinds with LibTorch factories, one line each: X(name) calls
// `void install_name_torch(NodeKind&)`, defined in nodes/name/name_kind_torch.cpp.
#define TAGFLOW_TORCH_KINDS(X) \
  X(learner)                   \
  X(inference)

namespace tagflow::nodes {

#define TAGFLOW_DECLARE_TORCH_KIND(name) void install_##name##_torch(NodeKind& kind);
TAGFLOW_TORCH_KINDS(TAGFLOW_DECLARE_TORCH_KIND)
#undef TAGFLOW_DECLARE_TORCH_KIND

void install_torch_kinds() {
#define TAGFLOW_INSTALL_TORCH_KIND(name) install_##name##_torch(kind_to_complete(#name));
  TAGFLOW_TORCH_KINDS(TAGFLOW_INSTALL_TORCH_KIND)
#undef TAGFLOW_INSTALL_TORCH_KIND
}

}  // namespace tagflow::nodes
