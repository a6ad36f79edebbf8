// ExperienceQueue: transitions an inference service gateway logged for outside clients
// (PROTOCOL.md §4.3), waiting for the inference replica's binding to send them on its
// `experience` port (into the replays of their policies).
//
// Bounded: at most max_rows rows queued over all policies; try_push() refuses a message that
// would go beyond (the gateway drops it and counts it). take() hands over everything queued,
// merged into one message per policy (ascending), and empties the queue.
// Thread-safety: every method may be called from any thread (one mutex; the gateway thread pushes,
// the replica's reaction or actor takes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "nodes/messages.hpp"

namespace tagflow::gateway {

class ExperienceQueue {
 public:
  explicit ExperienceQueue(std::size_t max_rows) : max_rows_(max_rows) {}

  /// Queues the rows of `transitions` for policy `policy`; false (nothing queued) when they would
  /// take the queue past max_rows.
  [[nodiscard]] bool try_push(int policy, const nodes::TransitionsMessage& transitions);
  /// Everything queued, one message per policy (ascending policy index); the queue is then empty.
  [[nodiscard]] std::vector<std::pair<int, nodes::TransitionsMessage>> take();
  /// Rows queued now.
  [[nodiscard]] std::size_t rows() const;
  [[nodiscard]] std::size_t max_rows() const { return max_rows_; }

 private:
  const std::size_t max_rows_;
  mutable std::mutex mutex_;
  std::map<int, nodes::TransitionsMessage> queued_;  // guarded by mutex_
  std::size_t rows_ = 0;                             // guarded by mutex_
};

}  // namespace tagflow::gateway
