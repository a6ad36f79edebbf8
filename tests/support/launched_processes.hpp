// Test helpers for tests that start `tagflow up` and its children as real processes: read a
// file, start a child with its output in files, wait for a child with a limit, poll a condition,
// read a launcher's DIR/pids, tell whether a pid still runs. Header-only, like run_command.hpp.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace tagflow::testing {

/// The whole file, or "" when it cannot be read.
inline std::string read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Starts `argv` (argv[0] a path) as a child with stdout and stderr in the files `out` and `err`;
/// its pid.
inline pid_t spawn_with_output(std::vector<std::string> argv, const std::filesystem::path& out,
                               const std::filesystem::path& err) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int out_fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err_fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(out_fd, STDOUT_FILENO);
    ::dup2(err_fd, STDERR_FILENO);
    std::vector<char*> raw;
    for (std::string& arg : argv) raw.push_back(arg.data());
    raw.push_back(nullptr);
    ::execv(raw[0], raw.data());
    ::_exit(127);
  }
  return pid;
}

/// The exit code of child `pid`, waiting at most `timeout` (then it is killed: -1); a child
/// ended by a signal gives 128 + the signal.
inline int wait_exit(pid_t pid, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/// Polls `condition` every 20 ms for up to `timeout`; its last value.
template <typename Condition>
bool eventually(Condition condition, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return condition();
}

/// The children a launcher recorded in DIR/pids ("NAME PID" lines).
inline std::map<std::string, pid_t> recorded_pids(const std::filesystem::path& log_dir) {
  std::map<std::string, pid_t> pids;
  std::ifstream in(log_dir / "pids");
  std::string name;
  pid_t pid = 0;
  while (in >> name >> pid) pids[name] = pid;
  return pids;
}

/// A child started with its stdout and stderr in files.
struct Launched {
  pid_t pid = -1;
  std::filesystem::path out, err;
};

/// True while `pid` exists and is not a zombie.
inline bool alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const auto close = line.rfind(')');
  return close != std::string::npos && line.size() > close + 2 && line[close + 2] != 'Z';
}

}  // namespace tagflow::testing
