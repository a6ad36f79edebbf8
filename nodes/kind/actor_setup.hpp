// ReplicaSpawnSetup: what a kind's actor() (nodes/kind/node_kind.hpp) spawns one replica's CAF
// actor from, the same in every actor-mode placement (the in-process actor cluster and the actor
// process host).
#pragma once

#include <memory>

#include "nodes/actor_checkpoint.hpp"
#include "nodes/kind/replica_config.hpp"
#include "nodes/node_metrics.hpp"
#include "nodes/replica_report.hpp"

namespace tagflow::nodes {

struct ReplicaSpawnSetup {
  ReplicaConfig config;
  std::shared_ptr<ReplicaReport> report;
  NodeMetrics* metrics = nullptr;  // optional; must outlive the actor
  /// Checkpoints, a state to start from, lost peers (nodes/actor_checkpoint.hpp).
  ActorRecovery recovery{};
};

}  // namespace tagflow::nodes

namespace tagflow::hosts {
using nodes::ReplicaSpawnSetup;
}  // namespace tagflow::hosts
