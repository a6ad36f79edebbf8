#include "cli/launch/launch_plan.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>

#include "actors/actor_credentials.hpp"
#include "cli/launch/remote_hosts.hpp"
#include "monitoring/process_collector.hpp"
#include "nodes/cluster/process_plan.hpp"
#include "nodes/cluster/service_endpoints.hpp"
#include "transport/curve_keys.hpp"

namespace tagflow::cli {
namespace {

/// The one CPU of a Cpus_allowed_list ("3"), or -1 for a list of several ("0-3", "0,2").
int single_cpu_of(const std::string& list) {
  if (list.empty() || list.find_first_not_of("0123456789") != std::string::npos) return -1;
  return list.size() > 6 ? -1 : std::stoi(list);
}

bool is_loopback(const std::string& address) {
  return address.rfind("127.", 0) == 0 || address == "::1" || address == "localhost";
}

std::string host_names(const cluster::ClusterConfig& config) {
  std::string names;
  for (const auto& [name, host] : config.hosts) names += (names.empty() ? "" : ", ") + name;
  return names;
}

/// The hosts other than the coordinator's that run a process, when every one of them has an
/// ssh destination (then this machine is the head); empty otherwise.
std::vector<cluster::HostConfig> ssh_hosts(const cluster::ClusterConfig& config) {
  std::vector<cluster::HostConfig> remote;
  for (const auto& [name, entry] : config.hosts) {
    if (name == config.coordinator.host) continue;
    bool runs_something = false;
    for (const cluster::ProcessPlan& process : cluster::plan_processes(config)) {
      runs_something = runs_something || process.host == name;
    }
    if (!runs_something) continue;
    if (entry.ssh.empty()) return {};
    remote.push_back(entry);
  }
  return remote;
}

std::vector<std::string> chosen_hosts(const cluster::ClusterConfig& config,
                                      const std::string& cluster_file, const std::string& host) {
  if (!host.empty()) {
    if (config.hosts.count(host) == 0) {
      throw LaunchError(cluster_file + ": no host '" + host + "' (hosts: " + host_names(config) +
                        ")");
    }
    return {host};
  }
  std::vector<std::string> hosts;
  for (const auto& [name, entry] : config.hosts) {
    if (config.hosts.size() > 1 && !is_loopback(entry.address)) {
      if (!ssh_hosts(config).empty()) return {config.coordinator.host};
      throw LaunchError(cluster_file + ": the cluster spans hosts " + host_names(config) +
                        "; run `tagflow up " + cluster_file +
                        " --host NAME` on each of them (NAME: the host this machine plays), or "
                        "give every host but the coordinator's (" +
                        config.coordinator.host +
                        ") an ssh destination (hosts.NAME.ssh) to start them all from there");
    }
    hosts.push_back(name);
  }
  return hosts;
}

bool contains(const std::vector<std::string>& list, const std::string& value) {
  for (const std::string& item : list) {
    if (item == value) return true;
  }
  return false;
}

/// LOG_DIR/NAME.log, or NAME.restartN.log for attempt N of a restarted run.
std::string attempt_log(const std::string& log_dir, const std::string& name, int attempt) {
  return (std::filesystem::path(log_dir) /
          (attempt == 0 ? name + ".log" : name + ".restart" + std::to_string(attempt) + ".log"))
      .string();
}

}  // namespace

LaunchPlan make_launch_plan(const cluster::ClusterConfig& config, const std::string& cluster_file,
                            std::optional<cluster::Mode> mode, const std::string& host, int node,
                            const std::string& node_name) {
  LaunchPlan plan;
  plan.cluster_file = std::filesystem::absolute(cluster_file).lexically_normal().string();
  plan.mode = mode.value_or(config.mode);
  plan.mode_overridden = mode.has_value();
  plan.file_argument = cluster_file;
  plan.hosts = chosen_hosts(config, cluster_file, host);
  if (host.empty() && plan.hosts.size() == 1 && config.hosts.size() > 1) {
    const auto remote = ssh_hosts(config);
    const bool loopback_only =
        std::all_of(config.hosts.begin(), config.hosts.end(),
                    [](const auto& h) { return is_loopback(h.second.address); });
    if (!loopback_only) plan.remote_hosts = remote;
  }
  plan.node = node;
  plan.node_name = node_name;
  plan.bind_cpus = config.cpu_bind_auto && plan.mode == cluster::Mode::reactor;
  plan.coordinator = plan.mode == cluster::Mode::reactor &&
                     contains(plan.hosts, config.coordinator.host) && node <= 0;
  const std::vector<cluster::ProcessPlan> all = cluster::plan_processes(config);
  plan.cluster_processes = all.size();
  for (const cluster::ProcessPlan& process : all) {
    if (contains(plan.hosts, process.host) && (node < 0 || process.node == node)) {
      plan.processes.push_back(process);
    }
  }
  return plan;
}

std::vector<PlannedListener> planned_listeners(const cluster::ClusterConfig& config,
                                               const LaunchPlan& plan) {
  std::vector<PlannedListener> listeners;
  const std::string& bind = config.monitoring.bind;
  const int bind_line = config.monitoring.bind_line;
  const bool reactor = plan.mode == cluster::Mode::reactor;
  const auto host_line = [&config](const std::string& host) { return config.hosts.at(host).line; };
  if (reactor && plan.coordinator) {
    const cluster::CoordinatorConfig& c = config.coordinator;
    listeners.push_back({c.port_line, "coordinator.port", config.hosts.at(c.host).address, c.port,
                         host_line(c.host), "hosts." + c.host + ".address"});
    if (c.metrics_port != 0) {
      listeners.push_back({c.metrics_port_line, "coordinator.metrics_port", bind, c.metrics_port,
                           bind_line, "monitoring.bind"});
    }
  }
  for (const cluster::ProcessPlan& process : plan.processes) {
    const std::string address = cluster::process_address(config, process);
    for (const std::string& replica : process.replicas) {
      const auto [group, index] = cluster::find_replica(config, replica);
      if (group == nullptr) continue;
      const std::string of = index == 0 ? "" : " + " + std::to_string(index);
      // In actor mode every replica but those of a transient kind (samplers, which dial) is
      // published on its data port (hosts/actor/actor_process.hpp).
      if (group->data_port != 0 && (reactor || !group->kind->transient)) {
        listeners.push_back({group->data_port_line, "nodes." + group->name + ".data_port" + of,
                             address, long{group->data_port} + index, host_line(process.host),
                             "hosts." + process.host + ".address"});
      }
      if (group->metrics_port != 0) {
        listeners.push_back({group->metrics_port_line,
                             "nodes." + group->name + ".metrics_port" + of, bind,
                             long{group->metrics_port} + index, bind_line, "monitoring.bind"});
      }
    }
  }
  // The gateways at their bind address; an interface name is the gateway's own to resolve.
  for (const cluster::GatewayEndpoint& e : cluster::gateway_endpoints(config)) {
    const auto [group, index] = cluster::find_replica(config, e.replica);
    if (group == nullptr || !contains(plan.hosts, e.host)) continue;
    const auto line_of = [&](const std::string& param) {
      const auto at = group->param_lines.find(param);
      return at == group->param_lines.end() ? group->line : at->second;
    };
    const std::string params = "nodes." + group->name + ".params.";
    const bool bind_given = group->params.count("gateway_bind") != 0;
    listeners.push_back(
        {line_of("gateway_port"),
         params + "gateway_port" + (index == 0 ? "" : " + " + std::to_string(index)),
         e.bind_address, e.port, line_of(bind_given ? "gateway_bind" : "gateway_port"),
         params + (bind_given ? "gateway_bind" : "gateway_port")});
  }
  return listeners;
}

std::vector<int> usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

std::vector<PinnedProcess> pinned_processes() {
  const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  std::vector<PinnedProcess> pinned;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    const std::string pid = entry.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream status(entry.path() / "status");
    std::string line;
    int cpu = -1;
    while (std::getline(status, line)) {
      if (line.rfind("Cpus_allowed_list:", 0) == 0) {
        std::istringstream value(line.substr(18));
        std::string list;
        value >> list;
        cpu = single_cpu_of(list);
        break;
      }
    }
    if (cpu < 0) continue;
    std::ifstream stat_file(entry.path() / "stat");
    std::string stat;
    std::getline(stat_file, stat);
    const std::optional<monitoring::ProcessStats> stats =
        monitoring::parse_proc_self_stat(stat, ticks, 1, 0);
    if (!stats || stats->kernel_thread) continue;
    pinned.push_back({cpu, stats->cpu_seconds, std::stoi(pid)});
  }
  return pinned;
}

