// BinarySumTree: the textbook binary sum tree (as in OpenAI baselines and RLlib), kept as the
// baseline that `tagflow bench replay` measures the K-ary tree against.
//
// An implicit heap of 2·P doubles, P = capacity rounded up to a power of two: node i has children
// 2i and 2i+1, leaves at [P, 2P). Updates recompute each ancestor from its two children; a
// sample descends from the root one draw at a time.
//
// Thread-safety: const methods may run concurrently; modifications need exclusive access.
#pragma once

#include <cstddef>
#include <vector>

namespace tagflow::replay {

class BinarySumTree {
 public:
  /// Throws std::invalid_argument when capacity is 0.
  explicit BinarySumTree(std::size_t capacity);

  [[nodiscard]] std::size_t capacity() const { return capacity_; }
  void set(std::size_t leaf, double priority);
  void set_batch(const std::size_t* leaves, const double* priorities, std::size_t count);
  [[nodiscard]] double get(std::size_t leaf) const { return nodes_[leaves_ + leaf]; }
  [[nodiscard]] double total() const { return nodes_[1]; }
  /// Same contract as KarySumTree::sample_stratified.
  void sample_stratified(const double* uniforms, std::size_t count, std::size_t* leaves_out) const;
  [[nodiscard]] std::size_t memory_bytes() const { return nodes_.size() * sizeof(double); }

 private:
  std::size_t capacity_;
  std::size_t leaves_;  // P, a power of two ≥ capacity
  std::vector<double> nodes_;
};

}  // namespace tagflow::replay
