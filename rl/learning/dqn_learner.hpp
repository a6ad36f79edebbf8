// DqnLearner: the DQN update on LibTorch, behind a torch-free interface.
//
// One update (update()):
//   q      = Q_online(s)[a]
//   a*     = argmax_a' Q_online(s') (double DQN) or argmax_a' Q_target(s')
//   y      = R + discount · Q_target(s')[a*]          (discount = γ^k, or 0 when terminal)
//   δ      = y − q;   loss = mean_i(w_i · huber(δ_i))   (w = importance weights, default 1)
//   Adam step on the clipped gradient; target network synced (hard every N updates, or soft τ).
// It returns the loss and |δ| per sample: the new priorities for prioritized replay.
//
// Value decomposition (DqnConfig::joint_agents = k > 0, VDN): every row is one joint transition
// of k agents that share the network. An observation row is the k agents' inputs (input_size
// floats each, agent-major) followed by k alive flags (1: the agent acts in that state, 0: it is
// done and counts for nothing); the action is the joint code Σ_j a_j · A^j (A = num_actions); the
// reward is the team's. Then, with m_j and m'_j the alive flags of s and s':
//   Q_tot  = Σ_j m_j  · Q_online(o_j)[a_j]
//   y      = R + discount · Σ_j m'_j · Q_target(o'_j)[a*_j]   (a*_j per agent, as above)
// and the loss, priorities and step are those above with q = Q_tot.
//
// Parameters live in one contiguous float32 tensor (MlpSpec layout); every layer is a view of
// it, so weights() / load_weights() are one memcpy and the Adam moments are flat tensors too.
// All randomness comes from DqnConfig::seed. Results are bit-reproducible for the same inputs
// when LibTorch runs with the same thread count (the trainer uses one intra-op thread).
//
// Thread-safety: none; one thread drives a learner. Errors: std::invalid_argument for a batch
// or weights of the wrong shape (programmer error), LearnerStateError for a bad restore.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

#include "rl/learning/dqn_config.hpp"
#include "rl/learning/learner_state.hpp"
#include "rl/learning/weights_buffer.hpp"

namespace tagflow::learning {

/// A minibatch in flat row-major arrays: `size` rows of DqnConfig::row_size() floats each.
struct TransitionBatch {
  std::int64_t size = 0;
  std::vector<float> observations;
  std::vector<std::int64_t> actions;  // joint codes with value decomposition
  std::vector<float> rewards;         // n-step discounted reward sums
  std::vector<float> discounts;       // γ^k to bootstrap with, 0 for terminal transitions
  std::vector<float> next_observations;
  std::vector<float> importance_weights;  // empty: all 1 (uniform replay)

  /// Throws std::invalid_argument when an array's length does not match size and sizes.
  void validate(int row_size) const;
};

struct UpdateResult {
  double loss = 0.0;
  double mean_q = 0.0;
  double grad_norm = 0.0;         // before clipping
  std::vector<float> priorities;  // |TD error| per sample, in batch order
  std::int64_t updates = 0;       // updates done, this one included
};

class DqnLearner {
 public:
  explicit DqnLearner(const DqnConfig& config);
  ~DqnLearner();
  DqnLearner(DqnLearner&&) noexcept;
  DqnLearner& operator=(DqnLearner&&) noexcept;
  DqnLearner(const DqnLearner&) = delete;
  DqnLearner& operator=(const DqnLearner&) = delete;

  [[nodiscard]] UpdateResult update(const TransitionBatch& batch);

  /// Q-values of the online network for `batch` observations: out has batch × actions floats.
  void q_values(const float* observations, std::int64_t batch, float* out) const;
  /// argmax_a Q_online(observation, a) for one observation (ties: lowest action).
  [[nodiscard]] std::int64_t greedy_action(const float* observation) const;

  /// The online weights, version = updates().
  [[nodiscard]] WeightsBuffer weights() const;
  /// Replaces online and target weights (a broadcast, or an initial policy). Throws
  /// std::invalid_argument on a size mismatch. Optimizer state and update count are kept.
  void load_weights(const WeightsBuffer& weights);

  /// Everything needed to continue training exactly (checkpoints: learner_checkpoint.hpp).
  [[nodiscard]] LearnerState state() const;
  /// Throws LearnerStateError when `state` was made for another network shape.
  void restore(const LearnerState& state);

  /// Changes Adam's learning rate from the next update on (schedules). Must be > 0.
  void set_learning_rate(double learning_rate);

  [[nodiscard]] std::int64_t updates() const;
  [[nodiscard]] const DqnConfig& config() const;

 private:
  struct Impl;
  struct Estimates;
  [[nodiscard]] Estimates estimate(const TransitionBatch& batch) const;

  std::unique_ptr<Impl> impl_;
};

}  // namespace tagflow::learning
