// ProcessSupervisor: starts the processes of a cluster and makes sure none outlives it.
//
// Each child runs in its own process group (so Ctrl-C in the terminal reaches only the launcher,
// which then stops the children in order) and is killed by the kernel if the launcher dies
// (PR_SET_PDEATHSIG), so a crashed or killed launcher leaves no orphan. A child's stdout and stderr
// go to its log file and the last lines are kept in memory for error reports.
//
// Not thread-safe: one thread (the launcher's main thread, which must be the one that calls
// start()) owns a supervisor. The destructor stops every child still running.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tagflow::cli {

struct ChildSpec {
  std::string name;               // unique within the supervisor, e.g. "sampler-1"
  std::vector<std::string> argv;  // argv[0] is the program path
  std::string log_path;           // stdout+stderr of the child; empty: not written to a file
  /// Give the child a pipe as stdin that stays open while the child runs (closed when it is
  /// reaped or the supervisor dies), instead of /dev/null: ssh forwards it, and the far side
  /// sees end-of-file when this end goes away.
  bool keep_stdin = false;
  /// >= 0: the child and every thread it starts run on this CPU only (set before exec; a CPU the
  /// child may not use is left unset, and the child runs where the scheduler puts it).
  int cpu = -1;
};

struct ChildExit {
  std::string name;
  int exit_code = 0;  // valid when !signaled
  bool signaled = false;
  int signal = 0;  // valid when signaled
  /// From its start to its exit, the CPU time it used (user and system, wait4's rusage) and its
  /// context switches: voluntary ones (it waited for something) and involuntary ones (the
  /// scheduler took the CPU from it), which tell a process starved of CPU from one that waited.
  double run_seconds = 0.0;
  double cpu_seconds = 0.0;
  long voluntary_switches = 0;
  long involuntary_switches = 0;
  /// stop_all() killed it (SIGKILL): it was still running when the grace after SIGTERM ran out.
  bool killed_after_grace = false;
  /// "exited with code 3" or "killed by signal 9 (Killed)".
  std::string describe() const;
};

class ProcessSupervisor {
 public:
  explicit ProcessSupervisor(std::size_t tail_lines = 20);
  ~ProcessSupervisor();
  ProcessSupervisor(const ProcessSupervisor&) = delete;
  ProcessSupervisor& operator=(const ProcessSupervisor&) = delete;

  /// Starts a child; the name of one that exited (and was reaped) may be used again (a
  /// restart). Throws std::runtime_error if the name is taken by a running child, the program
  /// cannot be executed (reported from the child before it runs anything) or the log cannot be
  /// opened.
  pid_t start(const ChildSpec& spec);

  /// Reads the children's output and reaps them until one exits or `timeout` passes. Returns the
  /// first exit seen, or nullopt on timeout.
  std::optional<ChildExit> wait_for_exit(std::chrono::milliseconds timeout);

  /// Sends SIGTERM to every running child's process group, waits up to `grace` for them, then
  /// SIGKILLs what is left. Returns the exits it collected.
  std::vector<ChildExit> stop_all(std::chrono::milliseconds grace);

  /// Sends `signal` to one running child's process group (tests kill a node this way).
  bool signal_child(const std::string& name, int signal);

  std::size_t running() const;
  /// The names of the running children, in name order.
  std::vector<std::string> running_names() const;
  /// The last lines the child printed (up to tail_lines), oldest first.
  std::vector<std::string> tail(const std::string& name) const;
  /// The pid of a running child, or -1.
  pid_t pid_of(const std::string& name) const;
  /// How the child last started under `name` exited, once reaped.
  std::optional<ChildExit> exit_of(const std::string& name) const;

 private:
  struct Child {
    std::string name;
    pid_t pid = -1;
    int output_fd = -1;
    int log_fd = -1;
    int stdin_fd = -1;  // the write end of the child's stdin (keep_stdin)
    std::string partial_line;
    std::deque<std::string> tail;
    bool running = true;
    std::chrono::steady_clock::time_point started;
    std::optional<ChildExit> exit;  // once reaped
  };

  void drain(Child& child);
  std::optional<ChildExit> reap_one(bool block);
  void close_fds(Child& child);

  std::size_t tail_lines_;
  std::map<std::string, Child> children_;
};

}  // namespace tagflow::cli
