// `tagflow coordinator --config FILE`: runs the federation coordinator (federation/PROTOCOL.md)
// until every federate resigned (exit 0) or the run failed (exit 1, naming the federate). With a
// cluster file whose coordinator has a metrics_port, it serves its metrics there (on
// monitoring.bind) with node=coordinator, kind=coordinator. With `--results DIR` (a cluster file;
// `tagflow up` passes its log directory) it stores the results the other hosts' launchers send
// at the end (PROTOCOL.md §8, cli/launch/result_collector.hpp) in DIR and, once every federate
// resigned, waits up to 30 s for the missing ones before it exits. With `--checkpoints ROOT` (a
// cluster file with `checkpoint:`) it writes each checkpoint's manifest once every federate
// reported its part (PROTOCOL.md §9); `--start-time NS` starts a run resumed from the checkpoint
// of that logical time. `--trace DIR` records the messages it sends and receives
// (tracing/README.md).
#include <atomic>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>

#include "federation/checkpoint_store.hpp"

#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/launch/result_collector.hpp"
#include "cli/launch/trace_collector.hpp"
#include "common/atomic_file.hpp"
#include "common/trace_recorder.hpp"
#include "coordinator/coordinator.hpp"
#include "hosts/process_trace.hpp"
#include "hosts/reactor/federated_process.hpp"
#include "hosts/replica_params_check.hpp"
#include "monitoring/metrics_endpoint.hpp"
#include "monitoring/process_metrics.hpp"
#include "nodes/cluster/federation_plan.hpp"
#include "nodes/cluster/process_plan.hpp"
#include "transport/curve_keys.hpp"

