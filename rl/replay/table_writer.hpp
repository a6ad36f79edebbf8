// TableWriter: inserts the consecutive transitions of one episode stream, storing each
// observation frame once.
//
// In a stream, the next_observation of one transition is usually the observation of the next.
// TableWriter keeps a reference to the frame it stored last as next_observation; when the next
// transition's observation has the same bytes, the table points the new item at that frame
// instead of storing a second copy (halving memory for image observations). The comparison is on
// bytes, so a stream that does not continue (a reset) simply stores a new frame.
//
// Ownership: refers to a Table that must outlive it. Thread-safety: one writer per thread (it is
// not thread-safe itself); any number of writers and samplers may use one table at once.
#pragma once

#include <chrono>

#include "rl/replay/table.hpp"

namespace tagflow::replay {

class TableWriter {
 public:
  explicit TableWriter(Table& table) : table_(table) {}
  ~TableWriter();
  TableWriter(const TableWriter&) = delete;
  TableWriter& operator=(const TableWriter&) = delete;

  /// As Table::insert, sharing the observation frame with the previous next_observation when
  /// their bytes are equal.
  [[nodiscard]] ReplayStatus insert(const Transition& transition, double priority,
                                    std::chrono::milliseconds timeout = kWaitForever,
                                    ItemKey* key = nullptr);
  [[nodiscard]] ReplayStatus try_insert(const Transition& transition, double priority,
                                        ItemKey* key = nullptr);
  /// Forgets the previous next_observation (call at an episode boundary; optional).
  void end_episode();

 private:
  Table& table_;
  Table::Stream stream_;  // guarded by the table's mutex while a call runs
};

}  // namespace tagflow::replay
