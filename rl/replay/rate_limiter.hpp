// RateLimiter: when a table may accept inserts and serve samples (Reverb's MinSize and
// SampleToInsertRatio limiters in one).
//
// Rules, with diff = inserts · samples_per_insert − sampled_items:
//   1. No sample while the table holds fewer than min_size_to_sample items.
//   2. With samples_per_insert > 0, a sample (of any batch size) is allowed while
//      diff ≥ min_diff = samples_per_insert · min_size_to_sample − error_buffer, and an insert
//      while diff + samples_per_insert ≤ max_diff = samples_per_insert · min_size_to_sample +
//      error_buffer, or whenever the table holds fewer than min_size_to_sample items.
//   3. samples_per_insert = 0 disables rule 2 (only the minimum size applies).
// A whole batch is checked once, before it is drawn, so batches larger than the tolerance still
// make progress. The constructor requires 2 · error_buffer ≥ samples_per_insert, which makes
// sure that, once the table holds min_size_to_sample items, inserts or samples are always
// allowed (no deadlock between one inserter and one sampler).
//
// A pure counter with no waiting and no locking: Table calls it under its mutex and does the
// blocking. Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tagflow::replay {

struct RateLimiterConfig {
  std::size_t min_size_to_sample = 1;
  double samples_per_insert = 0.0;
  double error_buffer = 0.0;
};

class RateLimiter {
 public:
  /// Throws std::invalid_argument on a negative or non-finite field, or when
  /// 2 · error_buffer < samples_per_insert.
  explicit RateLimiter(RateLimiterConfig config);

  [[nodiscard]] const RateLimiterConfig& config() const { return config_; }
  [[nodiscard]] bool can_insert(std::size_t table_size) const;
  [[nodiscard]] bool can_sample(std::size_t table_size) const;
  void record_insert() { ++inserts_; }
  void record_sample(std::size_t items) { sampled_items_ += items; }

  [[nodiscard]] std::uint64_t inserts() const { return inserts_; }
  [[nodiscard]] std::uint64_t sampled_items() const { return sampled_items_; }
  /// Sets both counters (checkpoint restore).
  void restore(std::uint64_t inserts, std::uint64_t sampled_items);

 private:
  [[nodiscard]] double diff() const;

  RateLimiterConfig config_;
  std::uint64_t inserts_ = 0;
  std::uint64_t sampled_items_ = 0;
};

}  // namespace tagflow::replay
