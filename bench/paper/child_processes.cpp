#include "bench/paper/child_processes.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace tagflow::bench::paper {

ChildProcesses::ChildProcesses()
    : dir_(std::filesystem::temp_directory_path() /
           ("tagflow_paper_bench_" + std::to_string(::getpid()) + "_" +
            std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()))) {
  std::filesystem::create_directories(dir_);
}

ChildProcesses::~ChildProcesses() {
  for (Child& child : children_) {
    if (!child.running) continue;
    ::kill(child.pid, SIGKILL);
    ::waitpid(child.pid, nullptr, 0);
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

void ChildProcesses::start(const std::string& name, const std::vector<std::string>& args) {
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::string log = (dir_ / (name + ".log")).string();
  std::vector<std::string> words{self};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("paper bench: fork failed");
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) {
      ::dup2(fd, STDOUT_FILENO);
      ::dup2(fd, STDERR_FILENO);
      ::close(fd);
    }
    ::execv(self.c_str(), argv.data());
    ::_exit(127);
  }
  children_.push_back(Child{name, pid, true, 0});
}

void ChildProcesses::reap(Child& child, bool block) {
  if (!child.running) return;
  int status = 0;
  const pid_t done = ::waitpid(child.pid, &status, block ? 0 : WNOHANG);
  if (done == child.pid) {
    child.running = false;
    child.status = status;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) fail(child, "failed");
  }
}

void ChildProcesses::fail(const Child& child, const std::string& what) {
  std::ifstream in(dir_ / (child.name + ".log"));
  std::stringstream text;
  text << in.rdbuf();
  std::string tail = text.str();
  if (tail.size() > 2000) tail = tail.substr(tail.size() - 2000);
  throw std::runtime_error("paper bench: worker process " + child.name + " " + what + ":\n" + tail);
}

void ChildProcesses::wait_all(std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (Child& child : children_) {
    while (child.running) {
      reap(child, false);
      if (!child.running) break;
      if (std::chrono::steady_clock::now() > deadline) fail(child, "did not exit in time");
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
}

void ChildProcesses::wait_for_file(const std::filesystem::path& path,
                                   std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!std::filesystem::exists(path)) {
    for (Child& child : children_) reap(child, false);
    if (std::chrono::steady_clock::now() > deadline) {
      throw std::runtime_error("paper bench: no worker wrote " + path.string() + " in time");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

}  // namespace tagflow::bench::paper
