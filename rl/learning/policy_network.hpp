// PolicyNetwork: an MLP for acting only (no gradients, no optimizer): load a WeightsBuffer,
// compute scores and greedy actions for a batch of observations. The inference side of the
// learner's weights; same layout and same numbers as DqnLearner::q_values.
//
// Not thread-safe: one caller at a time (or one PolicyNetwork per thread). Throws
// std::invalid_argument on weights of the wrong size or an invalid MlpSpec.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "rl/learning/mlp_spec.hpp"
#include "rl/learning/weights_buffer.hpp"

namespace tagflow::learning {

class PolicyNetwork {
 public:
  /// Starts with init_mlp_parameters(spec, seed).
  explicit PolicyNetwork(const MlpSpec& spec, std::uint64_t seed = 0);
  ~PolicyNetwork();
  PolicyNetwork(PolicyNetwork&&) noexcept;
  PolicyNetwork& operator=(PolicyNetwork&&) noexcept;
  PolicyNetwork(const PolicyNetwork&) = delete;
  PolicyNetwork& operator=(const PolicyNetwork&) = delete;

  void load_weights(const WeightsBuffer& weights);
  /// Version of the weights last loaded (0 before any).
  [[nodiscard]] std::uint64_t version() const { return version_; }
  [[nodiscard]] const MlpSpec& spec() const;

  /// batch × output scores, row-major, into `out`.
  void scores(const float* observations, std::int64_t batch, float* out) const;
  /// The argmax of each row (ties: lowest action) into `actions` (batch entries).
  void act(const float* observations, std::int64_t batch, std::int64_t* actions) const;
  [[nodiscard]] std::int64_t act_one(const float* observation) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::uint64_t version_ = 0;
};

}  // namespace tagflow::learning
