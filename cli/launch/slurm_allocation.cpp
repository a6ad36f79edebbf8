#include "cli/launch/slurm_allocation.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "cli/launch/remote_hosts.hpp"
#include "transport/local_links.hpp"

namespace tagflow::cli {
namespace {

std::string required(const EnvLookup& env, const std::string& name) {
  const char* value = env(name.c_str());
  if (value == nullptr || *value == '\0') {
    throw std::runtime_error("not inside a Slurm job step: " + name + " is not set");
  }
  return value;
}

int count(const EnvLookup& env, const std::string& name) {
  const std::string text = required(env, name);
  try {
    return std::stoi(text);
  } catch (const std::exception&) {
    throw std::runtime_error(name + " is not a number: " + text);
  }
}

}  // namespace

SlurmToolResult run_slurm_tool(const std::string& command) {
  SlurmToolResult result;
  std::error_code no_temp;
  std::string errors_file =
      (std::filesystem::temp_directory_path(no_temp) / "tagflow-slurm-XXXXXX").string();
  const int fd = ::mkstemp(errors_file.data());
  if (fd < 0) {
    result.errors =
        "cannot create a temporary file for its error output: " + std::string(std::strerror(errno));
    return result;
  }
  ::close(fd);
  FILE* pipe = ::popen((command + " 2>" + shell_quote(errors_file)).c_str(), "r");
  if (pipe != nullptr) {
    char buffer[4096];
    std::size_t n = 0;
    while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) result.output.append(buffer, n);
    const int status = ::pclose(pipe);
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::ifstream in(errors_file);
  result.errors.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  std::filesystem::remove(errors_file, no_temp);
  return result;
}

SlurmPlace slurm_place(const EnvLookup& env, const NodeListExpander& expand) {
  SlurmPlace place;
  const int rank = count(env, "SLURM_PROCID");
  const char* het_size = env("SLURM_HET_SIZE");
  const int components = het_size == nullptr ? 1 : count(env, "SLURM_HET_SIZE");
  int first = 0;  // the first rank of component k
  place.component = -1;
  for (int k = 0; k < components; ++k) {
    const std::string suffix = het_size == nullptr ? "" : "_HET_GROUP_" + std::to_string(k);
    const int tasks = count(env, "SLURM_NTASKS" + suffix);
    place.nodes.push_back(expand(required(env, "SLURM_JOB_NODELIST" + suffix)));
    if (rank >= first && rank < first + tasks) {
      place.component = k;
      place.node = rank - first;
    }
    first += tasks;
  }
  if (place.component < 0) {
    throw std::runtime_error("SLURM_PROCID " + std::to_string(rank) + " is past the step's " +
                             std::to_string(first) + " tasks");
  }
  const std::vector<std::string>& mine = place.nodes[static_cast<std::size_t>(place.component)];
  place.node_name = required(env, "SLURMD_NODENAME");
  const auto at = std::find(mine.begin(), mine.end(), place.node_name);
  if (at == mine.end()) {
    throw std::runtime_error("node " + place.node_name + " is not in component " +
                             std::to_string(place.component) + "'s nodes");
  }
  place.node = static_cast<int>(at - mine.begin());
  return place;
}

std::vector<std::string> scontrol_hostnames(const std::string& list) {
  const std::string scontrol = find_on_path("scontrol");
  if (scontrol.empty()) throw std::runtime_error("no scontrol on PATH");
  const SlurmToolResult result =
      run_slurm_tool(shell_quote(scontrol) + " show hostnames " + shell_quote(list));
  if (result.exit_code != 0) {
    throw std::runtime_error("scontrol show hostnames " + list + " failed: " + result.said());
  }
  std::vector<std::string> names;
  std::istringstream lines(result.output);
  std::string name;
  while (lines >> name) names.push_back(name);
  return names;
}

std::string resolve_node_address(const std::string& name) {
  // Its IPv4 address, as a host's address is listened on; an IPv6-only node its IPv6 one.
  std::string why;
  const std::optional<std::string> address = transport::resolve_preferring_ipv4(name, &why);
  if (!address) throw std::runtime_error("cannot resolve node " + name + ": " + why);
  return *address;
}

std::string addresses_value(const std::vector<std::string>& hosts, const SlurmPlace& place,
                            const std::function<std::string(const std::string&)>& resolve) {
  std::string value;
  for (std::size_t k = 0; k < hosts.size() && k < place.nodes.size(); ++k) {
    value += (k == 0 ? "" : ";") + hosts[k] + "=";
    for (std::size_t i = 0; i < place.nodes[k].size(); ++i) {
      value += (i == 0 ? "" : ",") + resolve(place.nodes[k][i]);
    }
  }
  return value;
}

}  // namespace tagflow::cli
