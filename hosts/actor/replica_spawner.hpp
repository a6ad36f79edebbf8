// Spawning one node replica of a cluster file as a CAF actor, the same way in every actor-mode
// placement (the in-process actor cluster and the actor process host).
//
// spawn_replica() asks the replica's kind (nodes/kind/node_kind.hpp) for its actor, built from
// its ReplicaConfig (nodes/kind/replica_config.hpp) — the configuration the reactor placements
// build their reactors from. Kinds that need LibTorch have their actor() only in torch binaries
// (nodes/kind/torch_registry.hpp); in a torch-free binary such a replica is an error
// (std::invalid_argument), and a torch-free binary never links LibTorch.
// Errors: nodes::ParamError for a bad param, std::invalid_argument for an unknown env or a kind
// without an actor here.
// Thread-safety: call from the host's thread; the returned handle is thread-safe.
#pragma once

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include "nodes/kind/actor_setup.hpp"

namespace tagflow::hosts {

[[nodiscard]] caf::actor spawn_replica(caf::actor_system& system, const ReplicaSpawnSetup& setup);

}  // namespace tagflow::hosts
