#include "cli/launch/launch_backend.hpp"

#include <cstdlib>
#include <stdexcept>

#include "cli/launch/remote_hosts.hpp"

namespace tagflow::cli {

std::vector<ChildSpec> LocalChildren::children(const LaunchPlan& plan,
                                               const std::string& log_dir) const {
  std::vector<ChildSpec> specs = local_child_specs(plan, tagflow_, log_dir);
  if (plan.bind_cpus) bind_to_cpus(specs, least_pinned_first(usable_cpus(), pinned_processes()));
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
