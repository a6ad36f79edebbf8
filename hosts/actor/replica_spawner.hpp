// Spawning one node replica of a cluster file as a CAF actor, the same way in every actor-mode
// placement (the in-process actor cluster and the actor process host).
//
// spawn_replica() spawns the actor (nodes/<kind>/<kind>_actor.hpp) of a replica from its
// ReplicaConfig (hosts/replica_config.hpp) — the configuration the reactor placements build
// their reactors from. Samplers and replays
// are built here; learners and inference servers need LibTorch, so the caller passes a
// TorchReplicaSpawner (hosts/actor/torch_replica_spawner.hpp) — without one such a replica is an
// error (std::invalid_argument), and a torch-free binary never links LibTorch.
// Errors: nodes::ParamError for a bad param, std::invalid_argument for an unknown env or kind.
// Thread-safety: call from the host's thread; the returned handle is thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include "hosts/replica_config.hpp"
#include "nodes/actor_checkpoint.hpp"
#include "nodes/cluster/cluster_config.hpp"
#include "nodes/node_metrics.hpp"
#include "nodes/replica_report.hpp"

namespace tagflow::hosts {

struct ReplicaSpawnSetup {
  ReplicaConfig config;
  std::shared_ptr<nodes::ReplicaReport> report;
  nodes::NodeMetrics* metrics = nullptr;  // optional; must outlive the actor
  /// Checkpoints, a state to start from, lost peers (sampler, replay, learner and inference
  /// actors; nodes/actor_checkpoint.hpp).
  nodes::ActorRecovery recovery{};
};

using TorchReplicaSpawner = std::function<caf::actor(caf::actor_system&, const ReplicaSpawnSetup&)>;

[[nodiscard]] caf::actor spawn_replica(caf::actor_system& system, const ReplicaSpawnSetup& setup,
                                       const TorchReplicaSpawner& torch);

/// The unit of a kind's count: env_steps, inserts, updates, rows.
[[nodiscard]] const char* count_unit(cluster::NodeKind kind);

}  // namespace tagflow::hosts
