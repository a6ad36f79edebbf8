// InferenceReactor: the reactor binding of InferenceServer (links LibTorch).
//
// Ports (configs/README.md): inputs `observations`, `weights`; output `actions`. Multiports
// whose width is the number of connected peer replicas. The request arriving on observations
// channel c is answered on actions channel c: the cluster wires both in the same replica order.
//
// Per-tag protocol (logical time only):
//   1. `weights` load first (declaration order), so requests at the same tag use them.
//   2. All requests present at a tag form one batch (forward passes of at most max_batch rows);
//      each answer goes out at that tag on its channel. Batching is per tag, never per wall-clock
//      wait, so the actions do not depend on timing; max_wait is not used in reactor mode.
// Thread-safety: one reaction at a time (reactor runtime); counters are atomics.
#pragma once

#include <atomic>

#include "nodes/channel_digest.hpp"
#include "nodes/encoded_value.hpp"
#include "nodes/inference/inference_server.hpp"
#include "nodes/node_metrics.hpp"
#include "reactors/reactors.hpp"

namespace tagflow::nodes {

struct InferencePortWidths {
  std::size_t observations = 0, weights = 0, actions = 0;
};

class InferenceReactor : public reactors::Reactor {
 public:
  reactors::InputMultiport<Encoded<ObservationBatchMessage>> observations;
  reactors::InputMultiport<Encoded<WeightsMessage>> weights;
  reactors::OutputMultiport<Encoded<ActionBatchMessage>> actions;

  /// Throws std::invalid_argument when observations and actions have different widths.
  InferenceReactor(std::string name, reactors::Environment& env, const InferenceConfig& config,
                   const InferencePortWidths& widths);

  [[nodiscard]] const ChannelDigests& actions_digest() const { return actions_digest_; }
  std::atomic<std::int64_t> rows_served{0};
  std::atomic<std::uint64_t> weights_version{0};
  /// Updates `metrics` (an inference server's NodeMetrics, outliving the run) from now on.
  void set_metrics(NodeMetrics* metrics) { metrics_ = metrics; }

  /// Checkpoints, between tags only: the latest weights message loaded (re-loaded on load()),
  /// the digest and the counters. load() throws StateError when the bytes do not fit.
  void save(StateWriter& out) const;
  void load(StateReader& in);

 private:
  InferenceServer server_;
  Encoded<WeightsMessage> latest_weights_;
  std::int64_t rows_before_ = 0;  // rows served before the checkpoint this run resumed from  // the
                                  // message the policy holds (null before one)
  ChannelDigests actions_digest_;
  std::vector<ObservationBatchMessage> requests_;
  std::vector<std::size_t> channels_;
  NodeMetrics* metrics_ = nullptr;
};

}  // namespace tagflow::nodes