std::vector<int> least_pinned_first(const std::vector<int>& cpus,
                                    const std::vector<PinnedProcess>& pinned, int first) {
  struct Load {
    int processes = 0;
    double seconds = 0;
  };
  std::map<int, Load> load;
  for (const PinnedProcess& p : pinned) {
    load[p.cpu].processes += 1;
    load[p.cpu].seconds += p.cpu_seconds;
  }
  const int n = static_cast<int>(cpus.size());
  std::map<int, int> turn;  // a CPU's place in `cpus` turned to begin at `first`
  for (int i = 0; i < n; ++i) turn[cpus[static_cast<std::size_t>(i)]] = ((i - first) % n + n) % n;
  std::vector<int> ordered = cpus;
  std::stable_sort(ordered.begin(), ordered.end(), [&](int a, int b) {
    const Load& x = load[a];
    const Load& y = load[b];
    if (x.processes != y.processes) return x.processes < y.processes;
    const auto xs = static_cast<long long>(x.seconds);
    const auto ys = static_cast<long long>(y.seconds);
    if (xs != ys) return xs < ys;
    return turn[a] < turn[b];
  });
  return ordered;
}

void bind_to_cpus(std::vector<ChildSpec>& specs, const std::vector<int>& cpus) {
  if (cpus.size() < 2 || specs.size() < cpus.size()) return;
  for (std::size_t i = 0; i < specs.size(); ++i) specs[i].cpu = cpus[i % cpus.size()];
}

