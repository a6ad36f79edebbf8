// `tagflow k8s FILE [-o DIR] [--image IMAGE] [--namespace NS] [--cpu Q --memory Q]
// [--pod-monitor]`: the Kubernetes objects that run a cluster file (cli/launch/k8s_manifests.hpp),
// checked against the file before anything is written, with the run's keys minted into its
// Secret.
// `tagflow k8s-pod FILE --host HOST --run-dir DIR [--keys DIR]`: what each pod runs. Its index is
// JOB_COMPLETION_INDEX (an Indexed Job's); it waits until every pod's DNS name
// (JOB-INDEX.SERVICE) resolves, gives the addresses to its processes (kNodeAddressesVariable)
// and runs `tagflow up` of the processes dealt to it with the AllocatedNode backend
// (cli/launch/launch_backend.hpp), logging to DIR/POD/.
// `tagflow k8s-probe FILE --host HOST --run-dir DIR (--ready|--live)`: the pods' readiness and
// liveness probes: GET /health/ready or /health/live of every process of this pod.
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/launch/cluster_launcher.hpp"
#include "cli/launch/k8s_manifests.hpp"
#include "cli/launch/launch_plan.hpp"
#include "cli/launch/slurm_allocation.hpp"
#include "common/atomic_file.hpp"
#include "hosts/replica_params_check.hpp"
#include "monitoring/http_get.hpp"
#include "nodes/cluster/process_plan.hpp"
#include "nodes/cluster/scrape_targets.hpp"
#include "transport/curve_keys.hpp"

