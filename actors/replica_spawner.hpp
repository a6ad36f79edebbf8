// Spawning one node replica of a cluster file as a CAF actor, the same way in every actor-mode
// placement (the in-process actor cluster and the actor process host).
//
// spawn_replica() builds the replica's server config from the file exactly as the reactor
// placements do (params, nodes::replica_seed, nodes::ClusterFacts, the samplers' share of
// stop.env_steps) and spawns its actor (nodes/<kind>/<kind>_actor.hpp). Samplers and replays
// are built here; learners and inference servers need LibTorch, so the caller passes a
// TorchReplicaSpawner (actors/torch_replica_spawner.hpp) — without one such a replica is an
// error (std::invalid_argument), and a torch-free binary never links LibTorch.
// Errors: nodes::ParamError for a bad param, std::invalid_argument for an unknown env or kind.
// Thread-safety: call from the host's thread; the returned handle is thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include "actors/replica_report.hpp"
#include "nodes/cluster/cluster_config.hpp"
#include "nodes/node_metrics.hpp"
#include "nodes/replica_binding.hpp"

namespace tagflow::actors {

struct ReplicaSpawnSetup {
  const cluster::ClusterConfig* config = nullptr;
  const nodes::ClusterFacts* facts = nullptr;
  const cluster::NodeConfig* group = nullptr;
  int index = 0;
  std::string name;
  std::shared_ptr<ReplicaReport> report;
  nodes::NodeMetrics* metrics = nullptr;  // optional; must outlive the actor
};

using TorchReplicaSpawner = std::function<caf::actor(caf::actor_system&, const ReplicaSpawnSetup&)>;

[[nodiscard]] caf::actor spawn_replica(caf::actor_system& system, const ReplicaSpawnSetup& setup,
                                       const TorchReplicaSpawner& torch);

/// The unit of a kind's count: env_steps, inserts, updates, rows.
[[nodiscard]] const char* count_unit(cluster::NodeKind kind);

}  // namespace tagflow::actors