std::string describe_cpus(const std::vector<ChildSpec>& specs) {
  std::string text;
  for (const ChildSpec& spec : specs) {
    if (spec.cpu < 0) continue;
    text += (text.empty() ? "" : ", ") + spec.name + " on " + (text.empty() ? "CPU " : "") +
            std::to_string(spec.cpu);
  }
  return text;
}

bool wants_run_keys(const cluster::ClusterConfig& config, const LaunchPlan& plan) {
  return !config.security.curve && !config.security.none && plan.whole_cluster() &&
         plan.remote_hosts.empty();
}

std::vector<std::string> actor_credential_names(const cluster::ClusterConfig& config) {
  std::vector<std::string> names;
  for (const cluster::ProcessPlan& process : cluster::plan_processes(config)) {
    names.push_back(process.name);
  }
  names.emplace_back(actors::kJoinCredential);
  return names;
}

std::string mint_run_keys(const cluster::ClusterConfig& config, const std::string& log_dir) {
  const std::filesystem::path dir =
      std::filesystem::absolute(std::filesystem::path(log_dir) / "keys").lexically_normal();
  std::error_code error;
  std::filesystem::remove_all(dir, error);
  std::filesystem::create_directories(dir, error);
  if (error) {
    throw transport::CurveKeyError("cannot create " + dir.string() + ": " + error.message());
  }
  std::filesystem::permissions(dir, std::filesystem::perms::owner_all,
                               std::filesystem::perm_options::replace, error);
  transport::write_key_pair(dir, "coordinator", transport::generate_curve_key_pair());
  for (const cluster::ProcessPlan& process : cluster::plan_processes(config)) {
    for (const std::string& replica : process.replicas) {
      transport::write_key_pair(dir, replica, transport::generate_curve_key_pair());
    }
  }
  try {
    actors::mint_actor_credentials(dir, actor_credential_names(config));
  } catch (const actors::ActorCredentialError& e) {
    throw transport::CurveKeyError(e.what());
  }
  return dir.string();
}

std::string result_path(const std::string& log_dir, const std::string& process) {
  return (std::filesystem::path(log_dir) / (process + ".json")).string();
}

std::string coordinator_stats_path(const std::string& log_dir) {
  return (std::filesystem::path(log_dir) / "coordinator.stats.json").string();
}

std::vector<ChildSpec> child_specs(const LaunchPlan& plan, const std::string& tagflow,
                                   const std::string& log_dir, const std::string& ssh) {
  std::vector<ChildSpec> specs = local_child_specs(plan, tagflow, log_dir);
  for (ChildSpec& spec : remote_child_specs(plan, ssh, log_dir)) specs.push_back(std::move(spec));
  return specs;
}

