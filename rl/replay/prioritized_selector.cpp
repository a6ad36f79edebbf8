#include "rl/replay/prioritized_selector.hpp"

#include <cmath>
#include <stdexcept>

namespace tagflow::replay {

template <class Tree>
BasicPrioritizedSelector<Tree>::BasicPrioritizedSelector(std::size_t capacity,
                                                         double priority_exponent)
    : tree_(capacity), exponent_(priority_exponent) {
  if (!std::isfinite(priority_exponent) || priority_exponent < 0.0) {
    throw std::invalid_argument("PrioritizedSelector: priority exponent must be finite and >= 0");
  }
}

template <class Tree>
double BasicPrioritizedSelector<Tree>::scaled(double priority) const {
  if (priority <= 0.0) return 0.0;
  if (exponent_ == 1.0) return priority;
  return std::pow(priority, exponent_);
}

template <class Tree>
void BasicPrioritizedSelector<Tree>::insert(std::size_t slot, double priority) {
  tree_.set(slot, scaled(priority));
  ++size_;
}

template <class Tree>
void BasicPrioritizedSelector<Tree>::update(std::size_t slot, double priority) {
  tree_.set(slot, scaled(priority));
}

template <class Tree>
void BasicPrioritizedSelector<Tree>::update_batch(const std::size_t* slots,
                                                  const double* priorities, std::size_t count) {
  scaled_.resize(count);
  for (std::size_t i = 0; i < count; ++i) scaled_[i] = scaled(priorities[i]);
  tree_.set_batch(slots, scaled_.data(), count);
}

template <class Tree>
void BasicPrioritizedSelector<Tree>::remove(std::size_t slot) {
  tree_.set(slot, 0.0);
  --size_;
}

template <class Tree>
void BasicPrioritizedSelector<Tree>::apply(const SelectorWrite* writes, std::size_t count) {
  slots_.resize(count);
  scaled_.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
    slots_[i] = writes[i].slot;
    scaled_[i] = scaled(writes[i].priority);
    if (writes[i].insert) ++size_;
  }
  tree_.set_batch(slots_.data(), scaled_.data(), count);
}

template <class Tree>
void BasicPrioritizedSelector<Tree>::draw(std::size_t batch_size, ReplayRng& rng,
                                          Selection& selection) const {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  selection.uniforms.resize(batch_size);
  for (double& u : selection.uniforms) u = unit(rng);
}

template <class Tree>
void BasicPrioritizedSelector<Tree>::resolve(Selection& selection) const {
  const std::size_t batch_size = selection.uniforms.size();
  selection.slots.resize(batch_size);
  tree_.sample_stratified(selection.uniforms.data(), batch_size, selection.slots.data());
  const double total = tree_.total();
  selection.probabilities.resize(batch_size);
  for (std::size_t b = 0; b < batch_size; ++b) {
    selection.probabilities[b] = tree_.get(selection.slots[b]) / total;
  }
}

template class BasicPrioritizedSelector<SumTree>;
template class BasicPrioritizedSelector<BinarySumTree>;

}  // namespace tagflow::replay
