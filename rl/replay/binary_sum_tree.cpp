#include "rl/replay/binary_sum_tree.hpp"

#include <stdexcept>

namespace tagflow::replay {

BinarySumTree::BinarySumTree(std::size_t capacity) : capacity_(capacity), leaves_(1) {
  if (capacity == 0) throw std::invalid_argument("BinarySumTree: capacity must be positive");
  while (leaves_ < capacity) leaves_ *= 2;
  nodes_.assign(2 * leaves_, 0.0);
}

void BinarySumTree::set(std::size_t leaf, double priority) {
  std::size_t i = leaves_ + leaf;
  nodes_[i] = priority;
  for (i /= 2; i >= 1; i /= 2) nodes_[i] = nodes_[2 * i] + nodes_[2 * i + 1];
}

void BinarySumTree::set_batch(const std::size_t* leaves, const double* priorities,
                              std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) set(leaves[i], priorities[i]);
}

void BinarySumTree::sample_stratified(const double* uniforms, std::size_t count,
                                      std::size_t* leaves_out) const {
  const double stratum = total() / static_cast<double>(count);
  for (std::size_t b = 0; b < count; ++b) {
    double target = (static_cast<double>(b) + uniforms[b]) * stratum;
    std::size_t i = 1;
    while (i < leaves_) {
      const double left = nodes_[2 * i];
      // Going right into a zero subtree can only come from rounding: stay left then.
      if (target < left || nodes_[2 * i + 1] == 0.0) {
        i = 2 * i;
      } else {
        target -= left;
        i = 2 * i + 1;
      }
    }
    leaves_out[b] = i - leaves_;
  }
}

}  // namespace tagflow::replay
