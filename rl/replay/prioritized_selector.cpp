#include "rl/replay/prioritized_selector.hpp"

#include <cmath>
#include <stdexcept>

namespace tagflow::replay {

PrioritizedSelector::PrioritizedSelector(std::size_t capacity, double priority_exponent)
    : tree_(capacity), exponent_(priority_exponent) {
  if (!std::isfinite(priority_exponent) || priority_exponent < 0.0) {
    throw std::invalid_argument("PrioritizedSelector: priority exponent must be finite and >= 0");
  }
}

double PrioritizedSelector::scaled(double priority) const {
  if (priority <= 0.0) return 0.0;
  if (exponent_ == 1.0) return priority;
  return std::pow(priority, exponent_);
}

void PrioritizedSelector::insert(std::size_t slot, double priority) {
  tree_.set(slot, scaled(priority));
  ++size_;
}

void PrioritizedSelector::update(std::size_t slot, double priority) {
  tree_.set(slot, scaled(priority));
}

void PrioritizedSelector::update_batch(const std::size_t* slots, const double* priorities,
                                       std::size_t count) {
  scaled_.resize(count);
  for (std::size_t i = 0; i < count; ++i) scaled_[i] = scaled(priorities[i]);
  tree_.set_batch(slots, scaled_.data(), count);
}

void PrioritizedSelector::remove(std::size_t slot) {
  tree_.set(slot, 0.0);
  --size_;
}

void PrioritizedSelector::select(std::size_t batch_size, ReplayRng& rng,
                                 std::vector<std::size_t>& slots,
                                 std::vector<double>& probabilities) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  uniforms_.resize(batch_size);
  for (double& u : uniforms_) u = unit(rng);
  slots.resize(batch_size);
  tree_.sample_stratified(uniforms_.data(), batch_size, slots.data());
  const double total = tree_.total();
  probabilities.resize(batch_size);
  for (std::size_t b = 0; b < batch_size; ++b) probabilities[b] = tree_.get(slots[b]) / total;
}

}  // namespace tagflow::replay
