// Test helper: a child process started with posix-style fork/exec, its stdout on a pipe, that is
// terminated (SIGTERM, then SIGKILL after a grace period) and reaped when the object goes away.
// The child gets PR_SET_PDEATHSIG so it dies with the test process even if the test crashes.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

namespace tagflow::testing {

class ChildProcess {
 public:
  /// Starts argv[0] (a path) with these arguments; stderr goes to `stderr_path` (or is inherited
  /// when empty). Throws std::runtime_error when fork or pipe fails.
  explicit ChildProcess(const std::vector<std::string>& argv, const std::string& stderr_path = "") {
    std::vector<char*> args;  // built before fork: the child only calls async-signal-safe functions
    for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
    const pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(126);
      ::dup2(fds[1], STDOUT_FILENO);
      if (!stderr_path.empty()) {
        const int err = ::open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (err >= 0) ::dup2(err, STDERR_FILENO);
      }
      ::execv(args[0], args.data());
      ::_exit(127);
    }
    ::close(fds[1]);
    stdout_fd_ = fds[0];
  }
  ~ChildProcess() {
    terminate();
    if (stdout_fd_ >= 0) ::close(stdout_fd_);
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }

  /// The next line the child prints, without the newline; empty when it printed none within
  /// `timeout` or closed its stdout.
  std::string read_line(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      const std::size_t newline = buffer_.find('\n');
      if (newline != std::string::npos) {
        std::string line = buffer_.substr(0, newline);
        buffer_.erase(0, newline + 1);
        return line;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return "";
      pollfd p{stdout_fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return "";
      char chunk[1024];
      const ssize_t n = ::read(stdout_fd_, chunk, sizeof(chunk));
      if (n <= 0) return "";
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }

  /// Sends SIGTERM without waiting (so several children can shut down in parallel).
  void request_stop() {
    if (pid_ > 0 && !reaped_) ::kill(pid_, SIGTERM);
  }

  /// SIGTERM, wait up to `grace`, then SIGKILL; reaps the child. Returns its exit status as
  /// waitpid reports it (or -1 when it was already reaped).
  int terminate(std::chrono::milliseconds grace = std::chrono::milliseconds(5000)) {
    if (pid_ <= 0 || reaped_) return -1;
    ::kill(pid_, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + grace;
    int status = 0;
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        break;
      }
      ::usleep(10000);  // polling the child's exit; there is no descriptor to wait on
    }
    reaped_ = true;
    return status;
  }

 private:
  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  bool reaped_ = false;
  std::string buffer_;
};

}  // namespace tagflow::testing
