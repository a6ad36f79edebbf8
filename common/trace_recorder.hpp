// TraceRecorder: what one process did, event by event, for the run's timeline (tracing/README.md
// gives the file it writes and what each kind of event means).
//
// Off by default. While no recorder is started, trace::active() is a null pointer and every
// recording site costs one relaxed load and a branch:
//   if (trace::TraceRecorder* t = trace::active()) t->record({...});
// or, for a span, a trace::Span on the stack (which checks the same pointer).
//
// Each thread records into a ring of its own (`events_per_thread` events, the latest kept; what
// was overwritten is counted as dropped), so memory is bounded by threads × events × 64 bytes and
// threads never contend: a ring's mutex is taken by its thread for each event and by write()
// once. Names (reactions, federates, message names) are interned once into a table of strings;
// an event holds their indexes. Timestamps are CLOCK_REALTIME nanoseconds, comparable between
// the processes of one host; the launcher aligns hosts (tracing/README.md).
//
// Use: TraceRecorder::start({...}) once in a process, name_thread() on each thread that records
// (optional), record() or Span anywhere, write(path) at the end, then stop(). Thread-safety:
// record(), intern() and name_thread() from any thread; start(), write() and stop() from one
// thread while the recording threads are quiet (write() copies each ring under its mutex, so a
// thread still recording only loses or adds its latest events).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/tag.hpp"

namespace tagflow::trace {

enum class Kind : std::uint8_t {
  kReaction,
  kWaitGrant,
  kWaitData,
  kWaitTime,
  kWaitSocket,
  kSend,
  kReceive,
  kControlSend,
  kControlReceive,
  kCheckpoint,
  kHandler,
};

/// `text` as a JSON string (quotes, backslashes and control characters escaped; other bytes, UTF-8
/// included, as they are) appended to `out`.
void append_json_string(std::string& out, std::string_view text);

/// The kind's name in the trace file ("reaction", "wait_grant", ...).
[[nodiscard]] const char* kind_name(Kind kind);

struct Event {
  Kind kind = Kind::kReaction;
  std::int64_t start_ns = 0;
  std::int64_t duration_ns = 0;
  Tag tag = Tag::never();
  std::uint32_t name = 0;  // interned; 0 is ""
  std::uint32_t peer = 0;  // interned; 0 is ""
  std::uint32_t port = 0;
  std::uint64_t bytes = 0;
};

struct TraceOptions {
  std::string process;  // the process's name in the cluster file ("coordinator" for it)
  std::string host;     // its host's name, "" on a one-host cluster
  std::size_t events_per_thread = 200'000;
};

class TraceRecorder {
 public:
  /// Starts recording in this process; replaces a recorder started before (tests).
  static TraceRecorder& start(TraceOptions options);
  /// Stops recording; events recorded after this are not kept. The recorder stays alive (a
  /// thread may still hold it) until the next start() or the process's end.
  static void stop();

  /// Now, on the trace's clock (CLOCK_REALTIME ns).
  [[nodiscard]] static std::int64_t now_ns() noexcept;

  /// The index of `text` in the table of names (the same text, the same index).
  std::uint32_t intern(std::string_view text);
  /// Names the calling thread in the trace ("sampler-0 worker 0") and the federate it works for.
  void name_thread(const std::string& name, const std::string& federate);
  /// Records `event` in the calling thread's ring.
  void record(const Event& event);
  /// Records an instant (duration 0) now.
  void instant(Kind kind, Tag tag, std::uint32_t name, std::uint32_t peer, std::uint32_t port = 0,
               std::uint64_t bytes = 0) {
    record({kind, now_ns(), 0, tag, name, peer, port, bytes});
  }

  /// Writes the process's file (tracing/README.md: PROCESS.trace.json) atomically to `path`.
  /// Throws AtomicFileError when it cannot be written.
  void write(const std::string& path);
  [[nodiscard]] const TraceOptions& options() const { return options_; }
  /// The events held now, over every thread, and those overwritten (for tests and reports).
  [[nodiscard]] std::size_t held() const;
  [[nodiscard]] std::uint64_t dropped() const;

  explicit TraceRecorder(TraceOptions options);
  TraceRecorder(const TraceRecorder&) = delete;
  TraceRecorder& operator=(const TraceRecorder&) = delete;

 private:
  struct Ring {
    std::mutex mutex;
    std::vector<Event> events;  // capacity events_per_thread
    std::uint64_t written = 0;  // events ever recorded; the slot of the next is written % size
    std::string name;
    std::string federate;
  };
  Ring& this_thread_ring();

  TraceOptions options_;
  std::uint64_t generation_;
  mutable std::mutex mutex_;  // guards rings_ (the list, not a ring's events), names_, index_
  std::vector<std::unique_ptr<Ring>> rings_;
  std::vector<std::string> names_;
  std::unordered_map<std::string, std::uint32_t> index_;
};

namespace detail {
inline std::atomic<TraceRecorder*> g_active{nullptr};
}  // namespace detail

/// The recorder of this process, or nullptr when it does not trace (the one branch paid).
inline TraceRecorder* active() noexcept { return detail::g_active.load(std::memory_order_acquire); }

/// The interned ids of the names one object records under (itself, its peers), looked up once
/// per recorder: the hot paths (a data message, a control message) pay a map lookup, not the
/// recorder's mutex. Not thread-safe: one per thread of use.
class NameCache {
 public:
  std::uint32_t id(TraceRecorder& recorder, const std::string& name) {
    if (&recorder != recorder_) {
      ids_.clear();
      recorder_ = &recorder;
    }
    const auto it = ids_.find(name);
    if (it != ids_.end()) return it->second;
    const std::uint32_t id = recorder.intern(name);
    ids_.emplace(name, id);
    return id;
  }

 private:
  TraceRecorder* recorder_ = nullptr;
  std::unordered_map<std::string, std::uint32_t> ids_;
};

/// A span recorded when it ends, if the process traces when it begins; set the fields that are
/// only known at the end (bytes, peer) on event() before.
class Span {
 public:
  Span(Kind kind, Tag tag, std::uint32_t name = 0, std::uint32_t peer = 0) : recorder_(active()) {
    if (recorder_ != nullptr) {
      event_.kind = kind;
      event_.tag = tag;
      event_.name = name;
      event_.peer = peer;
      event_.start_ns = TraceRecorder::now_ns();
    }
  }
  ~Span() {
    if (recorder_ != nullptr) {
      event_.duration_ns = TraceRecorder::now_ns() - event_.start_ns;
      recorder_->record(event_);
    }
  }
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;
  [[nodiscard]] bool on() const { return recorder_ != nullptr; }
  Event& event() { return event_; }

 private:
  TraceRecorder* recorder_;
  Event event_;
};

}  // namespace tagflow::trace
