// InferenceServer: the inference node's logic — greedy actions for batches of observations from
// many samplers, computed by LibTorch: rl/learning's PolicyNetwork over the learner's latest
// weights, or a TorchScript policy file (param `torchscript`). No threads, no sockets, no clock.
//
// Batching, two ways:
//   - serve(requests): the requests given form one batch, stacked into forward passes of at most
//     max_batch rows; each request gets its own ActionBatchMessage (same source, same row order).
//     Reactor mode calls it with every request of one logical tag. Every sampler's request of a
//     round arrives at the same tag (their timers share period and phase), so per-tag batching
//     already stacks all of them; holding requests over max_wait of logical time would only delay
//     the answers and make the samplers skip rounds while they wait. Reactor mode therefore
//     validates max_wait but does not use it.
//   - enqueue(request, arrival) / batch_due(now) / deadline() / serve_queued(): the held batch
//     of the binding that runs on wall time (the actor binding, nodes/inference/inference_actor).
//     Requests are held until max_wait has passed since the oldest one or max_batch rows are
//     queued (max_wait 0: a lone request never waits); times are whatever clock the caller uses.
//
// Pixel requests (uint8 observations) are scaled to [0, 1] floats as they are stacked
// (network_input.hpp): the forward pass is the only place they become floats.
//
// TorchScript: with `torchscript: PATH` the server answers with that module (contract in
// rl/learning/torchscript_policy.hpp) and ignores weights messages (counted in
// weights_ignored()); answers carry weights_version 0. The module is checked at start on one
// observation of the env's width: it must run and return one score per env action.
//
// Errors: ParamError for a bad param (naming it; a missing TorchScript file or one whose
// input/output shape disagrees with the env); std::invalid_argument for observations of the
// wrong width or weights of the wrong length; learning::TorchScriptError when a module fails
// while serving. Not thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nodes/messages.hpp"
#include "nodes/node_params.hpp"
#include "rl/learning/policy_network.hpp"

namespace tagflow::learning {
class TorchScriptPolicy;
}

namespace tagflow::nodes {

struct InferenceConfig {
  learning::MlpSpec network{4, {64, 64}, 2};
  std::size_t max_batch = 64;
  /// How long enqueue() holds a request waiting for more (wall-time bindings; see above).
  std::chrono::nanoseconds max_wait{0};
  std::uint64_t seed = 0;  // initial weights until the learner's first broadcast
  /// A TorchScript policy file to serve instead of the learner's weights; empty: none.
  std::string torchscript;

  /// Reads max_batch, max_wait, hidden, torchscript; the network's input/output sizes come from
  /// the env. A torchscript file is loaded and checked against those sizes here already.
  static InferenceConfig from_params(const NodeParams& params, std::uint64_t seed,
                                     int observation_size, int num_actions);
};

class InferenceServer {
 public:
  /// Throws ParamError when config.torchscript cannot be loaded or does not fit the env.
  explicit InferenceServer(const InferenceConfig& config);
  ~InferenceServer();
  InferenceServer(InferenceServer&&) noexcept;
  InferenceServer& operator=(InferenceServer&&) noexcept;
  InferenceServer(const InferenceServer&) = delete;
  InferenceServer& operator=(const InferenceServer&) = delete;

  /// Loads newer weights (older versions are ignored, except just after
  /// on_new_weights_source()); counted and ignored with torchscript.
  void on_weights(const WeightsMessage& weights);
  /// A learner linked (again): its next weights load whatever their version. A learner
  /// restarted in actor mode counts from its checkpoint's version, or from 1 without one.
  void on_new_weights_source() { any_version_next_ = true; }
  [[nodiscard]] std::vector<ActionBatchMessage> serve(
      const std::vector<ObservationBatchMessage>& requests);

  /// Holds `request`, which arrived at `arrival` (std::invalid_argument for a wrong width).
  void enqueue(ObservationBatchMessage request, std::chrono::nanoseconds arrival);
  /// Whether the held requests should be answered at `now`: max_batch rows are held, or
  /// max_wait has passed since the oldest arrival. False when nothing is held.
  [[nodiscard]] bool batch_due(std::chrono::nanoseconds now) const;
  /// The oldest arrival + max_wait, when something is held.
  [[nodiscard]] std::optional<std::chrono::nanoseconds> deadline() const;
  /// Answers every held request (in arrival order) and empties the queue.
  [[nodiscard]] std::vector<ActionBatchMessage> serve_queued();
  [[nodiscard]] std::size_t queued_rows() const { return queued_rows_; }
  [[nodiscard]] std::size_t queued_requests() const { return queue_.size(); }
  /// Forgets the held requests whose index (in arrival order) `drop` returns true for — those of
  /// a requester that left; the others keep their order and arrival times.
  void drop_queued_if(const std::function<bool(std::size_t index)>& drop);

  [[nodiscard]] std::uint64_t weights_version() const { return policy_.version(); }
  [[nodiscard]] std::uint64_t forward_passes() const { return forward_passes_; }
  [[nodiscard]] std::uint64_t rows_served() const { return rows_served_; }
  [[nodiscard]] bool serves_torchscript() const { return script_ != nullptr; }
  [[nodiscard]] std::uint64_t weights_ignored() const { return weights_ignored_; }

 private:
  void forward(const float* observations, std::size_t rows, std::int64_t* actions);

  InferenceConfig config_;
  learning::PolicyNetwork policy_;
  std::unique_ptr<learning::TorchScriptPolicy> script_;
  std::vector<float> stacked_;
  std::vector<std::int64_t> actions_;
  std::vector<ObservationBatchMessage> queue_;
  std::vector<std::chrono::nanoseconds> arrivals_;  // of each held request, in queue order
  std::size_t queued_rows_ = 0;
  std::uint64_t forward_passes_ = 0;
  std::uint64_t rows_served_ = 0;
  std::uint64_t weights_ignored_ = 0;
  bool any_version_next_ = false;  // on_new_weights_source() until the next load
};

}  // namespace tagflow::nodes
