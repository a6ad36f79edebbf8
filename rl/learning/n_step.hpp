// NStepAccumulator: turns one environment's stream of single steps into n-step transitions
//   (s_t, a_t, R = r_t + γ r_{t+1} + … + γ^{k-1} r_{t+k-1}, discount = γ^k or 0, s_{t+k})
// with k = n, or fewer at the end of an episode. A terminated episode bootstraps with
// discount 0; a truncated one (time limit) bootstraps from its last observation with γ^k.
//
// One accumulator per environment; not thread-safe. Observations are copied.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

namespace tagflow::learning {

struct NStepTransition {
  std::vector<float> observation;
  std::int64_t action = 0;
  float reward = 0.0F;    // discounted sum of up to n rewards
  float discount = 0.0F;  // γ^k to bootstrap with, or 0 when the episode terminated
  int horizon = 0;        // k: the number of rewards summed (1..n)
  std::vector<float> next_observation;
};

class NStepAccumulator {
 public:
  /// Throws std::invalid_argument when n < 1 or gamma is outside [0, 1].
  NStepAccumulator(int n, double gamma);

  /// Records one step taken from `observation`. Appends to `out` every transition that became
  /// complete: at most one while the episode runs, all pending ones when it ends.
  void push(const std::vector<float>& observation, std::int64_t action, float reward,
            const std::vector<float>& next_observation, bool terminated, bool truncated,
            std::vector<NStepTransition>* out);

  /// Drops the pending steps (a reset without an episode end).
  void clear() { pending_.clear(); }
  [[nodiscard]] std::size_t pending() const { return pending_.size(); }

 private:
  struct Step {
    std::vector<float> observation;
    std::int64_t action;
    float reward;
  };

  void emit_front(const std::vector<float>& next_observation, bool terminated,
                  std::vector<NStepTransition>* out);

  int n_;
  double gamma_;
  std::deque<Step> pending_;
};

}  // namespace tagflow::learning
