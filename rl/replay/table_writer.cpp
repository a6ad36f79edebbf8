#include "rl/replay/table_writer.hpp"

namespace tagflow::replay {

TableWriter::~TableWriter() { end_episode(); }

ReplayStatus TableWriter::insert(const Transition& transition, double priority,
                                 std::chrono::milliseconds timeout, ItemKey* key) {
  return table_.insert_impl(transition, priority, timeout, true, key, &stream_);
}

ReplayStatus TableWriter::try_insert(const Transition& transition, double priority, ItemKey* key) {
  return table_.insert_impl(transition, priority, std::chrono::milliseconds(0), false, key,
                            &stream_);
}

void TableWriter::end_episode() { table_.release_stream(stream_); }

}  // namespace tagflow::replay
