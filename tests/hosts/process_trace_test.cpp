// ProcessTrace (hosts/process_trace.hpp): the trace file of a process that ends on its own, and of
// a reactor-mode process that SIGTERM or SIGINT stops while a worker still records: the file is
// written and the process still dies of the signal.
#include "hosts/process_trace.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/tag.hpp"
#include "common/trace_recorder.hpp"

namespace tagflow::hosts {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

fs::path fresh_dir(const std::string& name) {
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("process_trace_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(dir);
  return dir;
}

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

/// A child process that traces with write_on_signal, a worker recording a reaction every 100 µs
/// until the end; it tells the parent (one byte on `ready`) once the worker recorded, then waits
/// to be signalled. Never returns.
[[noreturn]] void traced_child(const fs::path& dir, int ready) {
  ProcessTrace trace(dir.string(), "sampler-0", "", 1000, true);
  std::atomic<int> recorded{0};
  std::thread worker([&] {
    trace::active()->name_thread("sampler-0 worker 0", "sampler-0");
    for (std::int64_t t = 1;; ++t) {
      if (trace::TraceRecorder* tracer = trace::active()) {
        tracer->record(
            {trace::Kind::kReaction, trace::TraceRecorder::now_ns(), 1, Tag(t, 0), 0, 0, 0, 0});
      }
      recorded.fetch_add(1);
      std::this_thread::sleep_for(100us);
    }
  });
  while (recorded.load() < 10) std::this_thread::sleep_for(1ms);
  const char byte = 1;
  (void)!::write(ready, &byte, 1);
  for (;;) ::pause();
}

/// Runs traced_child, sends it `signal` once its worker records; its wait status.
int signal_traced_child(const fs::path& dir, int signal) {
  int ready[2];
  if (::pipe(ready) != 0) return -1;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(ready[0]);
    traced_child(dir, ready[1]);
  }
  ::close(ready[1]);
  char byte = 0;
  const bool started = ::read(ready[0], &byte, 1) == 1;
  ::close(ready[0]);
  if (started)
    ::kill(pid, signal);
  else
    ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return started ? status : -1;
}

TEST(ProcessTrace, SigtermWritesTheTraceWhileAWorkerRecordsAndTheProcessStillDiesOfIt) {
  for (const int signal : {SIGTERM, SIGINT}) {
    const fs::path dir = fresh_dir("signal" + std::to_string(signal));
    const int status = signal_traced_child(dir, signal);
    ASSERT_NE(status, -1) << "the child never recorded";
    ASSERT_TRUE(WIFSIGNALED(status)) << "exit status " << WEXITSTATUS(status);
    EXPECT_EQ(WTERMSIG(status), signal);
    const nlohmann::json written = read_json(dir / "sampler-0.trace.json");
    EXPECT_EQ(written.at("process"), "sampler-0");
    ASSERT_EQ(written.at("threads").size(), 1U);
    EXPECT_EQ(written["threads"][0]["name"], "sampler-0 worker 0");
    EXPECT_GE(written.at("events").size(), 10U);
    for (const auto& entry : fs::directory_iterator(dir)) {  // no temporary file left
      EXPECT_EQ(entry.path().filename(), "sampler-0.trace.json");
    }
    fs::remove_all(dir);
  }
}

std::atomic<int> g_own_handler_calls{0};
extern "C" void own_handler(int /*signal*/) { g_own_handler_calls.fetch_add(1); }

TEST(ProcessTrace, AnEndWithoutSignalWritesTheFileAndGivesTheHandlersBack) {
  struct sigaction own {};
  own.sa_handler = own_handler;
  ::sigemptyset(&own.sa_mask);
  struct sigaction before_term {};
  struct sigaction before_int {};
  ASSERT_EQ(::sigaction(SIGTERM, &own, &before_term), 0);
  ASSERT_EQ(::sigaction(SIGINT, &own, &before_int), 0);
  const fs::path dir = fresh_dir("end");
  {
    ProcessTrace trace(dir.string(), "coordinator", "", 100, true);
    trace::active()->record({trace::Kind::kControlSend, 5, 0, Tag(1, 0), 0, 0, 0, 0});
  }
  EXPECT_EQ(trace::active(), nullptr);
  const nlohmann::json written = read_json(dir / "coordinator.trace.json");
  EXPECT_EQ(written.at("events").size(), 1U);
  struct sigaction now {};
  ASSERT_EQ(::sigaction(SIGTERM, nullptr, &now), 0);
  EXPECT_EQ(now.sa_handler, own_handler);
  ASSERT_EQ(::sigaction(SIGINT, nullptr, &now), 0);
  EXPECT_EQ(now.sa_handler, own_handler);
  ::raise(SIGTERM);  // the own handler again, not the trace's
  EXPECT_EQ(g_own_handler_calls.load(), 1);
  ::sigaction(SIGTERM, &before_term, nullptr);
  ::sigaction(SIGINT, &before_int, nullptr);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tagflow::hosts
