#include "cli/launch/run_report.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "common/atomic_file.hpp"
#include "hosts/process_result.hpp"
#include "hosts/run_combine.hpp"

namespace tagflow::cli {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitBeforeTarget = 3;

hosts::ProcessResult read_result(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": no result file (the node exited 0 without one)");
  std::stringstream text;
  text << in.rdbuf();
  try {
    return hosts::ProcessResult::from_json(text.str());
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

/// What this host's processes did, when the digest cannot be computed here.
void print_joined(const std::vector<JoinedSampler>& joined) {
  for (const JoinedSampler& sampler : joined) {
    std::cout << "  " << sampler.name << " (joined): " << sampler.env_steps
              << " env_steps (last seen)\n";
  }
}

/// The joined samplers' steps into the summary, each as a node of its own.
void add_joined(hosts::RunSummary& summary, const std::vector<JoinedSampler>& joined) {
  for (const JoinedSampler& sampler : joined) {
    summary.env_steps += sampler.env_steps;
    const double per_second =
        summary.seconds > 0 ? static_cast<double>(sampler.env_steps) / summary.seconds : 0.0;
    summary.nodes.push_back(
        hosts::NodeThroughput{sampler.name, "sampler", "env_steps", sampler.env_steps, per_second});
  }
}

void print_host_report(const LaunchPlan& plan, const std::vector<hosts::ProcessResult>& results,
                       const std::vector<JoinedSampler>& joined) {
  std::int64_t env_steps = 0;
  for (const JoinedSampler& sampler : joined) env_steps += sampler.env_steps;
  print_joined(joined);
  std::string stop_reason;
  double seconds = 0.0;
  for (const hosts::ProcessResult& result : results) {
    if (stop_reason.empty()) stop_reason = result.stop_reason;
    seconds = std::max(seconds, result.seconds);
    for (const hosts::ReplicaResult& replica : result.replicas) {
      if (replica.kind == "sampler") env_steps += replica.count;
      std::cout << "  " << replica.name << ": " << replica.count << " " << replica.unit << "\n";
    }
  }
  std::cout << "stop " << (stop_reason.empty() ? "(by another host)" : stop_reason)
            << ": this host ran " << plan.processes.size() << " of " << plan.cluster_processes
            << " processes, env_steps " << env_steps << ", " << seconds << " s\n";
  std::cerr << "tagflow up: no digest here: it needs the result files of every host's processes\n";
}

}  // namespace

int report_run(const cluster::ClusterConfig& config, const LaunchPlan& plan,
               const std::string& log_dir, const std::string& summary_path,
               const std::vector<JoinedSampler>& joined) {
  std::vector<hosts::ProcessResult> results;
  hosts::RunSummary summary;
  try {
    for (const cluster::ProcessPlan& process : plan.processes) {
      results.push_back(read_result(result_path(log_dir, process.name)));
    }
    if (!plan.whole_cluster()) {
      print_host_report(plan, results, joined);
      return kExitOk;
    }
    summary = hosts::combine_results(config, results, "process");
    add_joined(summary, joined);
  } catch (const std::exception& e) {
    std::cerr << "tagflow up: " << e.what() << "\n";
    return kExitFailed;
  }
  print_joined(joined);
  std::cout << "stop " << summary.stop_reason << ": mean_return " << summary.mean_return
            << ", env_steps " << summary.env_steps << ", updates " << summary.updates << ", "
            << summary.seconds << " s, digest " << summary.digest_hex()
            << (summary.digest_reproducible ? "" : " (actor mode: not reproducible)") << std::endl;
  try {
    const std::string json = summary.to_json() + "\n";
    write_file_atomically((std::filesystem::path(log_dir) / "summary.json").string(), json);
    if (!summary_path.empty()) write_file_atomically(summary_path, json);
  } catch (const std::exception& e) {
    std::cerr << "tagflow up: " << e.what() << "\n";
    return kExitFailed;
  }
  if (config.stop.target_return && summary.mean_return < *config.stop.target_return) {
    std::cerr << "tagflow up: stopped (" << summary.stop_reason << ") before reaching the target "
              << "return " << *config.stop.target_return << "\n";
    return kExitBeforeTarget;
  }
  return kExitOk;
}

}  // namespace tagflow::cli
