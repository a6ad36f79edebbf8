// The TorchReplicaSpawner (hosts/actor/replica_spawner.hpp) for learners and inference servers:
// their actors (nodes/learner/learner_actor.hpp, nodes/inference/inference_actor.hpp) link
// LibTorch, so only tagflow-torch and the torch test binary use this (library
// tagflow_hosts_actor_torch). Configurations come from the replica's ReplicaConfig through
// hosts/torch_replica_config.hpp, exactly as the reactor placements build them.
#pragma once

#include "hosts/actor/replica_spawner.hpp"

namespace tagflow::hosts {

[[nodiscard]] TorchReplicaSpawner torch_replica_spawner();

}  // namespace tagflow::hosts
