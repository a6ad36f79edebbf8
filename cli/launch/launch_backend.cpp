#include "cli/launch/launch_backend.hpp"

#include <stdexcept>

#include "cli/launch/remote_hosts.hpp"

namespace tagflow::cli {

std::vector<ChildSpec> LocalChildren::children(const LaunchPlan& plan,
                                               const std::string& log_dir) const {
  return local_child_specs(plan, tagflow_, log_dir);
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

std::vector<std::unique_ptr<LaunchBackend>> launch_backends(const LaunchPlan& plan,
                                                            const std::string& tagflow) {
  std::vector<std::unique_ptr<LaunchBackend>> backends;
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
