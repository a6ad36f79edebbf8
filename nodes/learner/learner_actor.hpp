// The actor binding of LearnerServer (actor mode, actors/README.md): the same DQN logic as
// LearnerReactor, driven by messages. Links LibTorch (library tagflow_nodes_actors_torch).
//
// Flow control (actors/credit_ledger.hpp):
//   - batches: replay's Offer{"batches"} is answered with a window of credits, one more after
//     each update, so replay never has more than a window of minibatches queued here.
//   - priorities: sent to replay against its credits; while it has none they are merged into
//     one pending update, sent when credit arrives.
//   - weights: each downstream (inference via the host's connect, samplers that subscribe with
//     a Credit) holds at most one credit; without credit it is marked and gets the newest weights
//     when its credit comes back (latest value wins, nothing queues). A new downstream gets the
//     current weights at once.
// With `target_return`, every eval_every updates the Evaluator plays its greedy episodes; the
// evaluation that reaches the target stops the run (StopRun "target_return" to every peer).
// StopRun from a peer: forwarded once, then quit. A sampler that leaves is forgotten; a replay
// that goes down ends the run. Results: ReplicaReport (count = updates, evaluations, final
// weights, target_reached).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <caf/actor_system.hpp>

#include "nodes/actor_checkpoint.hpp"
#include "nodes/actor_interfaces.hpp"
#include "nodes/learner/evaluator.hpp"
#include "nodes/learner/learner_server.hpp"
#include "nodes/node_metrics.hpp"
#include "nodes/replica_report.hpp"

namespace tagflow::nodes {

struct LearnerActorOptions {
  std::string name;
  std::optional<double> target_return;
  std::shared_ptr<Evaluator> evaluator;  // required with target_return
  std::shared_ptr<nodes::ReplicaReport> report;
  NodeMetrics* metrics = nullptr;  // optional: the same families as reactor mode
  std::string policy_file;   // a multi-agent file's learner: export its policy here at the end
  ActorRecovery recovery{};  // checkpoints and lost peers (nodes/actor_checkpoint.hpp)
};

[[nodiscard]] nodes::LearnerActor spawn_learner_actor(caf::actor_system& system,
                                                      const LearnerConfig& config,
                                                      LearnerActorOptions options);

}  // namespace tagflow::nodes
