// `tagflow monitoring ...`: the Prometheus side of a cluster (monitoring/README.md).
//   prometheus-config [FILE]   prints a prometheus.yml scraping every metrics endpoint of FILE
//   metrics                    prints the metric catalogue as a Markdown table
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "hosts/replica_params_check.hpp"
#include "monitoring/metric_catalogue.hpp"
#include "nodes/cluster/cluster_config.hpp"
#include "nodes/cluster/scrape_config.hpp"
#include "nodes/cluster/scrape_targets.hpp"
#include "nodes/kind/registry.hpp"

namespace tagflow::cli {
namespace {

struct PrometheusConfigOptions {
  std::string config_path;
  std::string scrape_interval = "5s";
  std::string job_name;
  std::string mode;  // empty: the file's
};

void print_prometheus_config(const PrometheusConfigOptions& options) {
  const std::string path =
      options.config_path.empty() ? default_config_path() : options.config_path;
  const auto interval = cluster::parse_duration(options.scrape_interval);
  const std::string given = "--scrape-interval '" + options.scrape_interval + "'";
  if (!interval) {
    fail_command("monitoring prometheus-config",
                 given +
                     " is not a duration: a whole number and one of ns, us, ms, s, m (5s, "
                     "500ms, 1m)",
                 kExitBadFile);
  }
  if (*interval < std::chrono::milliseconds(1) ||
      *interval % std::chrono::milliseconds(1) != std::chrono::nanoseconds(0)) {
    fail_command("monitoring prometheus-config",
                 given +
                     " is not a whole number of milliseconds of at least 1ms (Prometheus "
                     "scrapes at most once a millisecond)",
                 kExitBadFile);
  }
  try {
    const cluster::ClusterConfig config = cluster::load_cluster_config(path);
    hosts::check_replica_params(config);  // a file `tagflow up` refuses is refused here too
    cluster::ScrapeConfigOptions scrape;
    scrape.scrape_interval = std::chrono::duration_cast<std::chrono::milliseconds>(*interval);
    scrape.job_name = options.job_name;
    if (!options.mode.empty()) {
      scrape.mode = options.mode == "actor" ? cluster::Mode::actor : cluster::Mode::reactor;
    }
    std::cout << cluster::prometheus_scrape_config(config, scrape);
    // Endpoints bound to one address answer only there: across machines, a loopback one answers
    // no other machine (its targets, at the hosts' addresses, stay down).
    const std::string& bind = config.monitoring.bind;
    if (!cluster::binds_every_address(bind) && !cluster::on_one_machine(config)) {
      std::cerr << "tagflow monitoring prometheus-config: note: monitoring.bind is " << bind
                << ", so each process answers scrapes only there and its target at its host's "
                   "address stays down: set monitoring.bind: 0.0.0.0 for a cluster on several "
                   "machines\n";
    }
    // A Slurm or Kubernetes host's nodes get their addresses only in the allocation: without
    // them its targets are the host's own name, which Prometheus cannot reach.
    for (const auto& [name, host] : config.hosts) {
      if ((!host.slurm && !host.kubernetes) || !host.node_addresses.empty()) continue;
      std::cerr << "tagflow monitoring prometheus-config: note: host " << name
                << "'s targets name the host itself, not its "
                << (host.slurm ? "nodes: give their addresses in TAGFLOW_NODE_ADDRESSES "
                                 "(runs/CLUSTER-JOBID/addresses; docs/slurm.md, \"Watching it "
                                 "from outside the allocation\")"
                               : "pods: let Prometheus find them by their annotations or "
                                 "`tagflow k8s --pod-monitor` (docs/kubernetes.md)")
                << "\n";
    }
  } catch (const cluster::ConfigError& e) {
    fail_command("monitoring prometheus-config", e.what(), kExitBadFile);
  }
}

}  // namespace

void add_monitoring_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "monitoring", "Prometheus and Grafana for a cluster: scrape config, metric catalogue");
  command->require_subcommand(1);

  auto options = std::make_shared<PrometheusConfigOptions>();
  auto* config = command->add_subcommand(
      "prometheus-config",
      "Print a Prometheus configuration (prometheus.yml) whose targets are every metrics endpoint "
      "of the cluster: the coordinator and each replica of each node group with a metrics_port");
  config->add_option("file", options->config_path, "Cluster file")
      ->default_str("configs/local.yaml");
  config
      ->add_option("--scrape-interval", options->scrape_interval,
                   "How often Prometheus scrapes each process (e.g. 1s, 5s, 500ms)")
      ->capture_default_str();
  config->add_option("--job", options->job_name, "Scrape job name (default: tagflow-CLUSTER)");
  config
      ->add_option("--mode", options->mode,
                   "The mode the cluster runs in, when `tagflow up --mode` overrides the file's "
                   "(actor mode has no coordinator target; every target's `mode` label)")
      ->check(CLI::IsMember({"reactor", "actor"}));
  config->callback([options] { print_prometheus_config(*options); });

  auto* metrics = command->add_subcommand(
      "metrics", "Print the metric catalogue: every family a tagflow process exports");
  metrics->callback(
      [] { std::cout << monitoring::catalogue_markdown(nodes::full_metric_catalogue()); });
}

}  // namespace tagflow::cli
