// The LibTorch factories of the node kinds that need it (learner, inference): their reactor()
// and actor() live in the torch library, beside the kinds' own folders
// (nodes/<kind>/<kind>_kind_torch.cpp). A binary that links LibTorch calls install_torch_kinds()
// once at start, before any replica is built; torch-free binaries never do, and building such a
// replica there is an error naming tagflow-torch.
#pragma once

namespace tagflow::nodes {

/// Fills in the LibTorch factories of the registry's kinds. Idempotent; call before threads start.
void install_torch_kinds();

}  // namespace tagflow::nodes
