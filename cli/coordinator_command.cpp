// `tagflow coordinator --config FILE`: runs the federation coordinator (federation/PROTOCOL.md)
// until every federate resigned (exit 0) or the run failed (exit 1, naming the federate). With a
// cluster file whose coordinator has a metrics_port, it serves its metrics there (on
// monitoring.bind) with node=coordinator, kind=coordinator. With `--results DIR` (a cluster file;
// `tagflow up` passes its log directory) it stores the results the other hosts' launchers send
// at the end (PROTOCOL.md §8, cli/launch/result_collector.hpp) in DIR and, once every federate
// resigned, waits up to 30 s for the missing ones before it exits. With `--checkpoints ROOT` (a
// cluster file with `checkpoint:`) it writes each checkpoint's manifest once every federate
// reported its part (PROTOCOL.md §9); `--start-time NS` starts a run resumed from the checkpoint
// of that logical time.
#include <chrono>
#include <iostream>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>

#include "federation/checkpoint_store.hpp"

#include <yaml-cpp/yaml.h>

#include "cli/commands.hpp"
#include "cli/launch/result_collector.hpp"
#include "coordinator/coordinator.hpp"
#include "monitoring/metrics_endpoint.hpp"
#include "monitoring/process_metrics.hpp"
#include "nodes/cluster/federation_plan.hpp"
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
  bool bare_federation = false;
  try {
    bare_federation = static_cast<bool>(YAML::LoadFile(path)["federation"]);
  } catch (const YAML::Exception&) {
    // Not readable or not YAML: the cluster loader reports it with file and line.
  }
  if (bare_federation) return {coordinator::load_federation_spec(path), std::nullopt};
  cluster::ClusterConfig config = cluster::load_cluster_config(path);
  if (!run_keys.empty()) cluster::use_run_keys(config, run_keys);
  coordinator::FederationSpec spec = cluster::federation_spec(config);
  return {std::move(spec), std::move(config)};
}

/// How long a finished run waits for the other hosts' results: their processes write them after
/// they resign, a learner's after its final evaluation.
constexpr std::chrono::seconds kResultWait{30};

void collect_results(coordinator::Coordinator& coordinator, ResultCollector& collector) {
  if (coordinator.collect_results(kResultWait, [&] { return collector.complete(); })) return;
  std::cerr << "tagflow coordinator: no result within " << kResultWait.count() << " s from:";
  for (const std::string& process : collector.missing()) std::cerr << " " << process;
  std::cerr << "\n";
}

}  // namespace

void add_coordinator_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "coordinator",
      "Run the federation coordinator of a cluster file (reactor mode): one federate per node "
      "replica, or the federates of a `federation:` section");
  auto config = std::make_shared<std::string>();
  auto endpoint = std::make_shared<std::string>();
  auto results = std::make_shared<std::string>();
  auto run_keys = std::make_shared<std::string>();
  auto checkpoints = std::make_shared<std::string>();
  auto start_ns = std::make_shared<std::int64_t>(0);
  command->add_option("--config", *config, "Cluster YAML file")->required();
  command->add_option("--checkpoints", *checkpoints,
                      "Write the manifest of each checkpoint here once every federate wrote its "
                      "part (a cluster file with checkpoint:, PROTOCOL.md §9)");
  command->add_option("--start-time", *start_ns,
                      "The start tag's time in ns (a run resumed from the checkpoint of that "
                      "time); default 0");
  command->add_option("--run-keys", *run_keys,
                      "CURVE key pairs `tagflow up` minted for this run (docs/ARCHITECTURE.md)");
  command->add_option("--results", *results,
                      "Store the results the other hosts' launchers send here (a cluster file)");
  command->add_option(
      "--bind", *endpoint,
      "Endpoint to bind instead of the configured coordinator address (e.g. tcp://0.0.0.0:7600)");
  command->callback([config, endpoint, results, run_keys, checkpoints, start_ns] {
    try {
      LoadedSpec loaded = load_spec(*config, *run_keys);
      loaded.spec.start_tag = {*start_ns, 0};
      std::unique_ptr<coordinator::CheckpointManifest> manifest;
      if (!checkpoints->empty() && loaded.cluster && loaded.cluster->checkpoint.every) {
        std::vector<std::string> federates;
        for (const auto& f : loaded.spec.federates) federates.push_back(f.id);
        manifest = std::make_unique<coordinator::CheckpointManifest>(
            *checkpoints, std::move(federates), loaded.cluster->checkpoint.keep);
      }
      std::unique_ptr<ResultCollector> collector;
      if (!results->empty() && loaded.cluster) {
        collector = std::make_unique<ResultCollector>(*loaded.cluster, *results);
      }
      monitoring::ProcessMetrics metrics(
          {"coordinator", monitoring::kCoordinatorKind,
           cluster::to_string(loaded.cluster ? loaded.cluster->mode : cluster::Mode::reactor)});
      coordinator::Coordinator coordinator(std::move(loaded.spec));
      if (manifest) {
        coordinator.set_checkpoint_sink(
            [&manifest](const std::string& federate, const coordinator::ControlMessage& message) {
              const auto path = manifest->on_written(federate, message.tag,
                                                     {message.part_bytes, message.part_checksum});
              if (path)
                std::cout << "tagflow coordinator: checkpoint complete: " << *path << std::endl;
            });
      }
      if (collector) {
        coordinator.set_result_sink([&collector](const std::string& federate,
                                                 const std::string& process,
                                                 const std::string& json) {
          return collector->receive(federate, process, json);
        });
      }
      std::unique_ptr<monitoring::MetricsEndpoint> endpoint_http;
      if (loaded.cluster && loaded.cluster->coordinator.metrics_port != 0) {
        coordinator.set_metrics(&metrics);
        endpoint_http = std::make_unique<monitoring::MetricsEndpoint>(
            metrics, loaded.cluster->monitoring.bind, loaded.cluster->coordinator.metrics_port);
        std::cout << "tagflow coordinator: metrics on " << endpoint_http->url() << std::endl;
      }
      const std::string bound = coordinator.bind(*endpoint);
      std::cout << "tagflow coordinator: listening on " << bound << std::endl;
      const coordinator::CoordinatorResult result = coordinator.run();
      if (!result.ok) {
        std::cerr << "tagflow coordinator: run failed: " << result.error << "\n";
        throw CLI::RuntimeError(1);
      }
      std::cout << "tagflow coordinator: run finished (" << result.grants_sent << " grants, "
                << result.messages_handled << " messages)" << std::endl;
      if (collector) collect_results(coordinator, *collector);
    } catch (const cluster::ConfigError& e) {
      std::cerr << "tagflow coordinator: " << e.what() << "\n";
      throw CLI::RuntimeError(2);
    } catch (const coordinator::FederationConfigError& e) {
      std::cerr << "tagflow coordinator: " << e.what() << "\n";
      throw CLI::RuntimeError(2);
    } catch (const transport::CurveKeyError& e) {
      std::cerr << "tagflow coordinator: " << e.what() << "\n";
      throw CLI::RuntimeError(2);
    } catch (const monitoring::MonitoringError& e) {
      std::cerr << "tagflow coordinator: " << e.what() << "\n";
      throw CLI::RuntimeError(2);
    } catch (const zmq::error_t& e) {
      std::cerr << "tagflow coordinator: cannot bind: " << e.what() << "\n";
      throw CLI::RuntimeError(2);
    }
  });
}

}  // namespace tagflow::cli
