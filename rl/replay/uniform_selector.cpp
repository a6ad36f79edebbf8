#include "rl/replay/uniform_selector.hpp"

#include <cassert>

namespace tagflow::replay {

UniformSelector::UniformSelector(std::size_t capacity) : position_(capacity, kAbsent) {
  items_.reserve(capacity);
}

void UniformSelector::insert(std::size_t slot, double /*priority*/) {
  assert(position_[slot] == kAbsent);
  position_[slot] = items_.size();
  items_.push_back(slot);
}

void UniformSelector::remove(std::size_t slot) {
  const std::size_t index = position_[slot];
  assert(index != kAbsent);
  const std::size_t last = items_.back();
  items_[index] = last;
  position_[last] = index;
  items_.pop_back();
  position_[slot] = kAbsent;
}

bool UniformSelector::restore_draw_order(const std::vector<std::size_t>& order) {
  if (order.size() != items_.size()) return false;
  std::vector<bool> seen(position_.size(), false);
  for (const std::size_t slot : order) {
    if (slot >= position_.size() || position_[slot] == kAbsent || seen[slot]) return false;
    seen[slot] = true;
  }
  items_ = order;
  for (std::size_t i = 0; i < items_.size(); ++i) position_[items_[i]] = i;
  return true;
}

void UniformSelector::draw(std::size_t batch_size, ReplayRng& rng, Selection& selection) const {
  std::vector<std::size_t>& slots = selection.slots;
  std::vector<double>& probabilities = selection.probabilities;
  assert(!items_.empty());
  slots.resize(batch_size);
  probabilities.assign(batch_size, 1.0 / static_cast<double>(items_.size()));
  std::uniform_int_distribution<std::size_t> pick(0, items_.size() - 1);
  for (std::size_t b = 0; b < batch_size; ++b) slots[b] = items_[pick(rng)];
}

}  // namespace tagflow::replay