namespace tagflow::cli {
namespace {

namespace fs = std::filesystem;

/// Written in the run directory once every pod's address is known and the processes start.
constexpr const char* kStartedMarker = "started";

struct RenderArguments {
  std::string file;
  std::string out;
  K8sOptions options;
};

struct PodArguments {
  std::string file;
  std::string host;
  std::string run_dir;
  std::string keys;
  int wait_seconds = 600;
};

struct ProbeArguments {
  std::string file;
  std::string host;
  std::string run_dir;
  bool ready = false;
  bool live = false;
};

cluster::ClusterConfig load(const std::string& command, const std::string& file) {
  try {
    cluster::ClusterConfig config = cluster::load_cluster_config(file);
    hosts::check_replica_params(config);
    return config;
  } catch (const cluster::ConfigError& e) {
    fail_command(command, e.what(), kExitBadFile);
  }
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Every file under `dir`, by its path relative to `dir`.
std::map<std::string, std::string> files_under(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    files[fs::relative(entry.path(), dir).string()] = read_text(entry.path().string());
  }
  return files;
}

/// The run's keys, minted in a private scratch directory and read back (none with
/// `security: none`).
std::map<std::string, std::string> mint_keys(const cluster::ClusterConfig& config) {
  if (config.security.none) return {};
  char scratch[] = "/tmp/tagflow-k8s-keys-XXXXXX";
  if (::mkdtemp(scratch) == nullptr)
    fail_command("k8s", "cannot create a scratch directory", kExitFailed);
  std::map<std::string, std::string> files;
  try {
    files = files_under(mint_run_keys(config, scratch));
  } catch (const transport::CurveKeyError& e) {
    std::error_code ignored;
    fs::remove_all(scratch, ignored);
    fail_command("k8s", std::string("cannot mint the run's keys: ") + e.what(), kExitFailed);
  }
  std::error_code ignored;
  fs::remove_all(scratch, ignored);
  return files;
}

void run_render(const RenderArguments& arguments) {
  const cluster::ClusterConfig config = load("k8s", arguments.file);
  std::vector<std::string> notes;
  std::vector<K8sHost> hosts;
  try {
    hosts = k8s_hosts(config, arguments.options, notes);
  } catch (const cluster::ConfigError& e) {
    fail_command("k8s", e.what(), kExitBadFile);
  } catch (const std::invalid_argument& e) {
    fail_command("k8s", e.what(), kExitBadFile);
  }
  const auto files =
      render_k8s(config, hosts, read_text(arguments.file), mint_keys(config), arguments.options);
  const fs::path out =
      arguments.out.empty() ? fs::path("k8s-" + config.name) : fs::path(arguments.out);
  std::error_code error;
  if (fs::exists(out, error) && !fs::is_directory(out, error)) {
    fail_command("k8s", "-o " + out.string() + ": not a directory", kExitBadFile);
  }
  fs::create_directories(out, error);
  // secret.yaml holds the run's private keys: only the owner reads the directory.
  fs::permissions(out, fs::perms::owner_all, fs::perm_options::replace, error);
  if (error) {
    fail_command("k8s", "-o " + out.string() + ": cannot create the directory: " + error.message(),
                 kExitBadFile);
  }
  // Every file is checked before the first is written: a set of manifests half replaced (a
  // kustomization.yaml listing a file not written) would apply a mix of two renderings.
  for (const auto& entry : files) {
    if (is_special_file((out / entry.first).string())) {
      fail_command("k8s",
                   (out / entry.first).string() +
                       " is not a regular file (a directory, a pipe or a device): nothing was "
                       "written; remove it or choose another -o",
                   kExitBadFile);
    }
  }
  for (const auto& [name, text] : files) {
    const fs::path path = out / name;
    try {
      write_file_atomically(path.string(), text, 0600);  // only the owner reads them
    } catch (const AtomicFileError& e) {
      fail_command("k8s", e.what(), kExitFailed);
    }
  }
  // An earlier rendering's optional file that this one does not write would stay behind,
  // unlisted in kustomization.yaml (a secret.yaml with that run's private keys).
  if (files.count("podmonitor.yaml") == 0 && fs::remove(out / "podmonitor.yaml", error)) {
    std::cerr << "tagflow k8s: removed podmonitor.yaml of an earlier --pod-monitor rendering\n";
  }
  if (files.count("secret.yaml") == 0 && fs::remove(out / "secret.yaml", error)) {
    std::cerr << "tagflow k8s: removed secret.yaml of an earlier rendering (security: none has no "
                 "keys)\n";
  }
  for (const std::string& note : notes) std::cerr << "tagflow k8s: note: " << note << "\n";
  int pods = 0;
  for (const K8sHost& host : hosts) pods += host.pods;
  std::cerr << "tagflow k8s: wrote " << files.size() << " files to " << out.string() << "/ ("
            << hosts.size() << " Job(s), " << pods << " pod(s), image " << arguments.options.image
            << ", namespace " << arguments.options.name_space << ")\n"
            << "tagflow k8s: kubectl apply -k " << out.string() << "   (docs/kubernetes.md)\n";
}

/// This pod's index among its Job's pods.
int pod_index(const std::string& command) {
  const char* value = std::getenv("JOB_COMPLETION_INDEX");
  if (value == nullptr) {
    fail_command(command, "no JOB_COMPLETION_INDEX: this runs in a pod of an Indexed Job",
                 kExitFailed);
  }
  try {
    std::size_t used = 0;
    const int index = std::stoi(value, &used);
    if (used == std::string(value).size() && index >= 0) return index;
  } catch (const std::exception&) {
  }
  fail_command(command, std::string("JOB_COMPLETION_INDEX '") + value + "' is not an index",
               kExitFailed);
}

const cluster::HostConfig& played_host(const std::string& command,
                                       const cluster::ClusterConfig& config,
                                       const std::string& host, int index) {
  const auto found = config.hosts.find(host);
  if (found == config.hosts.end())
    fail_command(command, "no host '" + host + "' in the file", kExitFailed);
  if (index >= cluster::node_count(found->second)) {
    fail_command(command,
                 "pod index " + std::to_string(index) + " is past host " + host + "'s " +
                     std::to_string(cluster::node_count(found->second)) + " pod(s)",
                 kExitFailed);
  }
  return found->second;
}

/// "HOST=ADDR,ADDR;..." of every pod, once every pod's DNS name resolves (pods are scheduled
/// one by one: a name appears when its pod has an address). Fails after `wait`.
std::string pod_addresses(const cluster::ClusterConfig& config, const std::string& service,
                          std::chrono::seconds wait) {
  const auto deadline = std::chrono::steady_clock::now() + wait;
  auto next_report = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (true) {
    std::string value;
    std::string missing;
    for (const auto& [name, host] : config.hosts) {
      value += (value.empty() ? "" : ";") + name + "=";
      for (int i = 0; i < cluster::node_count(host); ++i) {
        const std::string pod = k8s_pod_dns_name(service, config.name + "-" + name, i);
        try {
          value += (i == 0 ? "" : ",") + resolve_node_address(pod);
        } catch (const std::runtime_error&) {
          missing += (missing.empty() ? "" : " ") + pod;
        }
      }
    }
    if (missing.empty()) return value;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      const char* name_space = std::getenv(kNamespaceVariable);
      const std::string in =
          name_space != nullptr && *name_space != '\0' ? std::string("-n ") + name_space + " " : "";
      fail_command("k8s-pod",
                   "these pods have no address after " + std::to_string(wait.count()) +
                       " s: " + missing + " (kubectl " + in +
                       "get pods -l app.kubernetes.io/instance=" + config.name + ")",
                   kExitFailed);
    }
    if (now >= next_report) {
      std::cerr << "tagflow k8s-pod: waiting for " << missing << "\n";
      next_report = now + std::chrono::seconds(15);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

void run_pod(const PodArguments& arguments) {
  const cluster::ClusterConfig config = load("k8s-pod", arguments.file);
  const int index = pod_index("k8s-pod");
  (void)played_host("k8s-pod", config, arguments.host, index);
  if (!config.security.none && arguments.keys.empty()) {
    fail_command("k8s-pod", "a closed cluster needs the run's keys (--keys, the Secret's mount)",
                 kExitFailed);
  }
  const char* service_value = std::getenv(kServiceVariable);
  const std::string service = service_value != nullptr ? service_value : config.name;
  const std::string pod = config.name + "-" + arguments.host + "-" + std::to_string(index);
  std::cerr << "tagflow k8s-pod: " << pod << " (host " << arguments.host << ", pod " << index
            << ") waiting for every pod's address\n";
  const std::string addresses =
      pod_addresses(config, service, std::chrono::seconds(arguments.wait_seconds));
  ::setenv(cluster::kNodeAddressesVariable, addresses.c_str(), 1);
  std::cerr << "tagflow k8s-pod: " << cluster::kNodeAddressesVariable << "=" << addresses << "\n";
  std::error_code error;
  fs::create_directories(arguments.run_dir, error);
  std::ofstream(fs::path(arguments.run_dir) / kStartedMarker) << addresses << "\n";

  LaunchOptions launch;
  launch.file = arguments.file;
  launch.host = arguments.host;
  launch.node = index;
  launch.node_name = pod;
  launch.manager = NodeManager::kubernetes;
  launch.log_dir = (fs::path(arguments.run_dir) / pod).string();
  launch.run_keys = arguments.keys;
  // The head (the coordinator's pod) writes the cluster's summary; another pod's launcher would
  // only say that it writes none.
  if (cluster::is_coordinator_node(config, arguments.host, index)) {
    launch.summary_path = (fs::path(arguments.run_dir) / "summary.json").string();
  }
  launch.quiet = true;
  launch.tagflow = own_executable();
  const int code = launch_cluster(launch);
  if (code != 0) throw CLI::RuntimeError(code);
}

/// The metrics ports of the processes dealt to pod `index` of `host`.
std::vector<std::uint16_t> pod_metrics_ports(const cluster::ClusterConfig& config,
                                             const std::string& host, int index) {
  std::vector<std::uint16_t> ports;
  if (cluster::is_coordinator_node(config, host, index) && config.coordinator.metrics_port != 0) {
    ports.push_back(config.coordinator.metrics_port);
  }
  for (const cluster::ProcessPlan& process : cluster::plan_processes(config)) {
    if (process.host != host || process.node != index) continue;
    for (const std::string& replica : process.replicas) {
      const auto [group, i] = cluster::find_replica(config, replica);
      if (group != nullptr && group->metrics_port != 0) {
        ports.push_back(static_cast<std::uint16_t>(group->metrics_port + i));
      }
    }
  }
  return ports;
}

void run_probe(const ProbeArguments& arguments) {
  const cluster::ClusterConfig config = load("k8s-probe", arguments.file);
  const int index = pod_index("k8s-probe");
  (void)played_host("k8s-probe", config, arguments.host, index);
  if (!fs::exists(fs::path(arguments.run_dir) / kStartedMarker)) {
    // Still waiting for the other pods: alive, not ready.
    if (arguments.ready)
      fail_command("k8s-probe", "not started: waiting for every pod's address", 1);
    return;
  }
  const std::string bind = config.monitoring.bind;
  const std::string address = cluster::binds_every_address(bind) ? "127.0.0.1" : bind;
  const std::string path = arguments.ready ? "/health/ready" : "/health/live";
  std::string failed;
  for (const std::uint16_t port : pod_metrics_ports(config, arguments.host, index)) {
    if (!monitoring::http_get(address, port, path, std::chrono::seconds(2))) {
      failed += " " + std::to_string(port);
    }
  }
  if (!failed.empty()) fail_command("k8s-probe", path + " failed on port(s)" + failed, 1);
}

}  // namespace

void add_k8s_command(CLI::App& app) {
  auto render = std::make_shared<RenderArguments>();
  auto* command = app.add_subcommand(
      "k8s",
      "Write the Kubernetes objects that run a cluster file: a ConfigMap, a Secret with the "
      "run's keys, a headless Service and one Indexed Job per host (docs/kubernetes.md)");
  command->add_option("file", render->file, "Cluster file (configs/README.md)")->required();
  command->add_option("-o,--out", render->out, "Directory to write (default: k8s-CLUSTER)");
  command->add_option("--image", render->options.image, "The tagflow image the pods run")
      ->capture_default_str();
  command->add_option("--namespace", render->options.name_space, "The namespace of every object")
      ->capture_default_str();
  command->add_option("--cpu", render->options.cpu,
                      "CPU request of each pod of a host without `kubernetes:` (e.g. 2)");
  command->add_option("--memory", render->options.memory,
                      "Memory of each pod of a host without `kubernetes:` (e.g. 4Gi)");
  command->add_flag("--pod-monitor", render->options.pod_monitor,
                    "Also write a prometheus-operator PodMonitor");
  command->callback([render] { run_render(*render); });

  auto pod = std::make_shared<PodArguments>();
  auto* pod_command = app.add_subcommand(
      "k8s-pod", "In a pod `tagflow k8s` described: this pod's launcher (its Job's index)");
  pod_command->add_option("file", pod->file, "Cluster file")->required();
  pod_command->add_option("--host", pod->host, "The host of the file this pod plays")->required();
  pod_command->add_option("--run-dir", pod->run_dir, "Logs and the summary go here")->required();
  pod_command->add_option("--keys", pod->keys, "The run's keys (the Secret's mount)");
  pod_command
      ->add_option("--wait", pod->wait_seconds,
                   "Seconds to wait for every pod's DNS name to resolve")
      ->capture_default_str()
      ->check(CLI::Range(0, 86400));
  pod_command->callback([pod] { run_pod(*pod); });

  auto probe = std::make_shared<ProbeArguments>();
  auto* probe_command = app.add_subcommand(
      "k8s-probe", "A pod's readiness or liveness probe: /health of every process of this pod");
  probe_command->add_option("file", probe->file, "Cluster file")->required();
  probe_command->add_option("--host", probe->host, "The host of the file this pod plays")
      ->required();
  probe_command->add_option("--run-dir", probe->run_dir, "The pod's run directory")->required();
  auto* ready = probe_command->add_flag("--ready", probe->ready, "Every process is ready");
  auto* live = probe_command->add_flag("--live", probe->live, "Every process answers");
  ready->excludes(live);
  probe_command->callback([probe] {
    if (!probe->ready && !probe->live)
      fail_command("k8s-probe", "say --ready or --live", kExitBadFile);
    run_probe(*probe);
  });
}

}  // namespace tagflow::cli
