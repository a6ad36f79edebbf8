#include "rl/replay/sum_tree.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <stdexcept>

namespace tagflow::replay {
namespace {

constexpr std::size_t kLineBytes = 64;
// Draws descended together; bounds the stack scratch of sample_stratified.
constexpr std::size_t kChunk = 256;
constexpr double kBelowOne = 1.0 - std::numeric_limits<double>::epsilon() / 2;

double clamp_priority(double priority, double lo, double hi) {
  assert(priority >= 0.0 && !std::isnan(priority));
  if (priority <= 0.0) return 0.0;
  return std::min(std::max(priority, lo), hi);
}

}  // namespace

template <int K, class Prefix>
void KarySumTree<K, Prefix>::AlignedDelete::operator()(Prefix* p) const {
  ::operator delete[](p, std::align_val_t{kLineBytes});
}

template <int K, class Prefix>
KarySumTree<K, Prefix>::KarySumTree(std::size_t capacity) : capacity_(capacity) {
  if (capacity == 0) throw std::invalid_argument("KarySumTree: capacity must be positive");
  std::size_t nodes = capacity;
  while (true) {
    const std::size_t groups = (nodes + K - 1) / K;
    Level level;
    level.nodes = nodes;
    level.totals.assign(groups * K, 0.0);
    level.marks.assign(groups, 0);
    auto* raw = static_cast<Prefix*>(
        ::operator new[](groups* K * sizeof(Prefix), std::align_val_t{kLineBytes}));
    std::uninitialized_fill_n(raw, groups * K, Prefix{0});
    level.prefix.reset(raw);
    levels_.push_back(std::move(level));
    if (nodes <= static_cast<std::size_t>(K)) break;
    nodes = groups;
  }
}

// Recomputes the running sums of `group` from child `first` on (the sums before it are
// unchanged), and the group's exact total in the parent level. The total is a pairwise sum in a
// fixed order, so it depends only on the children's values.
template <int K, class Prefix>
void KarySumTree<K, Prefix>::recompute_group(std::size_t level, std::size_t group, int first) {
  Level& lv = levels_[level];
  const double* totals = lv.totals.data() + group * K;
  Prefix* prefix = lv.prefix.get() + group * K;
  Prefix running = first > 0 ? prefix[first - 1] : Prefix{0};
  for (int j = first; j < K; ++j) {
    running += static_cast<Prefix>(totals[j]);
    prefix[j] = running;
  }
  if (level + 1 < levels_.size()) {
    double pairs[K];
    for (int j = 0; j < K; ++j) pairs[j] = totals[j];
    for (int width = K / 2; width >= 1; width /= 2) {
      for (int j = 0; j < width; ++j) pairs[j] += pairs[j + width];
    }
    levels_[level + 1].totals[group] = pairs[0];
  }
}

template <int K, class Prefix>
void KarySumTree<K, Prefix>::set(std::size_t leaf, double priority) {
  assert(leaf < capacity_);
  levels_[0].totals[leaf] = clamp_priority(priority, kMinPriority, kMaxPriority);
  // Every line this update touches is known now: request them all so their misses overlap.
  std::size_t node = leaf;
  for (std::size_t level = 0; level < levels_.size(); ++level) {
    const std::size_t group = node / K;
    const double* totals = levels_[level].totals.data() + group * K;
    for (std::size_t byte = 0; byte < K * sizeof(double); byte += kLineBytes) {
      __builtin_prefetch(reinterpret_cast<const char*>(totals) + byte, 1);
    }
    __builtin_prefetch(levels_[level].prefix.get() + group * K, 1);
    node = group;
  }
  node = leaf;
  for (std::size_t level = 0; level < levels_.size(); ++level) {
    recompute_group(level, node / K, static_cast<int>(node % K));
    node /= K;
  }
}

template <int K, class Prefix>
void KarySumTree<K, Prefix>::set_batch(const std::size_t* leaves, const double* priorities,
                                       std::size_t count) {
  dirty_.clear();
  std::vector<std::uint8_t>& leaf_marks = levels_[0].marks;
  // Random leaves miss the cache: request the lines a few iterations ahead so misses overlap.
  constexpr std::size_t kAhead = 8;
  for (std::size_t i = 0; i < count; ++i) {
    assert(leaves[i] < capacity_);
    if (i + kAhead < count) {
      __builtin_prefetch(levels_[0].totals.data() + leaves[i + kAhead], 1);
      __builtin_prefetch(leaf_marks.data() + leaves[i + kAhead] / K, 1);
    }
    levels_[0].totals[leaves[i]] = clamp_priority(priorities[i], kMinPriority, kMaxPriority);
    const std::size_t group = leaves[i] / K;
    if (leaf_marks[group] == 0) {
      leaf_marks[group] = 1;
      dirty_.push_back(group);
    }
  }
  // Each affected group once per level; `dirty_` holds distinct groups of the current level.
  for (std::size_t level = 0; level < levels_.size(); ++level) {
    std::vector<std::uint8_t>& marks = levels_[level].marks;
    const bool has_parent = level + 1 < levels_.size();
    std::size_t parents = 0;
    Level& lv = levels_[level];
    for (std::size_t i = 0; i < dirty_.size(); ++i) {
      const std::size_t group = dirty_[i];
      if (i + kAhead < dirty_.size()) {
        const std::size_t ahead = dirty_[i + kAhead];
        const char* totals = reinterpret_cast<const char*>(lv.totals.data() + ahead * K);
        for (std::size_t byte = 0; byte < K * sizeof(double); byte += kLineBytes) {
          __builtin_prefetch(totals + byte);
        }
        __builtin_prefetch(lv.prefix.get() + ahead * K, 1);
        if (has_parent) __builtin_prefetch(levels_[level + 1].totals.data() + ahead / K, 1);
      }
      recompute_group(level, group, 0);
      marks[group] = 0;
      if (has_parent && levels_[level + 1].marks[group / K] == 0) {
        levels_[level + 1].marks[group / K] = 1;
        dirty_[parents++] = group / K;
      }
    }
    dirty_.resize(parents);
  }
}

template <int K, class Prefix>
void KarySumTree<K, Prefix>::assign(const std::vector<double>& priorities) {
  if (priorities.size() != capacity_) {
    throw std::invalid_argument("KarySumTree::assign: size differs from capacity");
  }
  for (std::size_t i = 0; i < capacity_; ++i) {
    levels_[0].totals[i] = clamp_priority(priorities[i], kMinPriority, kMaxPriority);
  }
  for (std::size_t level = 0; level < levels_.size(); ++level) {
    const std::size_t groups = (levels_[level].nodes + K - 1) / K;
    for (std::size_t group = 0; group < groups; ++group) recompute_group(level, group, 0);
  }
}

template <int K, class Prefix>
double KarySumTree<K, Prefix>::total() const {
  const Level& top = levels_.back();
  double pairs[K];
  for (int j = 0; j < K; ++j) pairs[j] = top.totals[j];
  for (int width = K / 2; width >= 1; width /= 2) {
    for (int j = 0; j < width; ++j) pairs[j] += pairs[j + width];
  }
  return pairs[0];
}

// 16-byte SSE2 vectors of running sums and the lane masks their compares yield.
template <class Prefix>
struct Simd;
template <>
struct Simd<float> {
  typedef float Vec __attribute__((vector_size(16)));
  typedef std::int32_t Mask __attribute__((vector_size(16)));
};
template <>
struct Simd<double> {
  typedef double Vec __attribute__((vector_size(16)));
  typedef std::int64_t Mask __attribute__((vector_size(16)));
};

// Number of running sums in `group` that are <= `target`, with SSE2 vector compares in Prefix
// precision (GCC vector extensions), then corrected by exact double compares where rounding
// `target` to Prefix moved it across a running sum.
template <int K, class Prefix>
inline int count_not_above(const Prefix* group, double target) {
  constexpr int kLanes = static_cast<int>(16 / sizeof(Prefix));
  using Vec = typename Simd<Prefix>::Vec;
  using Mask = typename Simd<Prefix>::Mask;
  const Prefix narrow = static_cast<Prefix>(target);
  Vec threshold;
  for (int lane = 0; lane < kLanes; ++lane) threshold[lane] = narrow;
  Mask hits = {};
  for (int j = 0; j < K; j += kLanes) {
    Vec sums;
    std::memcpy(&sums, group + j, sizeof sums);
    hits += (sums <= threshold);  // lanes are 0 or -1
  }
  int count = 0;
  for (int lane = 0; lane < kLanes; ++lane) count -= static_cast<int>(hits[lane]);
  while (count < K && static_cast<double>(group[count]) <= target) ++count;
  while (count > 0 && static_cast<double>(group[count - 1]) > target) --count;
  return count;
}

// Picks the child of `group` holding mass fraction `fraction` of the group and rewrites
// `fraction` as the position inside that child. Children whose running sum does not grow (value
// 0) are never chosen: the chosen child c satisfies prefix[c-1] <= t < prefix[c].
template <int K, class Prefix>
std::size_t KarySumTree<K, Prefix>::choose_child(const Prefix* group, double& fraction) {
  const double total = static_cast<double>(group[K - 1]);
  const double target = fraction * total;
  int child = count_not_above<K, Prefix>(group, target);
  if (child >= K) {
    // target rounded up to the total: take the last child that adds mass.
    child = K - 1;
    while (child > 0 && group[child - 1] == group[K - 1]) --child;
  }
  const double lo = child > 0 ? static_cast<double>(group[child - 1]) : 0.0;
  const double width = static_cast<double>(group[child]) - lo;
  double inner = (target - lo) / width;
  if (!(inner < 1.0)) inner = kBelowOne;
  if (!(inner >= 0.0)) inner = 0.0;
  fraction = inner;
  return static_cast<std::size_t>(child);
}

template <int K, class Prefix>
void KarySumTree<K, Prefix>::sample_stratified(const double* uniforms, std::size_t count,
                                               std::size_t* leaves_out) const {
  const double stratum = 1.0 / static_cast<double>(count);
  double fraction[kChunk];
  std::size_t node[kChunk];
  for (std::size_t begin = 0; begin < count; begin += kChunk) {
    const std::size_t n = std::min(kChunk, count - begin);
    for (std::size_t b = 0; b < n; ++b) {
      const double f = (static_cast<double>(begin + b) + uniforms[begin + b]) * stratum;
      fraction[b] = f < 1.0 ? f : kBelowOne;
      node[b] = 0;
    }
    for (std::size_t level = levels_.size(); level-- > 0;) {
      const Prefix* prefix = levels_[level].prefix.get();
      const Prefix* below = level > 0 ? levels_[level - 1].prefix.get() : nullptr;
      for (std::size_t b = 0; b < n; ++b) {
        const std::size_t chosen = node[b] * K + choose_child(prefix + node[b] * K, fraction[b]);
        node[b] = chosen;
        if (below != nullptr) __builtin_prefetch(below + chosen * K);
      }
    }
    std::copy(node, node + n, leaves_out + begin);
  }
}

template <int K, class Prefix>
std::size_t KarySumTree<K, Prefix>::find(double fraction) const {
  double f = fraction < 1.0 ? std::max(fraction, 0.0) : kBelowOne;
  std::size_t node = 0;
  for (std::size_t level = levels_.size(); level-- > 0;) {
    node = node * K + choose_child(levels_[level].prefix.get() + node * K, f);
  }
  return node;
}

template <int K, class Prefix>
std::size_t KarySumTree<K, Prefix>::memory_bytes() const {
  std::size_t bytes = 0;
  for (const Level& level : levels_) {
    bytes += level.totals.size() * (sizeof(double) + sizeof(Prefix)) + level.marks.size();
  }
  return bytes;
}

template class KarySumTree<4, double>;
template class KarySumTree<8, double>;
template class KarySumTree<16, float>;
template class KarySumTree<16, double>;
template class KarySumTree<32, float>;

}  // namespace tagflow::replay
