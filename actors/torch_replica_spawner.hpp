// The TorchReplicaSpawner (actors/replica_spawner.hpp) for learners and inference servers:
// their actors (nodes/learner/learner_actor.hpp, nodes/inference/inference_actor.hpp) link
// LibTorch, so only tagflow-torch and the torch test binary use this (library
// tagflow_actors_torch). Configs as the reactor placements build them: the learner's network from
// the env, its evaluation episodes seeded with seed + 424242 when the file has
// stop.target_return; inference inherits the learner's `hidden`.
#pragma once

#include "actors/replica_spawner.hpp"

namespace tagflow::actors {

[[nodiscard]] TorchReplicaSpawner torch_replica_spawner();

/// The seed of the learner's evaluation episodes (the same in every placement and mode).
[[nodiscard]] std::uint64_t evaluation_seed(const cluster::ClusterConfig& config);

}  // namespace tagflow::actors
