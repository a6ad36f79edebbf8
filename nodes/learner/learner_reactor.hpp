// LearnerReactor: the reactor binding of LearnerServer (links LibTorch).
//
// Ports (configs/README.md): input `batches`; outputs `priorities`, `weights`. Multiports whose
// width is the number of connected peer replicas; values are Encoded messages
// (encoded_value.hpp), encoded once per tag here.
//
// Per-tag protocol (logical time and counts only):
//   1. At startup the initial weights (version 0) go out on every `weights` channel, so every
//      policy copy starts from the learner's network.
//   2. Each list on `batches` (channels in order, batches in list order) is one DQN update per
//      batch; the priorities of all of them go out as one update on every `priorities` channel
//      and the newest published weights on every `weights` channel, at the same tag (the
//      connections' `after` delays place them later).
//   3. Every eval_every updates, when a target return is set, the greedy policy plays the
//      evaluation episodes (Evaluator); a mean at or above the target requests the stop.
// Thread-safety: one reaction at a time (reactor runtime); counters are atomics.
#pragma once

#include <atomic>
#include <limits>
#include <optional>

#include "nodes/channel_digest.hpp"
#include "nodes/encoded_value.hpp"
#include "nodes/learner/evaluator.hpp"
#include "nodes/learner/learner_server.hpp"
#include "nodes/node_metrics.hpp"
#include "nodes/replay/replay_reactor.hpp"
#include "reactors/reactors.hpp"

namespace tagflow::nodes {

struct LearnerPortWidths {
  std::size_t batches = 0, priorities = 0, weights = 0;
};

class LearnerReactor : public reactors::Reactor {
 public:
  reactors::InputMultiport<Encoded<SampleBatchList>> batches;
  reactors::OutputMultiport<Encoded<PriorityUpdateMessage>> priorities;
  reactors::OutputMultiport<Encoded<WeightsMessage>> weights;

  /// `evaluator` and `target_return` set: evaluate every eval_every updates and stop at target.
  LearnerReactor(std::string name, reactors::Environment& env, const LearnerConfig& config,
                 const LearnerPortWidths& widths, std::unique_ptr<Evaluator> evaluator,
                 std::optional<double> target_return);

  [[nodiscard]] LearnerServer& server() { return server_; }
  [[nodiscard]] const ChannelDigests& priorities_digest() const { return priorities_digest_; }
  [[nodiscard]] const ChannelDigests& weights_digest() const { return weights_digest_; }
  /// Mean return of every evaluation so far, in order (read after the run).
  [[nodiscard]] const std::vector<double>& evaluations() const { return evaluations_; }
  /// True once an evaluation reached the target return.
  [[nodiscard]] bool target_reached() const { return target_reached_; }
  /// FNV-1a of the encoded online weights as they were after the last tag < cutoff (the
  /// initial weights when no update came before it). Read after the run.
  [[nodiscard]] std::uint64_t weights_hash_before(reactors::Tag cutoff) const;
  /// Updates `metrics` (a learner's NodeMetrics, outliving the run) from now on.
  void set_metrics(NodeMetrics* metrics) { metrics_ = metrics; }
  std::atomic<std::int64_t> updates{0};
  std::atomic<double> last_evaluation{std::numeric_limits<double>::quiet_NaN()};  // NaN: none yet

  /// Checkpoints, between tags only: the learner's training state, the digests, the weights
  /// history and the evaluations. A loaded learner does not send its initial weights again at
  /// startup (its resumed run starts after they were sent).
  void save(StateWriter& out) const;
  void load(StateReader& in);

 private:
  void send_weights(WeightsMessage message);
  void maybe_evaluate();
  void record_weights_hash();

  LearnerServer server_;
  std::unique_ptr<Evaluator> evaluator_;
  std::optional<double> target_return_;
  ChannelDigests priorities_digest_;
  ChannelDigests weights_digest_;
  std::vector<double> evaluations_;
  bool target_reached_ = false;
  bool resumed_ = false;  // loaded from a checkpoint: the initial weights went out before  // no
                          // update after the evaluation that reached the target
  NodeMetrics* metrics_ = nullptr;
  // In tag order; those no cutoff can need are dropped every 1,024 (record_weights_hash).
  std::vector<std::pair<reactors::Tag, std::uint64_t>> weights_hashes_;
};

}  // namespace tagflow::nodes
