// ChildProcesses: the worker processes of one multi-process benchmark run — this executable
// started again with other arguments. Each child dies with its parent (PR_SET_PDEATHSIG); its
// stdout and stderr go to a log file in a directory of this run, read back when it fails. The
// destructor kills (SIGKILL, by pid) and reaps every child still running.
// Not thread-safe: one thread owns it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace tagflow::bench::paper {

class ChildProcesses {
 public:
  ChildProcesses();
  ~ChildProcesses();
  ChildProcesses(const ChildProcesses&) = delete;
  ChildProcesses& operator=(const ChildProcesses&) = delete;

  /// A directory only this run uses (removed by the destructor).
  [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }
  /// Starts this executable with `args` (not including argv[0]).
  void start(const std::string& name, const std::vector<std::string>& args);
  /// Waits for every child to exit; throws std::runtime_error naming the first that failed (with
  /// the tail of its log) or that is still running after `timeout`.
  void wait_all(std::chrono::seconds timeout);
  /// Waits until `path` exists (a child writes it atomically), throwing after `timeout` or
  /// as soon as a child has failed.
  void wait_for_file(const std::filesystem::path& path, std::chrono::seconds timeout);

 private:
  struct Child {
    std::string name;
    pid_t pid = -1;
    bool running = true;
    int status = 0;
  };
  void reap(Child& child, bool block);
  [[noreturn]] void fail(const Child& child, const std::string& what);
  std::filesystem::path dir_;
  std::vector<Child> children_;
};

}  // namespace tagflow::bench::paper
