// EpsilonSchedule: ε for ε-greedy exploration as a function of the environment step, decaying
// linearly from `start` to `end` over `decay_steps` steps and constant afterwards.
// A value type; pure function of its arguments.
#pragma once

#include <algorithm>
#include <cstdint>

namespace tagflow::learning {

struct EpsilonSchedule {
  double start = 1.0;
  double end = 0.05;
  std::int64_t decay_steps = 10000;

  [[nodiscard]] double at(std::int64_t step) const {
    if (decay_steps <= 0 || step >= decay_steps) return end;
    const double fraction =
        static_cast<double>(std::max<std::int64_t>(step, 0)) / static_cast<double>(decay_steps);
    return start + (end - start) * fraction;
  }
};

}  // namespace tagflow::learning
