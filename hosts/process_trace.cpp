#include "hosts/process_trace.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <system_error>

#include "common/trace_recorder.hpp"

namespace tagflow::hosts {
namespace {

// The write end of the signal thread's pipe, for the handler; -1 while no ProcessTrace watches.
std::atomic<int> g_signal_pipe{-1};
std::atomic<int> g_signals{0};

/// Async-signal-safe: hands the signal to the signal thread; a second one ends the process at once.
extern "C" void on_trace_signal(int signal) {
  const int fd = g_signal_pipe.load();
  if (g_signals.fetch_add(1) > 0 || fd < 0) {
    ::signal(signal, SIG_DFL);
    ::raise(signal);
    return;
  }
  const char byte = static_cast<char>(signal);
  (void)!::write(fd, &byte, 1);
}

}  // namespace

ProcessTrace::ProcessTrace(const std::string& dir, const std::string& process,
                           const std::string& host, std::size_t events_per_thread,
                           bool write_on_signal)
    : path_(dir + "/" + process + ".trace.json") {
  std::filesystem::create_directories(dir);
  trace::TraceRecorder::start({process, host, events_per_thread});
  if (!write_on_signal) return;
  if (::pipe2(pipe_, O_CLOEXEC) != 0) {
    throw std::system_error(errno, std::generic_category(), "the trace's signal pipe");
  }
  g_signals.store(0);
  g_signal_pipe.store(pipe_[1]);
  watcher_ = std::thread([this] { watch_signals(); });
  struct sigaction action {};
  action.sa_handler = on_trace_signal;
  ::sigemptyset(&action.sa_mask);
  ::sigaction(SIGTERM, &action, &old_term_);
  ::sigaction(SIGINT, &action, &old_int_);
}

ProcessTrace::~ProcessTrace() {
  write_once();
  if (!watcher_.joinable()) return;
  ::sigaction(SIGTERM, &old_term_, nullptr);
  ::sigaction(SIGINT, &old_int_, nullptr);
  g_signal_pipe.store(-1);
  const char stop = 0;
  (void)!::write(pipe_[1], &stop, 1);
  watcher_.join();
  ::close(pipe_[0]);
  ::close(pipe_[1]);
}

void ProcessTrace::write_once() {
  const std::lock_guard<std::mutex> lock(write_mutex_);
  if (written_) return;
  written_ = true;
  trace::TraceRecorder* const tracer = trace::active();
  trace::TraceRecorder::stop();
  if (tracer == nullptr) return;
  try {
    tracer->write(path_);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "the trace could not be written: %s\n", e.what());
  }
}

void ProcessTrace::watch_signals() {
  char byte = 0;
  for (;;) {
    const ssize_t n = ::read(pipe_[0], &byte, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || byte == 0) return;
    break;
  }
  const int signal = byte;
  write_once();
  end_by_signal(signal);  // as the signal would have without the handler
}

void end_by_signal(int signal) {
  ::signal(signal, SIG_DFL);
  sigset_t set;
  ::sigemptyset(&set);
  ::sigaddset(&set, signal);
  ::pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
  ::raise(signal);
  ::_exit(128 + signal);
}

}  // namespace tagflow::hosts
