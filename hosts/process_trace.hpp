// ProcessTrace: a process's trace while it lives (the file's `trace:`, tracing/README.md), in
// either mode. The constructor starts the recorder (common/trace_recorder.hpp); the destructor
// stops it and writes DIR/PROCESS.trace.json, also when the process ends with an error (a failure
// to write is reported on stderr, never thrown). One per process at a time.
#pragma once

#include <cstddef>
#include <string>

namespace tagflow::hosts {

class ProcessTrace {
 public:
  ProcessTrace(const std::string& dir, const std::string& process, const std::string& host,
               std::size_t events_per_thread);
  ~ProcessTrace();
  ProcessTrace(const ProcessTrace&) = delete;
  ProcessTrace& operator=(const ProcessTrace&) = delete;

 private:
  std::string path_;
};

}  // namespace tagflow::hosts
