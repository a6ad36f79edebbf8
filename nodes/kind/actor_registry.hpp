// The CAF factories of the node kinds (each kind's actor(), nodes/kind/node_kind.hpp): they live
// beside the kinds' own folders (nodes/<kind>/<kind>_kind_actor.cpp, and for the LibTorch kinds
// <kind>_kind_torch.cpp) in libraries of their own, so that the registry and the cluster-file
// parser build without CAF (the fuzz targets link them without it). The actor host calls
// install_actor_kinds() before it spawns a replica (hosts/actor/replica_spawner.hpp); nothing
// else reads a kind's actor().
#pragma once

namespace tagflow::nodes {

/// Fills in the torch-free kinds' actor() in the registry. Idempotent and thread-safe: the first
/// call installs, every call returns after that.
void install_actor_kinds();

}  // namespace tagflow::nodes