std::vector<ChildSpec> local_child_specs(const LaunchPlan& plan, const std::string& tagflow,
                                         const std::string& log_dir) {
  const std::filesystem::path dir(log_dir);
  const auto log_of = [&](const std::string& name) {
    return attempt_log(log_dir, name, plan.attempt);
  };
  std::vector<ChildSpec> specs;
  if (plan.coordinator) {
    // Its grants, messages and silences per federate go into the run summary (run_report.hpp).
    ChildSpec coordinator{"coordinator",
                          {tagflow, "coordinator", "--config", plan.cluster_file, "--stats",
                           coordinator_stats_path(log_dir)},
                          log_of("coordinator")};
    if (!plan.checkpoints.empty()) {
      coordinator.argv.push_back("--checkpoints");
      coordinator.argv.push_back(plan.checkpoints);
    }
    if (!plan.resume.empty()) {
      coordinator.argv.push_back("--start-time");
      coordinator.argv.push_back(std::to_string(plan.resume_time_ns));
    }
    if (!plan.run_keys.empty()) {
      coordinator.argv.push_back("--run-keys");
      coordinator.argv.push_back(plan.run_keys);
    }
    if (!plan.trace.empty()) {
      coordinator.argv.push_back("--trace");
      coordinator.argv.push_back(plan.trace);
    }
    if (!plan.whole_cluster()) {  // the other hosts' results come here (PROTOCOL.md §8)
      coordinator.argv.push_back("--results");
      coordinator.argv.push_back(std::filesystem::absolute(dir).lexically_normal().string());
    }
    specs.push_back(std::move(coordinator));
  }
  for (const cluster::ProcessPlan& process : plan.processes) {
    ChildSpec spec{process.name,
                   {tagflow, "node", "--config", plan.cluster_file, "--name", process.name,
                    "--result", result_path(log_dir, process.name), "--quiet"},
                   log_of(process.name)};
    if (!plan.checkpoints.empty()) {
      spec.argv.push_back("--checkpoints");
      spec.argv.push_back(plan.checkpoints);
    }
    if (!plan.run_keys.empty()) {
      spec.argv.push_back("--run-keys");
      spec.argv.push_back(plan.run_keys);
    }
    if (plan.mode_overridden) {
      spec.argv.push_back("--mode");
      spec.argv.push_back(cluster::to_string(plan.mode));
    }
    if (plan.peers_restart) spec.argv.push_back("--peers-restart");
    if (!plan.trace.empty()) {
      spec.argv.push_back("--trace");
      spec.argv.push_back(plan.trace);
    }
    specs.push_back(std::move(spec));
  }
  return specs;
}

std::vector<ChildSpec> remote_child_specs(const LaunchPlan& plan, const std::string& ssh,
                                          const std::string& log_dir) {
  const std::optional<cluster::Mode> mode =
      plan.mode_overridden ? std::optional<cluster::Mode>(plan.mode) : std::nullopt;
  std::vector<ChildSpec> specs;
  for (const cluster::HostConfig& host : plan.remote_hosts) {
    specs.push_back(
        remote_child(host, ssh, plan.file_argument, log_dir, mode, !plan.trace.empty()));
    specs.back().log_path = attempt_log(log_dir, "host-" + host.name, plan.attempt);
  }
  return specs;
}

std::string default_log_dir(const std::string& cluster, std::chrono::system_clock::time_point now) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  std::tm local{};
  ::localtime_r(&seconds, &local);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &local);
  return (std::filesystem::path("runs") / (cluster + "-" + stamp)).string();
}

std::string describe(const LaunchPlan& plan) {
  std::string text = plan.hosts.size() == 1 ? "host " + plan.hosts.front() : "hosts ";
  if (plan.hosts.size() > 1) {
    for (std::size_t i = 0; i < plan.hosts.size(); ++i) {
      text += (i == 0 ? "" : ", ") + plan.hosts[i];
    }
  }
  if (!plan.node_name.empty()) text += " (node " + plan.node_name + ")";
  text += ":";
  bool first = true;
  auto add = [&](const std::string& name) {
    text += (first ? " " : ", ") + name;
    first = false;
  };
  if (plan.coordinator) add("coordinator");
  for (const cluster::ProcessPlan& process : plan.processes) {
    std::string entry = process.name;
    if (process.replicas.size() > 1 || process.replicas.front() != process.name) {
      entry += " [";
      for (std::size_t i = 0; i < process.replicas.size(); ++i) {
        entry += (i == 0 ? "" : " ") + process.replicas[i];
      }
      entry += "]";
    }
    add(entry);
  }
  if (first) text += " nothing to run";
  for (const cluster::HostConfig& host : plan.remote_hosts) {
    text += "; host " + host.name + " over ssh (" + host.ssh + ")";
  }
  return text;
}

}  // namespace tagflow::cli
