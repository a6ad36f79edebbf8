// EpisodeReturns: the returns of one env replica's finished episodes, in memory that does not grow
// with the run. It counts every episode and keeps the returns of the first kFirst (where a
// learning curve starts) and of the latest kLatest (where it stands now): at most 16 KB of
// returns, however long a sampler or a multi-agent service runs. Every placement and mode keeps
// the same ones, so the kept returns of one file and seed are the same in all of them.
//
// Checkpoints: save() writes a marker (a u64 of all ones), the count, the first and the latest
// returns. load() also reads the layout checkpoints held before the bound (a plain vector of
// every return): a run checkpointed by an older version resumes, keeping what the bound keeps.
// Not thread-safe: one owner, or a lock around it (nodes/replica_report.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "common/state_stream.hpp"

namespace tagflow::nodes {

class EpisodeReturns {
 public:
  static constexpr std::size_t kFirst = 1000;
  static constexpr std::size_t kLatest = 1000;

  void add(double episode_return);
  void add(const std::vector<double>& returns);

  /// Every finished episode.
  [[nodiscard]] std::int64_t count() const { return count_; }
  [[nodiscard]] bool empty() const { return count_ == 0; }
  /// The newest episode's return (0 before the first).
  [[nodiscard]] double last() const;
  /// The kept returns in completion order: every one while count() ≤ kFirst + kLatest, else the
  /// first kFirst followed by the latest kLatest (the episodes between them left out).
  [[nodiscard]] std::vector<double> kept() const;

  void save(StateWriter& out) const;
  void load(StateReader& in);

 private:
  std::int64_t count_ = 0;
  std::vector<double> first_;  // the first kFirst
  std::deque<double> latest_;  // the latest kLatest after those
};

}  // namespace tagflow::nodes
