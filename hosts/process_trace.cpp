#include "hosts/process_trace.hpp"

#include <cstdio>
#include <exception>
#include <filesystem>

#include "common/trace_recorder.hpp"

namespace tagflow::hosts {

ProcessTrace::ProcessTrace(const std::string& dir, const std::string& process,
                           const std::string& host, std::size_t events_per_thread)
    : path_(dir + "/" + process + ".trace.json") {
  std::filesystem::create_directories(dir);
  trace::TraceRecorder::start({process, host, events_per_thread});
}

ProcessTrace::~ProcessTrace() {
  trace::TraceRecorder* const tracer = trace::active();
  trace::TraceRecorder::stop();
  if (tracer == nullptr) return;
  try {
    tracer->write(path_);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "the trace could not be written: %s\n", e.what());
  }
}

}  // namespace tagflow::hosts
