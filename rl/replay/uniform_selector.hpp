// UniformSelector: every committed item equally likely (probability 1/size), O(1) per call.
// Contract and thread-safety as Selector (selector.hpp).
#pragma once

#include <vector>

#include "rl/replay/selector.hpp"

namespace tagflow::replay {

class UniformSelector final : public Selector {
 public:
  explicit UniformSelector(std::size_t capacity);

  void insert(std::size_t slot, double priority) override;
  void update(std::size_t /*slot*/, double /*priority*/) override {}
  void remove(std::size_t slot) override;
  [[nodiscard]] std::size_t size() const override { return items_.size(); }
  [[nodiscard]] bool can_select() const override { return !items_.empty(); }
  void draw(std::size_t batch_size, ReplayRng& rng, Selection& selection) const override;
  [[nodiscard]] std::vector<std::size_t> draw_order() const override { return items_; }
  bool restore_draw_order(const std::vector<std::size_t>& order) override;

 private:
  static constexpr std::size_t kAbsent = ~std::size_t{0};
  std::vector<std::size_t> items_;     // dense list of present slots
  std::vector<std::size_t> position_;  // slot -> index in items_, or kAbsent
};

}  // namespace tagflow::replay
