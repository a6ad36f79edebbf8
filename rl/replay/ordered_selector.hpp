// OrderedSelector: FIFO (oldest committed item first) or LIFO (newest first), Reverb's Fifo and
// Lifo selectors. A batch of n takes the n oldest (newest) items in order, starting again from
// the first when the table holds fewer than n. Deterministic: every draw has probability 1.
// Usually paired with a queue-like rate limiter (samples_per_insert = 1). Contract and
// thread-safety as Selector (selector.hpp).
#pragma once

#include <vector>

#include "rl/replay/selector.hpp"

namespace tagflow::replay {

class OrderedSelector final : public Selector {
 public:
  OrderedSelector(std::size_t capacity, bool newest_first);

  void insert(std::size_t slot, double priority) override;
  void update(std::size_t /*slot*/, double /*priority*/) override {}
  void remove(std::size_t slot) override;
  [[nodiscard]] std::size_t size() const override { return size_; }
  [[nodiscard]] bool can_select() const override { return size_ > 0; }
  void draw(std::size_t batch_size, ReplayRng& rng, Selection& selection) const override;

 private:
  static constexpr std::size_t kNone = ~std::size_t{0};
  bool newest_first_;
  std::size_t size_ = 0;
  std::size_t oldest_ = kNone;
  std::size_t newest_ = kNone;
  std::vector<std::size_t> older_;  // slot -> the next older slot in commit order, or kNone
  std::vector<std::size_t> newer_;  // slot -> the next newer slot, or kNone
};

}  // namespace tagflow::replay
