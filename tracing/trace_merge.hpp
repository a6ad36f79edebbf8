// merge_traces(): every process's file of a traced run (trace_files.hpp) into one Chrome trace,
// LOG_DIR/trace.json, which Perfetto and chrome://tracing open (tracing/README.md gives its
// shape): a process track per process, a thread track per recording thread, spans as complete
// events, instants, and a flow arrow from each message's send to its receive.
//
// The file is written as it is produced (through an AtomicFile, a megabyte at a time), so a run of
// a million events needs memory for its events, not for a document tree of the output. Matching:
// a data message's two ends share (sender, receiver, port, tag); a control message's share
// (sender, receiver, name, tag) and pair in the order they were recorded, a receive with the
// earliest unpaired send recorded before it (within the two hosts' clock error), so a send that
// a ring dropped leaves its receive unmatched instead of shifting every pair after it (a key with
// one send and one receive pairs them whatever the clocks say).
// Errors: TraceError (no trace, an unreadable file); AtomicFileError when trace.json cannot be
// written (the old file, if any, is left as it was). Thread-safety: reentrant.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tracing/trace_files.hpp"

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

/// Reads LOG_DIR/trace/*.trace.json and writes LOG_DIR/trace.json.
[[nodiscard]] MergeReport merge_traces(const std::string& log_dir);

/// The same from files already read, written to `path`.
[[nodiscard]] MergeReport merge_trace_files(const std::vector<ProcessTraceFile>& files,
                                            const std::string& path);

}  // namespace tagflow::tracing
