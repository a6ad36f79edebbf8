// ProcessTrace: a process's trace while it lives (the file's `trace:`, tracing/README.md), in
// either mode. The constructor starts the recorder (common/trace_recorder.hpp); the destructor
// stops it and writes DIR/PROCESS.trace.json, also when the process ends with an error (a failure
// to write is reported on stderr, never thrown). One per process at a time.
//
// With `write_on_signal` (the reactor-mode nodes and coordinator, which do not stop on a signal
// by themselves) SIGTERM and SIGINT write the file too, from a thread of its own while the other
// threads may still record (a thread still recording only loses or adds its latest events), then
// end the process by that signal as before: its exit status and how its launcher reports it do
// not change. A second signal while the file is written ends the process at once. The handlers in
// place before come back when the ProcessTrace ends.
#pragma once

#include <csignal>
#include <cstddef>
#include <mutex>
#include <string>
#include <thread>

namespace tagflow::hosts {

class ProcessTrace {
 public:
  ProcessTrace(const std::string& dir, const std::string& process, const std::string& host,
               std::size_t events_per_thread, bool write_on_signal = false);
  ~ProcessTrace();
  ProcessTrace(const ProcessTrace&) = delete;
  ProcessTrace& operator=(const ProcessTrace&) = delete;

 private:
  /// Stops the recorder and writes the file, once: the first caller writes, the others wait for
  /// it and return.
  void write_once();
  /// The signal thread: waits for a signal's byte (or 0: the ProcessTrace ends).
  void watch_signals();

  std::string path_;
  std::mutex write_mutex_;
  bool written_ = false;  // guarded by write_mutex_
  int pipe_[2] = {-1, -1};
  struct sigaction old_term_ {};
  struct sigaction old_int_ {};
  std::thread watcher_;
};

/// Ends the process by `signal` as the signal's default action would (its exit status and how a
/// launcher reports it are those of the signal): for a handler that did its work first.
[[noreturn]] void end_by_signal(int signal);

}  // namespace tagflow::hosts
