// PrioritizedSelector: item i drawn with probability p_i^α / Σ_j p_j^α (Schaul et al. 2016),
// by stratified sampling over a SumTree (sum_tree.hpp): a batch of n draws takes one draw from
// each of n equal slices of the total mass.
//
// A priority of 0 is never drawn, whatever α (0^0 counts as 0 here, not 1). Priorities after the
// exponent are clamped to the tree's [kMinPriority, kMaxPriority]. Contract and thread-safety as
// Selector (selector.hpp). BinaryPrioritizedSelector samples the same way over the textbook
// binary tree (no clamping): the baseline of end-to-end comparisons (TableConfig::binary_sum_tree).
#pragma once

#include <vector>

#include "rl/replay/binary_sum_tree.hpp"
#include "rl/replay/selector.hpp"
#include "rl/replay/sum_tree.hpp"

namespace tagflow::replay {

template <class Tree>
class BasicPrioritizedSelector final : public Selector {
 public:
  /// Throws std::invalid_argument when `priority_exponent` is negative or not finite.
  BasicPrioritizedSelector(std::size_t capacity, double priority_exponent);

  void insert(std::size_t slot, double priority) override;
  void update(std::size_t slot, double priority) override;
  void update_batch(const std::size_t* slots, const double* priorities, std::size_t count) override;
  /// One set_batch for the whole batch: every affected tree node is recomputed once.
  void apply(const SelectorWrite* writes, std::size_t count) override;
  void remove(std::size_t slot) override;
  [[nodiscard]] std::size_t size() const override { return size_; }
  [[nodiscard]] bool can_select() const override { return size_ > 0 && tree_.total() > 0.0; }
  /// Draws one uniform in [0, 1) per item.
  void draw(std::size_t batch_size, ReplayRng& rng, Selection& selection) const override;
  /// Descends the tree for the whole batch (reads only).
  void resolve(Selection& selection) const override;

  /// Σ p^α over present items.
  [[nodiscard]] double total() const { return tree_.total(); }

 private:
  [[nodiscard]] double scaled(double priority) const;

  Tree tree_;
  double exponent_;
  std::size_t size_ = 0;
  std::vector<std::size_t> slots_;  // scratch of the modifying calls
  std::vector<double> scaled_;      // scratch of the modifying calls
};

using PrioritizedSelector = BasicPrioritizedSelector<SumTree>;
using BinaryPrioritizedSelector = BasicPrioritizedSelector<BinarySumTree>;
extern template class BasicPrioritizedSelector<SumTree>;
extern template class BasicPrioritizedSelector<BinarySumTree>;

}  // namespace tagflow::replay
