#include "cli/launch/remote_hosts.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace tagflow::cli {
namespace {

constexpr const char* kRemotePrefix = "host:";

}  // namespace

std::string remote_child_name(const std::string& host) { return kRemotePrefix + host; }

std::string remote_host_of(const std::string& name) {
  const std::string prefix = kRemotePrefix;
  return name.rfind(prefix, 0) == 0 ? name.substr(prefix.size()) : std::string();
}

std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (const char c : text) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

ChildSpec remote_child(const cluster::HostConfig& host, const std::string& ssh,
                       const std::string& file, const std::string& log_dir,
                       const std::optional<cluster::Mode>& mode, bool trace) {
  std::string command;
  if (!host.workdir.empty()) command = "cd " + shell_quote(host.workdir) + " && ";
  command += "exec " + shell_quote(host.tagflow) + " up " + shell_quote(file) + " --host " +
             shell_quote(host.name) + " --log-dir " + shell_quote(log_dir + "-" + host.name) +
             " --quiet --stop-with-stdin";
  if (mode) command += std::string(" --mode ") + cluster::to_string(*mode);
  if (trace) command += " --trace";
  ChildSpec spec;
  spec.name = remote_child_name(host.name);
  spec.argv = {ssh, "-o", "BatchMode=yes", "-T", host.ssh, command};
  spec.log_path = (std::filesystem::path(log_dir) / ("host-" + host.name + ".log")).string();
  spec.keep_stdin = true;
  return spec;
}

std::string find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path == nullptr ? "/usr/bin:/bin" : path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    const std::filesystem::path candidate = std::filesystem::path(dir) / program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return "";
}

}  // namespace tagflow::cli
