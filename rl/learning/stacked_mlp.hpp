// StackedMlp: several MLPs of one shape evaluated together — their weights stacked into one tensor
// per layer, every policy's rows computed in one pass per layer, not a loop of forward passes. The
// multi-policy inference server stacks the policies it hosts this way
// (nodes/inference/policy_bank.hpp). The first layer sums, for each row, its slot's weight rows
// scaled by the row's non-zero inputs only (multi-agent observations are mostly zeros: a
// TrafficJunction10 row sets a few dozen of its 1,350 floats); the other layers are one batched
// matrix product each: ATen's baddbmm, or for a product of fewer than 400 multiply-adds (a policy's
// 64 → 2 output layer) a loop here that does ATen's small-product arithmetic in its order, so
// the same bits without ATen's per-call cost.
//
// Each slot holds one MLP (MlpSpec layout, init_mlp_parameters(spec, seed) until load()) and a
// fixed number of input rows, `rows_per_slot`: a call evaluates slots × rows_per_slot rows, so the
// shapes of every product, and with them the numbers, never depend on how many rows are in use.
// Rows not in use may hold anything; their results are ignored.
//
// A pass allocates no tensor: each layer writes over its output of the pass before (kept while
// the row count stays the same). So not thread-safe, not even the const calls: one caller at a
// time. Errors: std::invalid_argument for an invalid spec, a slot out of range or parameters of
// the wrong length.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "common/sparse_floats.hpp"
#include "rl/learning/mlp_spec.hpp"

namespace tagflow::learning {

class StackedMlp {
 public:
  StackedMlp(const MlpSpec& spec, std::size_t slots, std::int64_t rows_per_slot,
             std::uint64_t seed = 0);
  ~StackedMlp();
  StackedMlp(StackedMlp&&) noexcept;
  StackedMlp& operator=(StackedMlp&&) noexcept;
  StackedMlp(const StackedMlp&) = delete;
  StackedMlp& operator=(const StackedMlp&) = delete;

  /// Replaces slot `slot`'s parameters (MlpSpec layout).
  void load(std::size_t slot, const std::vector<float>& parameters);
  /// Scores of every row: `inputs` holds slots × rows_per_slot × input_size floats (slot-major),
  /// the result slots × rows_per_slot × output_size.
  [[nodiscard]] std::vector<float> scores(const float* inputs) const;
  /// The argmax (ties: lowest) of every row into `actions` (slots × rows_per_slot entries).
  void act(const float* inputs, std::int64_t* actions) const;
  /// The same with `rows` rows per slot instead of rows_per_slot (inputs slots × rows × input
  /// size, actions slots × rows): for callers that need throughput, not shapes fixed for
  /// reproducible numbers. std::invalid_argument for rows < 1.
  void act(const float* inputs, std::int64_t rows, std::int64_t* actions) const;
  /// act() with one row per slot, given as the non-zero floats of a longer array (a sparse
  /// AgentObservations frame's, read in place): slot s's row is that array's floats first + s ×
  /// input_size up to first + (s + 1) × input_size. The actions are those act(dense, 1, ...) gives
  /// for the same floats; `actions` gets slots entries.
  void act(const SparseFloats& inputs, std::size_t first, std::int64_t* actions) const;

  [[nodiscard]] const MlpSpec& spec() const { return spec_; }
  [[nodiscard]] std::size_t slots() const { return slots_; }
  [[nodiscard]] std::int64_t rows_per_slot() const { return rows_; }

 private:
  struct Impl;
  MlpSpec spec_;
  std::size_t slots_;
  std::int64_t rows_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tagflow::learning
