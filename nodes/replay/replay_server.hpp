// ReplayServer: the replay node's logic — one replay table (rl/replay) fed by transition
// batches, sampled into minibatches by a count-based rate limiter, updated with priorities.
// No threads, no sockets, no clock: a binding calls insert() / due_batches() / update().
//
// Rate limit (counts only, so a run is deterministic): nothing is sampled before the table
// holds min_size items; from then on every inserted transition earns samples_per_insert sample
// credits, and due_batches() returns as many batch_size minibatches as the credits pay for
// (at most max_batches_per_call; the rest stays owed for the next call).
//
// Errors: ParamError for a bad param (naming it); std::invalid_argument for transitions whose
// observation size does not match the first ones. Not thread-safe (the table is, but the
// credit counters are not): one caller at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nodes/messages.hpp"
#include "nodes/node_params.hpp"

namespace tagflow::replay {
class Table;
}

namespace tagflow::nodes {

struct ReplayConfig {
  std::size_t capacity = 50000;
  bool prioritized = false;  // params selector: uniform | prioritized
  double priority_exponent = 0.6;
  double importance_beta = 0.4;
  std::size_t min_size = 1000;
  double samples_per_insert = 8.0;
  std::size_t batch_size = 64;
  std::size_t max_batches_per_call = 4;
  std::uint64_t seed = 1;

  /// Reads capacity, selector, priority_exponent, importance_beta, min_size,
  /// samples_per_insert, batch_size, max_batches_per_call.
  static ReplayConfig from_params(const NodeParams& params, std::uint64_t seed);
};

class ReplayServer {
 public:
  /// The table is created on the first insert, when the observation size is known.
  explicit ReplayServer(const ReplayConfig& config);
  ~ReplayServer();
  ReplayServer(const ReplayServer&) = delete;
  ReplayServer& operator=(const ReplayServer&) = delete;

  void insert(const TransitionsMessage& transitions);
  /// The minibatches the rate limiter allows now (possibly none).
  [[nodiscard]] std::vector<SampleBatchMessage> due_batches();
  /// New priorities for sampled keys (prioritized tables; keys evicted since are ignored).
  void update(const PriorityUpdateMessage& update);

  [[nodiscard]] const ReplayConfig& config() const { return config_; }
  [[nodiscard]] std::size_t size() const;
  [[nodiscard]] std::uint64_t inserts() const { return inserts_; }
  [[nodiscard]] std::uint64_t batches_sampled() const { return batches_; }

 private:
  ReplayConfig config_;
  std::unique_ptr<replay::Table> table_;
  std::uint32_t observation_size_ = 0;
  std::uint64_t inserts_ = 0;
  std::uint64_t batches_ = 0;
  double credits_ = 0.0;
};

}  // namespace tagflow::nodes
