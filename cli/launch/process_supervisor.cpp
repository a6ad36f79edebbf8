#include "cli/launch/process_supervisor.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <stdexcept>

namespace tagflow::cli {
namespace {

using clock = std::chrono::steady_clock;

[[noreturn]] void exec_child(const ChildSpec& spec, pid_t parent, int output_fd, int error_fd,
                             int stdin_fd) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(127);  // the launcher died before prctl took effect
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::signal(SIGINT, SIG_DFL);
  ::signal(SIGTERM, SIG_DFL);
  ::signal(SIGPIPE, SIG_DFL);
  if (spec.cpu >= 0 && spec.cpu < CPU_SETSIZE) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(spec.cpu, &one);
    (void)::sched_setaffinity(0, sizeof one, &one);  // threads started later inherit it
  }
  ::dup2(output_fd, STDOUT_FILENO);
  ::dup2(output_fd, STDERR_FILENO);
  const int null_fd = stdin_fd >= 0 ? stdin_fd : ::open("/dev/null", O_RDONLY);
  if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
  std::vector<char*> argv;
  for (const std::string& arg : spec.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  ::execv(argv[0], argv.data());
  const int error = errno;
  [[maybe_unused]] const ssize_t written = ::write(error_fd, &error, sizeof(error));
  ::_exit(127);
}

ChildExit exit_from_status(const std::string& name, int status) {
  ChildExit exit;
  exit.name = name;
  if (WIFSIGNALED(status)) {
    exit.signaled = true;
    exit.signal = WTERMSIG(status);
  } else {
    exit.exit_code = WEXITSTATUS(status);
  }
  return exit;
}

}  // namespace

std::string ChildExit::describe() const {
  if (signaled) {
    return "killed by signal " + std::to_string(signal) + " (" + ::strsignal(signal) + ")";
  }
  return "exited with code " + std::to_string(exit_code);
}

ProcessSupervisor::ProcessSupervisor(std::size_t tail_lines) : tail_lines_(tail_lines) {}

ProcessSupervisor::~ProcessSupervisor() { stop_all(std::chrono::seconds(2)); }

pid_t ProcessSupervisor::start(const ChildSpec& spec) {
  if (const auto old = children_.find(spec.name); old != children_.end()) {
    if (old->second.running) {
      throw std::runtime_error("a process named '" + spec.name + "' is already started");
    }
    children_.erase(old);  // it exited and was reaped: started again under its name
  }
  if (spec.argv.empty()) throw std::runtime_error(spec.name + ": empty command line");
  Child child;
  child.name = spec.name;
  if (!spec.log_path.empty()) {
    child.log_fd = ::open(spec.log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (child.log_fd < 0) {
      throw std::runtime_error(spec.name + ": cannot open log " + spec.log_path + ": " +
                               std::strerror(errno));
    }
  }
  int output[2];
  int exec_error[2];
  int input[2] = {-1, -1};
  if (::pipe2(output, O_CLOEXEC) != 0 || ::pipe2(exec_error, O_CLOEXEC) != 0 ||
      (spec.keep_stdin && ::pipe2(input, O_CLOEXEC) != 0)) {
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  }
  const pid_t parent = ::getpid();
  child.started = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) exec_child(spec, parent, output[1], exec_error[1], input[0]);

  ::setpgid(pid, pid);  // also in the parent, so killpg works even before the child ran
  ::close(output[1]);
  ::close(exec_error[1]);
  if (input[0] >= 0) ::close(input[0]);
  child.stdin_fd = input[1];
  int error = 0;
  const ssize_t got = ::read(exec_error[0], &error, sizeof(error));
  ::close(exec_error[0]);
  if (got == static_cast<ssize_t>(sizeof(error))) {
    ::waitpid(pid, nullptr, 0);
    ::close(output[0]);
    if (child.stdin_fd >= 0) ::close(child.stdin_fd);
    if (child.log_fd >= 0) ::close(child.log_fd);
    throw std::runtime_error(spec.name + ": cannot execute " + spec.argv[0] + ": " +
                             std::strerror(error));
  }
  ::fcntl(output[0], F_SETFL, ::fcntl(output[0], F_GETFL) | O_NONBLOCK);
  child.pid = pid;
  child.output_fd = output[0];
  children_.emplace(spec.name, std::move(child));
  return pid;
}

void ProcessSupervisor::drain(Child& child) {
  if (child.output_fd < 0) return;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(child.output_fd, buffer, sizeof(buffer));
    if (n > 0) {
      if (child.log_fd >= 0) {
        [[maybe_unused]] const ssize_t written =
            ::write(child.log_fd, buffer, static_cast<size_t>(n));
      }
      for (ssize_t i = 0; i < n; ++i) {
        if (buffer[i] == '\n') {
          child.tail.push_back(std::move(child.partial_line));
          child.partial_line.clear();
          if (child.tail.size() > tail_lines_) child.tail.pop_front();
        } else {
          child.partial_line.push_back(buffer[i]);
        }
      }
      continue;
    }
    if (n == 0) {  // every writer closed the pipe
      ::close(child.output_fd);
      child.output_fd = -1;
    }
    return;  // EAGAIN or EOF
  }
}

