#include "cli/launch/run_report.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/launch/coordinator_link.hpp"
#include "cli/launch/trace_collector.hpp"
#include "common/atomic_file.hpp"
#include "hosts/run_combine.hpp"
#include "nodes/kind/process_result.hpp"
#include "nodes/kind/registry.hpp"

namespace tagflow::cli {
namespace {

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
void print_joined(const std::vector<JoinedReplica>& joined) {
  for (const JoinedReplica& sampler : joined) {
    std::cout << "  " << sampler.name << " (joined): " << sampler.env_steps
              << " env_steps (last seen)\n";
  }
}

/// The joined samplers' steps into the summary, each as a node of its own.
void add_joined(hosts::RunSummary& summary, const std::vector<JoinedReplica>& joined) {
  for (const JoinedReplica& sampler : joined) {
    summary.env_steps += sampler.env_steps;
    const double per_second =
        summary.seconds > 0 ? static_cast<double>(sampler.env_steps) / summary.seconds : 0.0;
    summary.nodes.push_back(hosts::NodeThroughput{sampler.name, sampler.kind, "env_steps",
                                                  sampler.env_steps, per_second});
  }
}

/// This host's processes, when another host prints the cluster's summary (or none does).
void print_host_report(const LaunchPlan& plan, const std::vector<hosts::ProcessResult>& results,
                       const std::vector<JoinedReplica>& joined) {
  std::int64_t env_steps = 0;
  for (const JoinedReplica& sampler : joined) env_steps += sampler.env_steps;
  print_joined(joined);
  std::string stop_reason;
  double seconds = 0.0;
  for (const hosts::ProcessResult& result : results) {
    if (stop_reason.empty()) stop_reason = result.stop_reason;
    seconds = std::max(seconds, result.seconds);
    for (const hosts::ReplicaResult& replica : result.replicas) {
      const nodes::NodeKind* kind = nodes::find_node_kind(replica.kind);
      if (kind != nullptr && kind->steps_env) env_steps += replica.count;
      std::cout << "  " << replica.name << ": " << replica.count << " " << replica.unit << "\n";
    }
  }
  std::cout << "stop " << (stop_reason.empty() ? "(by another host)" : stop_reason)
            << ": this host ran " << plan.processes.size() << " of " << plan.cluster_processes
            << " processes, env_steps " << env_steps << ", " << seconds << " s\n";
}

/// How long a launcher waits for the coordinator to store one result.
constexpr auto kResultTimeout = std::chrono::seconds(10);

/// Another host than the coordinator's (reactor mode): sends this host's results to the
/// coordinator (PROTOCOL.md §8) and says where the cluster's summary is. Throws on a refusal.
void send_results(const cluster::ClusterConfig& config, const LaunchPlan& plan,
                  const std::string& log_dir) {
  CoordinatorLink link(config);
  std::string where;
  for (const cluster::ProcessPlan& process : plan.processes) {
    std::ifstream in(result_path(log_dir, process.name));
    std::stringstream json;
    json << in.rdbuf();
    where = link.send_result(process.replicas.front(), process.name, json.str(), kResultTimeout);
  }
  const std::string& host = config.coordinator.host;
  // One write: over ssh this host's stdout and stderr travel as two channels, and the head
  // host's copy of them interleaves wherever a line was written in pieces.
  std::cout.flush();
  std::cerr << "tagflow up: the whole cluster's summary (mean return, env steps, digest) is "
               "printed by the launcher of host " +
                   host + " (" + config.hosts.at(host).address + ") and written there to " + where +
                   "\n"
            << std::flush;
}

/// Another host than the coordinator's, in a traced run: this host's trace files to the
/// coordinator's host (PROTOCOL.md §8.4), each process's trace saying how this host's clock stands
/// to the coordinator's. A file that cannot be sent is reported; the run's result stands.
void send_traces(const cluster::ClusterConfig& config, const LaunchPlan& plan) {
  if (plan.trace.empty() || plan.processes.empty()) return;
  try {
    CoordinatorLink link(config);
    const std::string& first = plan.processes.front().replicas.front();
    const CoordinatorLink::ClockOffset clock = link.measure_clock(first, 16, kResultTimeout);
    for (const cluster::ProcessPlan& process : plan.processes) {
      for (const std::string& name : trace_files_of(config, process.name, process.replicas)) {
        const std::filesystem::path path = std::filesystem::path(plan.trace) / name;
        std::ifstream in(path, std::ios::binary);
        if (!in) throw CoordinatorLinkError("no trace file " + path.string());
        std::stringstream bytes;
        bytes << in.rdbuf();
        std::string text = bytes.str();
        if (name == process.name + ".trace.json") {
          nlohmann::json trace = nlohmann::json::parse(text);
          trace["clock_offset_ns"] = clock.offset_ns;
          trace["clock_error_ns"] = clock.error_ns;
          text = trace.dump();
        }
        link.send_trace_file(process.replicas.front(), name, text, kResultTimeout);
      }
    }
    std::cerr << "tagflow up: this host's trace went to the coordinator's host (clock offset "
              << clock.offset_ns << " ns, ± " << clock.error_ns << " ns)\n";
  } catch (const std::exception& e) {
    std::cerr << "tagflow up: this host's trace did not reach the coordinator's host: " << e.what()
              << "\n";
  }
}

/// The coordinator's host: every process's result is here, this host's from its nodes and the
/// others' from the coordinator. Throws naming a missing one.
std::vector<hosts::ProcessResult> read_cluster_results(const cluster::ClusterConfig& config,
                                                       const std::string& log_dir) {
  std::vector<hosts::ProcessResult> results;
  for (const cluster::ProcessPlan& process : cluster::plan_processes(config)) {
    const std::string path = result_path(log_dir, process.name);
    if (!std::filesystem::exists(path)) {
      throw std::runtime_error("no result from process " + process.name + " on host " +
                               process.host + " (its launcher sends it to the coordinator at " +
                               "the end: see its output)");
    }
    results.push_back(read_result(path));
  }
  return results;
}

/// Actor mode: each restart's messages_in_flight, from the peers' results — the k-th restart of
/// a process takes the k-th loss each peer recorded of each of its replicas.
std::vector<hosts::RestartRecord> with_messages_in_flight(
    std::vector<hosts::RestartRecord> restarts, const std::vector<hosts::ProcessResult>& results) {
  std::map<std::string, std::size_t> seen;  // restarts per process so far
  for (hosts::RestartRecord& record : restarts) {
    if (record.replicas.empty()) continue;  // reactor mode
    const std::size_t k = seen[record.process]++;
    std::int64_t total = 0;
    for (const hosts::ProcessResult& process : results) {
      for (const hosts::ReplicaResult& replica : process.replicas) {
        for (const hosts::ReplicaRestart& lost : record.replicas) {
          const auto it = replica.unanswered_at_loss.find(lost.replica);
          if (it != replica.unanswered_at_loss.end() && k < it->second.size()) {
            total += it->second[k];
          }
        }
      }
    }
    record.messages_in_flight = total;
  }
  return restarts;
}

void print_restart(const hosts::RestartRecord& r) {
  std::cout << "restart: " << r.process << " " << r.how;
  if (r.replicas.empty()) {
    std::cout << "; resumed from "
              << (r.resumed_from
                      ? "the checkpoint at logical time " + std::to_string(*r.resumed_from) + " ns"
                      : std::string("the start"))
              << ", " << r.lost_seconds << " s lost" << std::endl;
    return;
  }
  std::cout << "; restarted alone:";
  for (const hosts::ReplicaRestart& x : r.replicas) {
    std::cout << " " << x.replica << " from "
              << (x.checkpoint ? "checkpoint " + std::to_string(*x.checkpoint) + " (" +
                                     std::to_string(x.checkpoint_count) + " " + x.unit + ")"
                               : std::string("scratch"))
              << ", "
              << (x.since_checkpoint ? std::to_string(*x.since_checkpoint) : std::string("?"))
              << " " << x.unit << " lost;";
  }
  std::cout << " " << (r.messages_in_flight ? std::to_string(*r.messages_in_flight) : "?")
            << " messages in flight lost, " << r.lost_seconds << " s lost" << std::endl;
}

/// The coordinator's silences per federate (its --stats file); none when it wrote none.
std::map<std::string, std::pair<std::uint64_t, double>> read_silences(const std::string& path) {
  std::map<std::string, std::pair<std::uint64_t, double>> silences;
  std::ifstream in(path);
  if (!in) return silences;
  const nlohmann::json stats = nlohmann::json::parse(in, nullptr, false);
  if (stats.is_discarded() || !stats.contains("silences")) return silences;
  for (const auto& [federate, silence] : stats.at("silences").items()) {
    silences[federate] = {silence.value("count", std::uint64_t{0}), silence.value("seconds", 0.0)};
  }
  return silences;
}

/// "silences: 3, 6.16 s without a message: inference 1 (2.05 s), ..." when there were any.
void print_silences(const std::map<std::string, std::pair<std::uint64_t, double>>& silences) {
  if (silences.empty()) return;
  std::uint64_t count = 0;
  double seconds = 0;
  std::string each;
  for (const auto& [federate, silence] : silences) {
    count += silence.first;
    seconds += silence.second;
    std::ostringstream one;
    one << (each.empty() ? "" : ", ") << federate << " " << silence.first << " ("
        << std::setprecision(3) << silence.second << " s)";
    each += one.str();
  }
  // Its own stream: std::cout's precision stays as the stop line after it needs it.
  std::ostringstream line;
  line << "silences: " << count << ", " << std::setprecision(3) << seconds
       << " s without a message (a slow or broken link, a stalled process): " << each;
  std::cout << line.str() << std::endl;
}

}  // namespace

int report_run(const cluster::ClusterConfig& config, const LaunchPlan& plan,
               const std::string& log_dir, const std::string& summary_path,
               const std::vector<JoinedReplica>& joined,
               const std::vector<hosts::RestartRecord>& restarts, double wall_seconds) {
  std::vector<hosts::ProcessResult> results;
  hosts::RunSummary summary;
  try {
    for (const cluster::ProcessPlan& process : plan.processes) {
      results.push_back(read_result(result_path(log_dir, process.name)));
    }
    const bool reactor = plan.mode == cluster::Mode::reactor;
    if (!plan.whole_cluster() && !(reactor && plan.coordinator)) {
      if (reactor) {
        send_results(config, plan, log_dir);
        send_traces(config, plan);
      }
      print_host_report(plan, results, joined);
      if (!reactor) {
        std::cerr << "tagflow up: no digest in actor mode across hosts: each host reports its own "
                  << "processes\n";
      }
      if (!summary_path.empty()) {
        std::cerr << "tagflow up: --summary: nothing written here: "
                  << (reactor
                          ? "the launcher of the coordinator's host writes the cluster's summary"
                          : "an actor-mode run across hosts has no summary")
                  << "\n";
      }
      return kExitOk;
    }
    if (!plan.whole_cluster()) results = read_cluster_results(config, log_dir);
    summary = hosts::combine_results(config, results, "process");
    add_joined(summary, joined);
    summary.restarts = with_messages_in_flight(restarts, results);
    summary.wall_seconds = wall_seconds;
    if (plan.coordinator) summary.silences = read_silences(coordinator_stats_path(log_dir));
  } catch (const std::exception& e) {
    std::cerr << "tagflow up: " << e.what() << "\n";
    return kExitFailed;
  }
  print_joined(joined);
  for (const hosts::RestartRecord& r : summary.restarts) print_restart(r);
  if (summary.resent_in_transit) {
    std::cout << "resumed: " << *summary.resent_in_transit
              << " message(s) in transit sent again from the checkpoint parts" << std::endl;
  }
  print_silences(summary.silences);
  std::cout << "stop " << summary.stop_reason << ": mean_return " << summary.mean_return
            << ", env_steps " << summary.env_steps << ", updates " << summary.updates << ", "
            << summary.seconds << " s, digest " << summary.digest_hex()
            << (summary.digest_reproducible ? ""
                                            : " (" + summary.unreproducible + ": not reproducible)")
            << ", security " << summary.security << std::endl;
  for (const std::string& line : summary.detail_lines()) std::cout << line << std::endl;
  try {
    const std::string json = summary.to_json() + "\n";
    write_file_atomically((std::filesystem::path(log_dir) / "summary.json").string(), json);
    if (!summary_path.empty()) write_file_atomically(summary_path, json);
  } catch (const std::exception& e) {
    std::cerr << "tagflow up: " << e.what() << "\n";
    return kExitFailed;
  }
  if (config.stop.target_return && !summary.target_reached) {
    std::cerr << "tagflow up: stopped (" << summary.stop_reason << ") before reaching the target "
              << "return " << *config.stop.target_return << "\n";
    return kExitBeforeTarget;
  }
  return kExitOk;
}

}  // namespace tagflow::cli
