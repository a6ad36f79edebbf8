// The per-process files of a traced run (tracing/README.md, "The files a traced run leaves"),
// read into memory: what the merge, the summary and the diff share.
//
// read_trace_file() reads one LOG_DIR/trace/PROCESS.trace.json with a streaming parser (a file
// holds up to hundreds of thousands of events; no document tree is built), puts each event's
// start on the coordinator host's clock (the file's clock_offset_ns added), turns the threads'
// ids into indexes of `threads`, and sorts the events by start. Names and peers repeat a great
// deal, so each distinct one is stored once per file: an event's `name` and `peer` view strings
// the file's `strings` own (copies of a ProcessTraceFile share them, so the views stay valid as
// long as any copy lives).
// read_trace_dir() reads every LOG_DIR/trace/*.trace.json, sorted by file name.
// Errors: TraceError naming the file (unreadable, not JSON, not the format, an event of a thread
// it does not list, a kind it does not know) or saying that the run was not traced.
// Thread-safety: values; the functions are reentrant.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "common/tag.hpp"
#include "common/trace_recorder.hpp"

namespace tagflow::tracing {

class TraceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Throws TraceError ("the WHAT PATH is not a regular file ...") unless `path` is one (a link to
/// one counts): a directory, a pipe or a device is refused before it is opened, so a named pipe
/// cannot make a reader wait for ever nor /dev/zero fill its memory.
void require_regular_file(const std::string& path, const std::string& what);

/// Throws TraceError unless `dir` is a directory: "no run directory DIR", or, for a file, "DIR is
/// not a directory: give the run directory" followed by `named_as` (" (LOG_DIR)", or "").
void require_run_directory(const std::string& dir, const std::string& named_as = "");

using trace::Kind;

struct TraceEvent {
  Kind kind = Kind::kReaction;
  std::uint32_t thread = 0;   // index into its file's threads
  std::int64_t start_ns = 0;  // on the coordinator host's clock
  std::int64_t duration_ns = 0;
  Tag tag = Tag::never();
  std::string_view name;  // owned by the file's strings
  std::string_view peer;
  std::uint32_t port = 0;
  std::uint64_t bytes = 0;

  [[nodiscard]] std::int64_t end_ns() const { return start_ns + duration_ns; }
  /// Control messages are instants; every other kind is a span (possibly of no duration).
  [[nodiscard]] bool is_span() const {
    return kind != Kind::kControlSend && kind != Kind::kControlReceive;
  }
  [[nodiscard]] bool has_real_tag() const { return !tag.is_never() && !tag.is_forever(); }
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
  std::vector<TraceEvent> events;  // by start
  /// Every distinct name and peer of the events, once.
  std::shared_ptr<std::unordered_set<std::string>> strings =
      std::make_shared<std::unordered_set<std::string>>();

  /// Who sends or receives on the event's thread: its federate, or "coordinator" on a thread
  /// that works for none (the coordinator's; the party of its control messages).
  [[nodiscard]] std::string_view party(const TraceEvent& event) const;
  /// `text` stored once in `strings`, for events made by hand (tests).
  std::string_view intern(std::string text);
};

/// One process's file; throws TraceError naming it.
[[nodiscard]] ProcessTraceFile read_trace_file(const std::string& path);

/// Every process's file of LOG_DIR (LOG_DIR/trace/*.trace.json), by file name; throws TraceError
/// when there is none (the run was not traced) or one cannot be read.
[[nodiscard]] std::vector<ProcessTraceFile> read_trace_dir(const std::string& log_dir);

/// "time_ns/microstep", "NEVER" or "FOREVER": a tag as the merged trace's args write it.
[[nodiscard]] std::string tag_text(const Tag& tag);

}  // namespace tagflow::tracing
