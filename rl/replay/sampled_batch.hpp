// SampledBatch: what Table::sample fills in, laid out for a learner to wrap without copying
// (for example with torch::from_blob over observations.data()).
//
// A value type with no reference to the table: it stays valid after the items it holds were
// evicted. Reuse one SampledBatch across calls to avoid reallocations (sample resizes, it does
// not shrink capacity). Not thread-safe; one per sampling thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "rl/replay/item.hpp"

namespace tagflow::replay {

/// What to sample. `importance_beta` is the β of prioritized replay (Schaul et al. 2016); the
/// learner anneals it by passing a new value on each call. Ignored by non-prioritized selectors,
/// whose weights are all 1.
struct SampleRequest {
  std::size_t batch_size = 32;
  double importance_beta = 0.4;
};

struct SampledBatch {
  std::size_t batch_size = 0;
  /// Number of items in the table when the batch was drawn.
  std::size_t table_size = 0;

  // Per sampled item, index b in [0, batch_size). The same key may appear more than once.
  std::vector<ItemKey> keys;
  /// Probability with which item b was selected by this draw (priority^α / Σ priority^α for the
  /// prioritized selector, 1/size for uniform, 1 for FIFO and LIFO).
  std::vector<double> probabilities;
  /// Importance weights (size · probability)^(−β) divided by the largest in the batch, so that the
  /// largest weight is 1. All 1 for non-prioritized selectors.
  std::vector<float> weights;
  /// Priorities as last set (before the exponent). 0 for non-prioritized selectors' items
  /// inserted without one.
  std::vector<double> priorities;
  /// How many times item b had been sampled, this draw included.
  std::vector<std::uint32_t> times_sampled;

  // Transition fields, row b at offset b · (field bytes). Element types are those of the table's
  // TransitionSpec; rewards float32, dones 0 or 1.
  std::vector<std::uint8_t> observations;
  std::vector<std::uint8_t> actions;
  std::vector<float> rewards;
  std::vector<std::uint8_t> dones;
  std::vector<std::uint8_t> next_observations;

  /// The observation rows viewed as T (T must match the table's observation dtype).
  template <class T>
  const T* observations_as() const {
    return reinterpret_cast<const T*>(observations.data());
  }
  template <class T>
  const T* next_observations_as() const {
    return reinterpret_cast<const T*>(next_observations.data());
  }
  template <class T>
  const T* actions_as() const {
    return reinterpret_cast<const T*>(actions.data());
  }
};

}  // namespace tagflow::replay