namespace tagflow::cli {
namespace {

/// A cluster file (nodes + connections, configs/README.md) or a bare federation description
/// (a `federation:` section, federation/PROTOCOL.md §0, as used for non-RL reactor programs).
struct LoadedSpec {
  coordinator::FederationSpec spec;
  std::optional<cluster::ClusterConfig> cluster;  // when the file is a cluster file
};

/// A cluster file (nodes + connections, configs/README.md) or a bare federation description
/// (a `federation:` section, federation/PROTOCOL.md §0, as used for non-RL reactor programs).
LoadedSpec load_spec(const std::string& path, const std::string& run_keys) {
  // A directory, a pipe or a device is refused by the cluster loader, with its words (`tagflow
  // up` says the same), before anything reads it: a pipe would block the read for ever.
  if (std::error_code ec; !std::filesystem::is_regular_file(path, ec)) {
    (void)cluster::load_cluster_config(path);
  }
  bool bare_federation = false;
  try {
    bare_federation = static_cast<bool>(YAML::LoadFile(path)["federation"]);
  } catch (const YAML::Exception&) {
    // Not readable or not YAML: the cluster loader reports it with file and line.
  }
  if (bare_federation) return {coordinator::load_federation_spec(path), std::nullopt};
  cluster::ClusterConfig config = cluster::load_cluster_config(path);
  // A file whose node params its nodes would refuse fails here, as `tagflow up` fails it, not
  // after the join timeout.
  hosts::check_replica_params(config);
  if (!run_keys.empty()) cluster::use_run_keys(config, run_keys);
  coordinator::FederationSpec spec = cluster::federation_spec(config);
  return {std::move(spec), std::move(config)};
}

/// How long a finished run waits for the other hosts' results: their processes write them after
/// they resign, a learner's after its final evaluation.
constexpr std::chrono::seconds kResultWait{30};

void collect_results(coordinator::Coordinator& coordinator, ResultCollector& collector,
                     const TraceCollector* traces) {
  if (coordinator.collect_results(kResultWait, [&] {
        return collector.complete() && (traces == nullptr || traces->complete());
      })) {
    return;
  }
  if (!collector.complete()) {
    std::cerr << "tagflow coordinator: no result within " << kResultWait.count() << " s from:";
    for (const std::string& process : collector.missing()) std::cerr << " " << process;
    std::cerr << "\n";
  }
  if (traces != nullptr && !traces->complete()) {
    std::cerr << "tagflow coordinator: trace files not received within " << kResultWait.count()
              << " s:";
    for (const std::string& file : traces->missing()) std::cerr << " " << file;
    std::cerr << "\n";
  }
}

struct CoordinatorOptions {
  std::string config;
  std::string endpoint;
  std::string results;
  std::string trace;  // --trace DIR
  std::string run_keys;
  std::string checkpoints;
  std::string stats;
  std::int64_t start_ns = 0;
  int metrics_port = 0;  // --metrics-port: 0 keeps the file's coordinator.metrics_port
};

/// The run's grants, messages and silences (federation/PROTOCOL.md §6.2), in all and per
/// federate, as JSON: what `--stats` writes; the launcher puts the silences in the run summary.
std::string stats_json(const coordinator::CoordinatorResult& result) {
  nlohmann::ordered_json by_federate = nlohmann::ordered_json::object();
  for (const auto& [id, silences] : result.silences_by_federate) {
    by_federate[id] = {{"count", silences.first}, {"seconds", silences.second}};
  }
  nlohmann::ordered_json traffic = nlohmann::ordered_json::object();
  for (const auto& [id, counts] : result.traffic_by_federate) {
    traffic[id] = {{"grants", counts.first}, {"messages", counts.second}};
  }
  return nlohmann::ordered_json{{"grants", result.grants_sent},
                                {"messages", result.messages_handled},
                                {"silences", by_federate},
                                {"by_federate", traffic}}
             .dump(2) +
         "\n";
}

/// With --checkpoints and a cluster file with checkpoint:, the manifest writer; null else.
std::unique_ptr<coordinator::CheckpointManifest> checkpoint_manifest(const CoordinatorOptions& o,
                                                                     const LoadedSpec& loaded) {
  if (o.checkpoints.empty() || !loaded.cluster || !loaded.cluster->checkpoint.every) {
    return nullptr;
  }
  std::vector<std::string> federates;
  for (const auto& f : loaded.spec.federates) federates.push_back(f.id);
  std::map<std::string, std::string> hosts;  // where each part is written
  for (const cluster::ProcessPlan& process : cluster::plan_processes(*loaded.cluster)) {
    for (const std::string& replica : process.replicas) hosts[replica] = process.host;
  }
  return std::make_unique<coordinator::CheckpointManifest>(
      o.checkpoints, std::move(federates), loaded.cluster->checkpoint.keep, std::move(hosts));
}

/// Hands the coordinator's checkpoint reports to `manifest` and the other hosts' results to
/// `collector`, each when there is one.
void attach_sinks(coordinator::Coordinator& coordinator,
                  std::unique_ptr<coordinator::CheckpointManifest>& manifest,
                  std::unique_ptr<ResultCollector>& collector) {
  if (manifest) {
    coordinator.set_checkpoint_sink([&manifest](const std::string& federate,
                                                const coordinator::ControlMessage& message) {
      const auto path =
          manifest->on_written(federate, message.tag, {message.part_bytes, message.part_checksum});
      if (path) std::cout << "tagflow coordinator: checkpoint complete: " << *path << std::endl;
    });
  }
  if (collector) {
    coordinator.set_result_sink([&collector](const std::string& federate,
                                             const std::string& process,
                                             const std::string& result) {
      return collector->receive(federate, process, result);
    });
  }
}

/// The coordinator's metrics endpoint: on --metrics-port when given (also for a bare federation
/// file, which has no metrics_port of its own), else on its cluster file's metrics_port, if any.
std::unique_ptr<monitoring::MetricsEndpoint> serve_metrics(coordinator::Coordinator& coordinator,
                                                           monitoring::ProcessMetrics& metrics,
                                                           const LoadedSpec& loaded,
                                                           int port_given) {
  const int port = port_given != 0
                       ? port_given
                       : (loaded.cluster ? loaded.cluster->coordinator.metrics_port : 0);
  if (port == 0) return nullptr;
  coordinator.set_metrics(&metrics);
  auto endpoint = std::make_unique<monitoring::MetricsEndpoint>(
      metrics, loaded.cluster ? loaded.cluster->monitoring.bind : std::string("127.0.0.1"),
      static_cast<std::uint16_t>(port));
  std::cout << "tagflow coordinator: metrics on " << endpoint->url() << std::endl;
  return endpoint;
}

/// The coordinator that SIGTERM and SIGINT stop, and the first such signal (0: none yet).
std::atomic<coordinator::Coordinator*> g_stoppable{nullptr};
std::atomic<int> g_stop_signal{0};

/// Async-signal-safe: asks the coordinator to end the run; a second signal ends the process at
/// once.
void on_stop_signal(int signal) {
  coordinator::Coordinator* const running = g_stoppable.load();
  if (g_stop_signal.exchange(signal) != 0 || running == nullptr) {
    ::signal(signal, SIG_DFL);
    ::raise(signal);  // delivered as the handler returns
    return;
  }
  running->stop(signal);
}

/// While it lives, SIGTERM and SIGINT end the run rather than the process: the coordinator sends
/// FAILED (`coordinator stopped by SIGTERM before the run finished`) to every joined federate,
/// which then stop at once instead of after heartbeat_timeout (federation/PROTOCOL.md §6.7).
/// run_coordinator() then ends the process by that signal (hosts::end_by_signal()), as it would
/// have ended without the handler, once the coordinator has closed (ZeroMQ delivers the FAILEDs as
/// its sockets close) and the trace is written: the exit status and how a launcher reports it are
/// the same.
class StopOnSignal {
 public:
  explicit StopOnSignal(coordinator::Coordinator& coordinator) {
    g_stop_signal.store(0);
    g_stoppable.store(&coordinator);
    struct sigaction action {};
    action.sa_handler = on_stop_signal;
    ::sigemptyset(&action.sa_mask);
    ::sigaction(SIGTERM, &action, &old_term_);
    ::sigaction(SIGINT, &action, &old_int_);
  }
  ~StopOnSignal() {
    g_stoppable.store(nullptr);
    ::sigaction(SIGTERM, &old_term_, nullptr);
    ::sigaction(SIGINT, &old_int_, nullptr);
  }
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;

