#include "cli/launch/result_collector.hpp"

#include <algorithm>
#include <exception>
#include <filesystem>

#include "cli/launch/launch_plan.hpp"
#include "common/atomic_file.hpp"
#include "nodes/kind/process_result.hpp"

namespace tagflow::cli {

ResultCollector::ResultCollector(const cluster::ClusterConfig& config, std::string dir)
    : dir_(std::filesystem::absolute(dir).lexically_normal().string()) {
  for (cluster::ProcessPlan& process : cluster::plan_processes(config)) {
    if (!cluster::runs_with_coordinator(config, process)) remote_.push_back(std::move(process));
  }
}

coordinator::ResultReceipt ResultCollector::receive(const std::string& federate,
                                                    const std::string& process,
                                                    const std::string& json) {
  const cluster::ProcessPlan* plan = cluster::find_process(remote_, process);
  if (plan == nullptr) {
    return {false,
            "no process that runs away from the coordinator (another host's, or another node's "
            "of its host) has that name"};
  }
  if (std::find(plan->replicas.begin(), plan->replicas.end(), federate) == plan->replicas.end()) {
    return {false, "sent with the key of '" + federate + "', which is not one of its replicas"};
  }
  try {
    const hosts::ProcessResult result = hosts::ProcessResult::from_json(json);
    if (result.process != process) {
      return {false, "the JSON is the result of process '" + result.process + "'"};
    }
    write_file_atomically(result_path(dir_, process), json);
  } catch (const std::exception& e) {
    return {false, e.what()};
  }
  stored_.insert(process);
  return {true, (std::filesystem::path(dir_) / "summary.json").string()};
}

std::vector<std::string> ResultCollector::missing() const {
  std::vector<std::string> names;
  for (const cluster::ProcessPlan& process : remote_) {
    if (stored_.count(process.name) == 0) names.push_back(process.name);
  }
  return names;
}

}  // namespace tagflow::cli
