// Linked into the torch test executable: the LibTorch kinds (learner, inference) are installed
// before any test builds a replica, as tagflow-torch does at start (nodes/kind/torch_registry.hpp).
#include "nodes/kind/torch_registry.hpp"

namespace {

const bool kInstalled = [] {
  tagflow::nodes::install_torch_kinds();
  return true;
}();

}  // namespace
