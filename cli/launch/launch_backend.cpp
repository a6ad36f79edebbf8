#include "cli/launch/launch_backend.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>
#include <thread>

#include "cli/launch/remote_hosts.hpp"

namespace tagflow::cli {

namespace {

/// How long a launcher waits for another's turn at dealing CPUs: a turn lasts while it starts its
/// processes (a fork and an exec each), milliseconds.
constexpr std::chrono::milliseconds kDealPatience{5000};

}  // namespace

std::string cpu_deal_path() {
  if (const char* path = std::getenv("TAGFLOW_CPU_DEAL"); path != nullptr && *path != '\0') {
    return path;
  }
  struct stat lock_dir {};
  if (::stat("/run/lock", &lock_dir) == 0 && S_ISDIR(lock_dir.st_mode)) {
    return "/run/lock/tagflow-cpu-deal";
  }
  return "/tmp/tagflow-cpu-deal";
}

CpuDeal::CpuDeal(const std::string& path, std::chrono::milliseconds patience) {
  // Every user's launchers share the file; one made by another user may be read-only here, and
  // flock(2) takes a read-only descriptor too.
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
  writable_ = fd_ >= 0;
  if (fd_ < 0) fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd_ < 0) return;
  if (writable_) (void)::fchmod(fd_, 0666);  // not narrowed by this launcher's umask
  const auto until = std::chrono::steady_clock::now() + patience;
  while (!(held_ = ::flock(fd_, LOCK_EX | LOCK_NB) == 0) &&
         std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

CpuDeal::~CpuDeal() {
  if (fd_ >= 0) ::close(fd_);  // releases the lock
}

int CpuDeal::last_first() const {
  if (!held_) return 0;
  char text[16] = {};
  const ssize_t got = ::pread(fd_, text, sizeof text - 1, 0);
  if (got <= 0) return 0;
  int first = 0;
  for (ssize_t i = 0; i < got && text[i] >= '0' && text[i] <= '9' && first < 100000; ++i) {
    first = first * 10 + (text[i] - '0');
  }
  return first;
}

void CpuDeal::record_first(int first) {
  if (!held_ || !writable_) return;
  const std::string text = std::to_string(first) + "\n";
  if (::ftruncate(fd_, 0) == 0) {
    [[maybe_unused]] const ssize_t written = ::pwrite(fd_, text.data(), text.size(), 0);
  }
}

std::vector<ChildSpec> LocalChildren::children(const LaunchPlan& plan,
                                               const std::string& log_dir) const {
  std::vector<ChildSpec> specs = local_child_specs(plan, tagflow_, log_dir);
  if (!plan.bind_cpus) return specs;
  deal_.reset();
  deal_.emplace(cpu_deal_path(), kDealPatience);
  const std::vector<int> cpus = usable_cpus();
  const std::vector<PinnedProcess> pinned = pinned_processes();
  // With nothing pinned a deal begins on the first CPU; else one CPU past where the last began.
  const int first = pinned.empty() || cpus.empty() || !deal_->held()
                        ? 0
                        : (deal_->last_first() + 1) % static_cast<int>(cpus.size());
  bind_to_cpus(specs, least_pinned_first(cpus, pinned, first));
  if (!specs.empty() && specs.front().cpu >= 0) deal_->record_first(first);
  return specs;
}

void SshHosts::prepare() {
  ssh_ = find_on_path("ssh");
  if (ssh_.empty()) {
    throw std::runtime_error("starting hosts over ssh needs the OpenSSH client (ssh) on PATH");
  }
}

std::vector<ChildSpec> SshHosts::children(const LaunchPlan& plan,
                                          const std::string& log_dir) const {
  return remote_child_specs(plan, ssh_, log_dir);
}

void AllocatedNode::prepare() {
  if (manager_ == NodeManager::kubernetes && std::getenv("JOB_COMPLETION_INDEX") == nullptr) {
    throw std::runtime_error(
        "a Kubernetes pod's launcher runs in a pod of an Indexed Job (no JOB_COMPLETION_INDEX)");
  }
  if (manager_ != NodeManager::kubernetes && std::getenv("SLURM_JOB_ID") == nullptr) {
    throw std::runtime_error("a Slurm node's launcher runs inside a Slurm job (no SLURM_JOB_ID)");
  }
}

std::vector<ChildSpec> AllocatedNode::children(const LaunchPlan& plan,
                                               const std::string& log_dir) const {
  return local_child_specs(plan, tagflow_, log_dir);  // plan.processes: this node's only
}

std::vector<std::unique_ptr<LaunchBackend>> launch_backends(const LaunchPlan& plan,
                                                            const std::string& tagflow) {
  std::vector<std::unique_ptr<LaunchBackend>> backends;
  if (plan.node >= 0) {
    backends.push_back(std::make_unique<AllocatedNode>(tagflow, plan.manager));
    return backends;
  }
  backends.push_back(std::make_unique<LocalChildren>(tagflow));
  if (!plan.remote_hosts.empty()) backends.push_back(std::make_unique<SshHosts>());
  return backends;
}

std::vector<ChildSpec> children_of(const std::vector<std::unique_ptr<LaunchBackend>>& backends,
                                   const LaunchPlan& plan, const std::string& log_dir) {
  std::vector<ChildSpec> specs;
  for (const auto& backend : backends) {
    for (ChildSpec& spec : backend->children(plan, log_dir)) specs.push_back(std::move(spec));
  }
  return specs;
}

}  // namespace tagflow::cli
