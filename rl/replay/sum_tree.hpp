// KarySumTree: the prioritized sampler's index, a K-ary sum tree laid out for the cache (PAL,
// Zhang, Kuppannagari, Prasanna 2021).
//
// Layout. Leaves are the slots [0, capacity). Level 0 has one node per leaf, level l + 1 one node
// per group of K consecutive nodes of level l, up to a top level of at most K nodes. Each level
// keeps
//   - `totals`: the exact value of every node as double (a leaf's priority; an inner node's sum
//     of its K children, always recomputed from the children by a fixed pairwise order, never
//     adjusted by differences), K siblings side by side;
//   - `prefix`: for every group of K siblings, their running sums in type Prefix. With K = 16 and
//     float, one group is 64 bytes, one cache line (aligned), so choosing a child reads one line.
// Memory is proportional to capacity: each level is rounded up to a multiple of K only (no
// padding to a power of K); about 12.9 bytes per leaf for K = 16 and float.
//
// Exactness. Because an inner node is a pure function of its children, the tree after any
// sequence of updates is bit-identical to a tree built from scratch with the same leaves: rounding
// error does not accumulate however long the run. A child whose value is 0 has the same running
// sum as its left neighbour and is never chosen, so a zero-priority leaf is never sampled.
// Priorities are clamped to [kMinPriority, kMaxPriority] (0 stays 0) so that float running sums
// neither underflow to 0 nor overflow.
//
// Sampling descends the tree for a whole batch level by level (all draws at the top level, then
// all at the next), carrying each draw's position as a fraction of the current node, so that every
// level resolves its children at full precision.
//
// Thread-safety: const methods may run concurrently with each other; anything that modifies the
// tree needs exclusive access. Errors: leaf indices are checked only by assertions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace tagflow::replay {

template <int K, class Prefix>
class KarySumTree {
  static_assert(K >= 2 && (K & (K - 1)) == 0, "K must be a power of two");

 public:
  static constexpr int kArity = K;
  static constexpr double kMinPriority = 1e-30;
  static constexpr double kMaxPriority = 1e25;  // 2^30 leaves sum below FLT_MAX

  /// A tree of `capacity` leaves, all 0. Throws std::invalid_argument when capacity is 0.
  explicit KarySumTree(std::size_t capacity);

  [[nodiscard]] std::size_t capacity() const { return capacity_; }
  /// Sets one leaf (clamped as above) and recomputes its ancestors.
  void set(std::size_t leaf, double priority);
  /// Sets `count` leaves, then recomputes each affected ancestor once, level by level. A leaf
  /// listed twice takes its last value.
  void set_batch(const std::size_t* leaves, const double* priorities, std::size_t count);
  /// Sets every leaf at once from `priorities` (size == capacity) and rebuilds all levels.
  void assign(const std::vector<double>& priorities);
  [[nodiscard]] double get(std::size_t leaf) const { return levels_[0].totals[leaf]; }
  /// Sum of all leaves.
  [[nodiscard]] double total() const;
  /// Stratified batch: draw b in [0, count) falls in stratum [(b + u[b]) / count) of the total
  /// mass, u[b] in [0, 1) supplied by the caller. Writes the chosen leaf of each draw to
  /// `leaves_out`. Requires total() > 0.
  void sample_stratified(const double* uniforms, std::size_t count, std::size_t* leaves_out) const;
  /// Leaf at mass fraction `fraction` in [0, 1) (one draw, same rules as a batch).
  [[nodiscard]] std::size_t find(double fraction) const;
  /// Bytes held by the tree's arrays.
  [[nodiscard]] std::size_t memory_bytes() const;
  /// Number of levels (1 for a single group of at most K leaves).
  [[nodiscard]] std::size_t depth() const { return levels_.size(); }

 private:
  struct AlignedDelete {
    void operator()(Prefix* p) const;
  };
  struct Level {
    std::size_t nodes = 0;
    std::vector<double> totals;                       // nodes rounded up to a multiple of K
    std::unique_ptr<Prefix[], AlignedDelete> prefix;  // one aligned line per K siblings
    std::vector<std::uint8_t> marks;                  // per group, scratch for set_batch
  };

  void recompute_group(std::size_t level, std::size_t group, int first);
  static std::size_t choose_child(const Prefix* group, double& fraction);

  std::size_t capacity_;
  std::vector<Level> levels_;       // [0] = leaves, back() = top (at most K nodes)
  std::vector<std::size_t> dirty_;  // scratch for set_batch
};

/// The tree the prioritized selector uses: K = 16 with float running sums (one 64-byte cache
/// line per group), chosen by `tagflow bench replay` on this project's machines.
using SumTree = KarySumTree<16, float>;

extern template class KarySumTree<4, double>;
extern template class KarySumTree<8, double>;
extern template class KarySumTree<16, float>;
extern template class KarySumTree<16, double>;
extern template class KarySumTree<32, float>;

}  // namespace tagflow::replay