  /// The signal that stopped the run, or 0.
  static int signal() { return g_stop_signal.load(); }

 private:
  struct sigaction old_term_ {};
  struct sigaction old_int_ {};
};

/// Runs the coordinator until the run ends; a failed run exits 1. Returns the signal that stopped
/// it (StopOnSignal), or 0.
int serve(const CoordinatorOptions& o) {
  LoadedSpec loaded = load_spec(o.config, o.run_keys);
  loaded.spec.start_tag = {o.start_ns, 0};
  std::unique_ptr<coordinator::CheckpointManifest> manifest = checkpoint_manifest(o, loaded);
  std::unique_ptr<ResultCollector> collector;
  std::unique_ptr<TraceCollector> traces;
  if (!o.results.empty() && loaded.cluster) {
    collector = std::make_unique<ResultCollector>(*loaded.cluster, o.results);
    if (!o.trace.empty()) traces = std::make_unique<TraceCollector>(*loaded.cluster, o.results);
  }
  monitoring::ProcessMetrics metrics(
      {"coordinator", monitoring::kCoordinatorKind,
       cluster::to_string(loaded.cluster ? loaded.cluster->mode : cluster::Mode::reactor)});
  std::optional<hosts::ProcessTrace> trace;
  if (!o.trace.empty()) {
    trace.emplace(o.trace, "coordinator", "",
                  loaded.cluster ? loaded.cluster->trace.events_per_thread
                                 : cluster::TraceConfig{}.events_per_thread,
                  true);  // SIGTERM writes the trace too, then ends the coordinator
    trace::active()->name_thread("coordinator", "");
  }
  coordinator::Coordinator coordinator(std::move(loaded.spec));
  attach_sinks(coordinator, manifest, collector);
  if (traces) {
    coordinator.set_trace_sink(
        [&traces](const std::string& federate, const coordinator::ControlMessage& part) {
          return traces->receive(federate, part);
        });
  }
  const std::unique_ptr<monitoring::MetricsEndpoint> endpoint_http =
      serve_metrics(coordinator, metrics, loaded, o.metrics_port);
  const std::string bound = coordinator.bind(o.endpoint);
  std::cout << "tagflow coordinator: listening on " << bound << std::endl;
  const StopOnSignal stop_on_signal(coordinator);
  const coordinator::CoordinatorResult result = coordinator.run();
  if (!result.ok) {
    if (const int signal = StopOnSignal::signal(); signal != 0) {
      std::cerr << "tagflow coordinator: run failed: " << result.error << std::endl;
      return signal;
    }
    fail_command("coordinator", "run failed: " + result.error, kExitFailed);
  }
  std::cout << "tagflow coordinator: run finished (" << result.grants_sent << " grants, "
            << result.messages_handled << " messages, " << result.silences << " silences, "
            << result.silence_seconds << " s silent)" << std::endl;
  if (!o.stats.empty()) write_file_atomically(o.stats, stats_json(result));
  if (collector) collect_results(coordinator, *collector, traces.get());
  return StopOnSignal::signal();
}

/// serve(), its errors as exit codes: 2 for a bad file, keys or address.
void run_coordinator(const CoordinatorOptions& o) {
  try {
    if (const int signal = serve(o); signal != 0) {
      std::cout.flush();
      std::cerr.flush();
      hosts::end_by_signal(signal);
    }
  } catch (const cluster::ConfigError& e) {
    fail_command("coordinator", e.what(), kExitBadFile);
  } catch (const coordinator::FederationConfigError& e) {
    fail_command("coordinator", e.what(), kExitBadFile);
  } catch (const transport::CurveKeyError& e) {
    fail_command("coordinator", e.what(), kExitBadFile);
  } catch (const monitoring::MonitoringError& e) {
    fail_command("coordinator", e.what(), kExitBadFile);
  } catch (const zmq::error_t& e) {
    fail_command("coordinator",
                 "cannot bind " +
                     (o.endpoint.empty() ? std::string("the file's coordinator address")
                                         : "--bind " + o.endpoint) +
                     ": " + e.what() + " (an endpoint is tcp://ADDRESS:PORT)",
                 kExitBadFile);
  }
}

/// --bind: tcp://ADDRESS:PORT with a port of 1 to 65535, or `*` for one the kernel chooses (ZeroMQ
/// itself took port 99999 as 34463, the number modulo 65536).
const CLI::Validator kTcpEndpoint(
    [](std::string& value) {
      const std::string scheme = "tcp://";
      const std::size_t colon = value.rfind(':');
      if (value.rfind(scheme, 0) != 0 || colon == std::string::npos || colon < scheme.size() + 1) {
        return std::string("an endpoint is tcp://ADDRESS:PORT, not ") + value;
      }
      const std::string port = value.substr(colon + 1);
      if (port == "*") return std::string();  // a port the kernel chooses
      int number = 0;
      const auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), number);
      if (port.empty() || error != std::errc() || end != port.data() + port.size() || number < 1 ||
          number > 65535) {
        return "the port of " + value + " is not a number from 1 to 65535 (or *)";
      }
      return std::string();
    },
    "");

}  // namespace

