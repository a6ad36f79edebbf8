// merge_traces(): every process's file of a traced run (trace_files.hpp) into one Chrome trace,
// LOG_DIR/trace.json, which Perfetto and chrome://tracing open (tracing/README.md gives its
// shape): a process track per process, a thread track per recording thread, spans as complete
// events, instants, and a flow arrow from each message's send to its receive.
// Errors: TraceError (no trace, an unreadable file); AtomicFileError when trace.json cannot be
// written. Thread-safety: reentrant.
#pragma once

#include <cstdint>
#include <string>

namespace tagflow::tracing {

struct MergeReport {
  std::string path;  // LOG_DIR/trace.json
  std::size_t processes = 0;
  std::size_t threads = 0;
  std::size_t events = 0;
  std::size_t data_flows = 0;     // data messages whose send and receive are both held
  std::size_t control_flows = 0;  // control messages (and COMPLETED notices) likewise
  std::size_t unmatched = 0;      // sends or receives whose other end is not held
  std::uint64_t dropped = 0;      // events the processes' rings no longer held
  std::int64_t max_clock_error_ns = 0;
};

[[nodiscard]] MergeReport merge_traces(const std::string& log_dir);

}  // namespace tagflow::tracing
