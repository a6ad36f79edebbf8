// The actor binding of InferenceServer (actor mode, actors/README.md): the same LibTorch policy
// as InferenceReactor, driven by messages. Links LibTorch (library tagflow_nodes_actors_torch).
//
// Requests: a sampler's Offer{"observations"} is answered with one credit, and the credit comes
// back with each answer, so every sampler has at most one request here (the mailbox holds at
// most one request per sampler). Requests are collected until every known sampler has asked,
// `max_batch` rows are waiting or `max_wait` has passed since the first one (a flush message to
// itself), then served by one InferenceServer::serve() call; each answer (ActionBatchMessage)
// goes to the sampler that asked.
// Weights: the learner's Offer{"weights"} gets one credit, one more after each load, so at most
// one weights message waits here (the learner keeps only the newest meanwhile).
// StopRun: forwarded once to every peer, then quit. Samplers may leave; a learner that goes
// down ends the run. Results: ReplicaReport (count = rows served, weights version, peers).
#pragma once

#include <memory>
#include <string>

#include <caf/actor_system.hpp>

#include "nodes/actor_checkpoint.hpp"
#include "nodes/actor_interfaces.hpp"
#include "nodes/inference/inference_server.hpp"
#include "nodes/node_metrics.hpp"
#include "nodes/replica_report.hpp"

namespace tagflow::nodes {

struct InferenceActorOptions {
  std::string name;
  std::shared_ptr<nodes::ReplicaReport> report;
  NodeMetrics* metrics = nullptr;  // optional: the same families as reactor mode
  ActorRecovery recovery{};        // checkpoints and lost peers (nodes/actor_checkpoint.hpp)
};

[[nodiscard]] nodes::InferenceActor spawn_inference_actor(caf::actor_system& system,
                                                          const InferenceConfig& config,
                                                          InferenceActorOptions options);

}  // namespace tagflow::nodes
