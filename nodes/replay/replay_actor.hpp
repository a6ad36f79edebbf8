// The actor binding of ReplayServer (actor mode, actors/README.md): the same replay logic as
// ReplayReactor, driven by messages.
//
// Flow control, both directions (actors/credit_ledger.hpp):
//   - Upstream: a sampler's Offer{"transitions"} is answered with a window of credits; after
//     each insert the sampler gets one credit back — unless the minibatches owed to the learner
//     (the rate limiter's debt: samples_per_insert × inserts / batch_size, not yet sent) exceed
//     `max_owed_batches`; then the credit is held back until the learner has taken enough. So
//     samplers wait for a slow learner (as Reverb's rate limiter blocks inserts) and neither
//     this actor's mailbox nor its queue of owed batches grows without bound.
//   - Downstream: minibatches go to the learner only against its credits (one per batch).
//   - Priorities: the learner's Offer{"priorities"} gets a window; one credit back per update.
// (connect, "batches", learner) from the host: offer batches to the learner.
// StopRun: forwarded once to every peer, then quit. A sampler that leaves or goes down is
// forgotten; a learner that goes down ends the run. Results go to the shared ReplicaReport
// (count = inserted transitions, peers = samplers feeding it).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include <caf/actor_system.hpp>

#include "nodes/actor_checkpoint.hpp"
#include "nodes/actor_interfaces.hpp"
#include "nodes/node_metrics.hpp"
#include "nodes/replay/replay_server.hpp"
#include "nodes/replica_report.hpp"

namespace tagflow::nodes {

struct ReplayActorOptions {
  std::string name;
  std::size_t max_owed_batches = 0;  // 0: 2 × max_batches_per_call
  std::shared_ptr<nodes::ReplicaReport> report;
  NodeMetrics* metrics = nullptr;  // optional: the same families as reactor mode
  ActorRecovery recovery{};        // checkpoints and lost peers (nodes/actor_checkpoint.hpp)
};

[[nodiscard]] nodes::ReplayActor spawn_replay_actor(caf::actor_system& system,
                                                    const ReplayConfig& config,
                                                    ReplayActorOptions options);

}  // namespace tagflow::nodes
