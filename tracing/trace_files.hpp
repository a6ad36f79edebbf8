// The per-process files of a traced run (tracing/README.md, "The files a traced run leaves"),
// read into memory: what the merge, the summary and the diff share.
//
// read_trace_dir() reads every LOG_DIR/trace/*.trace.json; each event's start is put on the
// coordinator host's clock (the file's clock_offset_ns added). Errors: TraceError naming the file
// (unreadable, not JSON, not the format) or saying that the run was not traced.
// Thread-safety: values; functions are pure apart from reading files.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/tag.hpp"

namespace tagflow::tracing {

class TraceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct TraceEvent {
  std::string kind;           // "reaction", "wait_grant", ... (the file's names)
  std::int64_t start_ns = 0;  // on the coordinator host's clock
  std::int64_t duration_ns = 0;
  std::size_t thread = 0;  // index into its process's threads
  Tag tag = Tag::never();
  std::string name;
  std::string peer;
  std::uint32_t port = 0;
  std::uint64_t bytes = 0;

  [[nodiscard]] std::int64_t end_ns() const { return start_ns + duration_ns; }
};

struct TraceThread {
  std::string name;
  std::string federate;  // "" for none
};

struct ProcessTraceFile {
  std::string path;
  std::string process;
  std::string host;
  std::int64_t pid = 0;
  std::int64_t clock_offset_ns = 0;
  std::int64_t clock_error_ns = 0;
  std::uint64_t dropped = 0;
  std::vector<TraceThread> threads;
  std::vector<TraceEvent> events;
};

/// One process's file; throws TraceError naming it.
[[nodiscard]] ProcessTraceFile read_trace_file(const std::string& path);

/// Every process's file of LOG_DIR (LOG_DIR/trace/*.trace.json), by process name; throws
/// TraceError when there is none (the run was not traced) or one cannot be read.
[[nodiscard]] std::vector<ProcessTraceFile> read_trace_dir(const std::string& log_dir);

}  // namespace tagflow::tracing