void ProcessSupervisor::close_fds(Child& child) {
  drain(child);
  if (!child.partial_line.empty()) {
    child.tail.push_back(std::move(child.partial_line));
    child.partial_line.clear();
    if (child.tail.size() > tail_lines_) child.tail.pop_front();
  }
  if (child.output_fd >= 0) ::close(child.output_fd);
  if (child.log_fd >= 0) ::close(child.log_fd);
  if (child.stdin_fd >= 0) ::close(child.stdin_fd);
  child.output_fd = child.log_fd = child.stdin_fd = -1;
}

std::optional<ChildExit> ProcessSupervisor::reap_one(bool block) {
  for (auto& [name, child] : children_) {
    if (!child.running) continue;
    int status = 0;
    rusage usage{};
    const pid_t done = ::wait4(child.pid, &status, block ? 0 : WNOHANG, &usage);
    if (done == child.pid) {
      child.running = false;
      close_fds(child);
      ChildExit exit = exit_from_status(name, status);
      exit.run_seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - child.started).count();
      const auto seconds = [](const timeval& t) {
        return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
      };
      exit.cpu_seconds = seconds(usage.ru_utime) + seconds(usage.ru_stime);
      exit.voluntary_switches = usage.ru_nvcsw;
      exit.involuntary_switches = usage.ru_nivcsw;
      child.exit = exit;
      return exit;
    }
  }
  return std::nullopt;
}

std::optional<ChildExit> ProcessSupervisor::wait_for_exit(std::chrono::milliseconds timeout) {
  const auto deadline = clock::now() + timeout;
  for (;;) {
    if (auto exit = reap_one(false)) return exit;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
    if (left.count() <= 0) return std::nullopt;
    std::vector<pollfd> fds;
    std::vector<Child*> owners;
    for (auto& [name, child] : children_) {
      if (child.output_fd >= 0) {
        fds.push_back(pollfd{child.output_fd, POLLIN, 0});
        owners.push_back(&child);
      }
    }
    // Short slices: a child that exits without closing its output is noticed by waitpid.
    const int slice = static_cast<int>(std::min<long>(left.count(), 20));
    if (::poll(fds.data(), fds.size(), slice) > 0) {
      for (std::size_t i = 0; i < fds.size(); ++i) {
        if (fds[i].revents != 0) drain(*owners[i]);
      }
    }
  }
}

std::vector<ChildExit> ProcessSupervisor::stop_all(std::chrono::milliseconds grace) {
  std::vector<ChildExit> exits;
  for (auto& [name, child] : children_) {
    if (child.running) ::killpg(child.pid, SIGTERM);
  }
  const auto deadline = clock::now() + grace;
  while (running() > 0 && clock::now() < deadline) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
    if (auto exit = wait_for_exit(left)) exits.push_back(*exit);
  }
  std::set<std::string> killed;
  for (auto& [name, child] : children_) {
    if (child.running && ::killpg(child.pid, SIGKILL) == 0) killed.insert(name);
  }
  while (auto exit = reap_one(true)) {
    exit->killed_after_grace = killed.count(exit->name) != 0;
    exits.push_back(*exit);
  }
  return exits;
}

bool ProcessSupervisor::signal_child(const std::string& name, int signal) {
  const auto it = children_.find(name);
  if (it == children_.end() || !it->second.running) return false;
  return ::killpg(it->second.pid, signal) == 0;
}

std::size_t ProcessSupervisor::running() const {
  std::size_t count = 0;
  for (const auto& [name, child] : children_) count += child.running ? 1 : 0;
  return count;
}

std::vector<std::string> ProcessSupervisor::running_names() const {
  std::vector<std::string> names;
  for (const auto& [name, child] : children_) {
    if (child.running) names.push_back(name);
  }
  return names;
}

std::vector<std::string> ProcessSupervisor::tail(const std::string& name) const {
  const auto it = children_.find(name);
  if (it == children_.end()) return {};
  std::vector<std::string> lines(it->second.tail.begin(), it->second.tail.end());
  if (!it->second.partial_line.empty()) lines.push_back(it->second.partial_line);
  return lines;
}

pid_t ProcessSupervisor::pid_of(const std::string& name) const {
  const auto it = children_.find(name);
  return it == children_.end() || !it->second.running ? -1 : it->second.pid;
}

std::optional<ChildExit> ProcessSupervisor::exit_of(const std::string& name) const {
  const auto it = children_.find(name);
  return it == children_.end() ? std::nullopt : it->second.exit;
}

}  // namespace tagflow::cli
