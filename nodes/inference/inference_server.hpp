// InferenceServer: the inference node's logic — greedy actions for batches of observations from
// many samplers, computed by LibTorch (rl/learning's PolicyNetwork) over the learner's latest
// weights. No threads, no sockets, no clock.
//
// Batching is per call: serve() takes every request that arrived at one logical tag, stacks
// them into forward passes of at most max_batch rows and answers each request with its own
// ActionBatchMessage (same source, same row order). The `max_wait` param of the cluster file is
// the logical-time window a binding may collect requests over; serve() itself never waits.
//
// Errors: ParamError for a bad param (naming it); std::invalid_argument for observations of the
// wrong width or weights of the wrong length. Not thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "nodes/messages.hpp"
#include "nodes/node_params.hpp"
#include "rl/learning/policy_network.hpp"

namespace tagflow::nodes {

struct InferenceConfig {
  learning::MlpSpec network{4, {64, 64}, 2};
  std::size_t max_batch = 64;
  std::chrono::nanoseconds max_wait{0};
  std::uint64_t seed = 0;  // initial weights until the learner's first broadcast

  /// Reads max_batch, max_wait, hidden; the network's input/output sizes come from the env.
  static InferenceConfig from_params(const NodeParams& params, std::uint64_t seed,
                                     int observation_size, int num_actions);
};

class InferenceServer {
 public:
  explicit InferenceServer(const InferenceConfig& config);

  void on_weights(const WeightsMessage& weights);
  [[nodiscard]] std::vector<ActionBatchMessage> serve(
      const std::vector<ObservationBatchMessage>& requests);

  [[nodiscard]] std::uint64_t weights_version() const { return policy_.version(); }
  [[nodiscard]] std::uint64_t forward_passes() const { return forward_passes_; }
  [[nodiscard]] std::uint64_t rows_served() const { return rows_served_; }

 private:
  InferenceConfig config_;
  learning::PolicyNetwork policy_;
  std::vector<float> stacked_;
  std::vector<std::int64_t> actions_;
  std::uint64_t forward_passes_ = 0;
  std::uint64_t rows_served_ = 0;
};

}  // namespace tagflow::nodes
