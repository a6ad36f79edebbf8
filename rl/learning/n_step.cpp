#include "rl/learning/n_step.hpp"

#include <stdexcept>
#include <utility>

namespace tagflow::learning {

NStepAccumulator::NStepAccumulator(int n, double gamma) : n_(n), gamma_(gamma) {
  if (n < 1) throw std::invalid_argument("n-step: n must be >= 1");
  if (gamma < 0.0 || gamma > 1.0) throw std::invalid_argument("n-step: gamma must be in [0, 1]");
}

void NStepAccumulator::push(const std::vector<float>& observation, std::int64_t action,
                            float reward, const std::vector<float>& next_observation,
                            bool terminated, bool truncated, std::vector<NStepTransition>* out) {
  pending_.push_back(Step{observation, action, reward});
  if (terminated || truncated) {
    while (!pending_.empty()) emit_front(next_observation, terminated, out);
    return;
  }
  if (static_cast<int>(pending_.size()) == n_) emit_front(next_observation, false, out);
}

void NStepAccumulator::emit_front(const std::vector<float>& next_observation, bool terminated,
                                  std::vector<NStepTransition>* out) {
  double ret = 0.0;
  double discount = 1.0;
  for (const Step& step : pending_) {
    ret += discount * static_cast<double>(step.reward);
    discount *= gamma_;
  }
  NStepTransition transition;
  transition.observation = std::move(pending_.front().observation);
  transition.action = pending_.front().action;
  transition.reward = static_cast<float>(ret);
  transition.discount = terminated ? 0.0F : static_cast<float>(discount);
  transition.horizon = static_cast<int>(pending_.size());
  transition.next_observation = next_observation;
  out->push_back(std::move(transition));
  pending_.pop_front();
}

}  // namespace tagflow::learning
