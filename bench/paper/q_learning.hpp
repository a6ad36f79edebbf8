// The paper's synchronized Q-learning pieces (arXiv 2312.04704), without LibTorch: a 3→32→2 ReLU
// Q-network with its backward pass, torch.optim.Adam's update, and the replay buffer the round
// driver fills. The maths is PyTorch's: nn.Linear's default initialization (weights and biases
// U(±1/sqrt(fan_in))), MSE loss on Q(s, a) against r + γ·max_a' Q_target(s', a')·(1 − done)
// (target detached), Adam with β (0.9, 0.999), ε 1e-8, bias-corrected, no weight decay.
// Not thread-safe; small enough that a worker owns a copy of the weights.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace tagflow::bench::paper {

/// One experience as the workers send it: 9 floats.
struct Experience {
  std::array<float, 3> state;
  float action;
  float reward;
  std::array<float, 3> next_state;
  float done;
};
static_assert(sizeof(Experience) == 9 * sizeof(float), "an experience is 9 packed floats");

class QNetwork {
 public:
  static constexpr std::size_t kInputs = 3, kHidden = 32, kActions = 2;
  /// W1 [32x3], b1 [32], W2 [2x32], b2 [2], in that order.
  static constexpr std::size_t kParameters =
      kHidden * kInputs + kHidden + kActions * kHidden + kActions;

  explicit QNetwork(std::uint64_t seed);
  QNetwork() = default;

  [[nodiscard]] std::array<float, kActions> forward(const std::array<float, 3>& state) const;
  [[nodiscard]] std::int64_t greedy(const std::array<float, 3>& state) const;

  std::array<float, kParameters> parameters{};
};

/// One synchronized Q-learning learner: online and target networks and Adam's moments.
class QLearner {
 public:
  QLearner(std::uint64_t seed, float learning_rate, float gamma);
  /// One Adam step on the MSE of `batch`; returns the loss.
  double update(const std::vector<const Experience*>& batch);
  void sync_target() { target_ = online_; }
  [[nodiscard]] const QNetwork& online() const { return online_; }

 private:
  QNetwork online_;
  QNetwork target_;
  std::array<float, QNetwork::kParameters> m_{}, v_{};
  float learning_rate_;
  float gamma_;
  std::int64_t steps_ = 0;
};

/// A FIFO of `capacity` experiences (the artifact's deque(maxlen)); `first` returns the oldest N
/// (what the artifact's sample() did), `sample` N drawn uniformly with replacement.
class QReplay {
 public:
  explicit QReplay(std::size_t capacity) : capacity_(capacity) {}
  void add(const Experience& e);
  [[nodiscard]] std::size_t size() const { return items_.size(); }
  [[nodiscard]] std::vector<const Experience*> first(std::size_t n) const;
  [[nodiscard]] std::vector<const Experience*> sample(std::size_t n, std::mt19937_64& rng) const;

 private:
  const Experience& at(std::size_t age) const;  // 0 = oldest
  std::size_t capacity_;
  std::size_t next_ = 0;  // where the next item goes once full
  std::vector<Experience> items_;
};

}  // namespace tagflow::bench::paper
