#include "rl/replay/ordered_selector.hpp"

#include <cassert>

namespace tagflow::replay {

OrderedSelector::OrderedSelector(std::size_t capacity, bool newest_first)
    : newest_first_(newest_first), older_(capacity, kNone), newer_(capacity, kNone) {}

void OrderedSelector::insert(std::size_t slot, double /*priority*/) {
  older_[slot] = newest_;
  newer_[slot] = kNone;
  if (newest_ != kNone) newer_[newest_] = slot;
  newest_ = slot;
  if (oldest_ == kNone) oldest_ = slot;
  ++size_;
}

void OrderedSelector::remove(std::size_t slot) {
  assert(size_ > 0);
  const std::size_t older = older_[slot];
  const std::size_t newer = newer_[slot];
  if (older != kNone)
    newer_[older] = newer;
  else
    oldest_ = newer;
  if (newer != kNone)
    older_[newer] = older;
  else
    newest_ = older;
  older_[slot] = kNone;
  newer_[slot] = kNone;
  --size_;
}

void OrderedSelector::draw(std::size_t batch_size, ReplayRng& /*rng*/, Selection& selection) const {
  std::vector<std::size_t>& slots = selection.slots;
  std::vector<double>& probabilities = selection.probabilities;
  assert(size_ > 0);
  slots.resize(batch_size);
  probabilities.assign(batch_size, 1.0);
  const std::size_t first = newest_first_ ? newest_ : oldest_;
  const std::vector<std::size_t>& step = newest_first_ ? older_ : newer_;
  std::size_t slot = first;
  for (std::size_t b = 0; b < batch_size; ++b) {
    slots[b] = slot;
    slot = step[slot];
    if (slot == kNone) slot = first;
  }
}

}  // namespace tagflow::replay