void add_coordinator_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "coordinator",
      "Run the federation coordinator of a cluster file (reactor mode): one federate per node "
      "replica, or the federates of a `federation:` section");
  auto o = std::make_shared<CoordinatorOptions>();
  command->add_option("--config", o->config, "Cluster YAML file")->required();
  command->add_option("--checkpoints", o->checkpoints,
                      "Write the manifest of each checkpoint here once every federate wrote its "
                      "part (a cluster file with checkpoint:, PROTOCOL.md §9)");
  command
      ->add_option("--start-time", o->start_ns,
                   "The start tag's time in ns (a run resumed from the checkpoint of that "
                   "time); default 0")
      ->check(CLI::Range(std::int64_t{0}, std::numeric_limits<std::int64_t>::max()));
  command->add_option("--run-keys", o->run_keys,
                      "CURVE key pairs `tagflow up` minted for this run (docs/ARCHITECTURE.md)");
  command->add_option("--results", o->results,
                      "Store the results the other hosts' launchers send here (a cluster file)");
  command->add_option("--stats", o->stats,
                      "At the end of a finished run, write its grants, messages and silences "
                      "per federate here (JSON; the launcher's summary reads it)");
  command->add_option("--trace", o->trace,
                      "Record the coordinator's messages into DIR/coordinator.trace.json "
                      "(tracing/README.md)");
  command
      ->add_option("--metrics-port", o->metrics_port,
                   "Serve Prometheus metrics on this port (127.0.0.1, or the cluster file's "
                   "monitoring.bind), instead of the file's coordinator.metrics_port; also for a "
                   "bare federation file")
      ->check(CLI::Range(1, 65535));
  command
      ->add_option("--bind", o->endpoint,
                   "Endpoint to bind instead of the configured coordinator address (e.g. "
                   "tcp://0.0.0.0:7600)")
      ->check(kTcpEndpoint);
  command->callback([o] { run_coordinator(*o); });
}

}  // namespace tagflow::cli
