// tagflow_test_metrics_exporter CLUSTER_FILE PROCESS
//
// A stand-in for a node process in the Prometheus integration test: it finds PROCESS's metrics
// endpoint in the cluster file exactly as a node will (find_scrape_target, monitoring.bind),
// serves a ProcessMetrics of that kind through the real MetricsEndpoint, prints "ready PORT",
// then updates every family it exports ten times a second until SIGTERM or SIGINT (or 120 s).
#include <signal.h>

#include <ctime>
#include <iostream>

#include "monitoring/metrics_endpoint.hpp"
#include "monitoring/process_metrics.hpp"
#include "monitoring/scrape_targets.hpp"
#include "tests/monitoring/synthetic_metrics.hpp"

int main(int argc, char** argv) {
  using namespace tagflow;
  if (argc != 3) {
    std::cerr << "usage: tagflow_test_metrics_exporter CLUSTER_FILE PROCESS\n";
    return 2;
  }
  // Block the stop signals before any thread starts, so only sigtimedwait below receives them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  try {
    const cluster::ClusterConfig config = cluster::load_cluster_config(argv[1]);
    const std::optional<monitoring::ScrapeTarget> target =
        monitoring::find_scrape_target(config, argv[2]);
    if (!target) {
      std::cerr << "no metrics endpoint for process '" << argv[2] << "' in " << argv[1] << "\n";
      return 2;
    }
    monitoring::ProcessMetrics metrics({target->process, target->kind, config.mode});
    const monitoring::MetricsEndpoint endpoint(metrics, config.monitoring.bind, target->port);
    std::cout << "ready " << endpoint.port() << std::endl;
    const timespec tick_period{0, 100'000'000};
    for (int tick = 1; tick <= 1200; ++tick) {
      tagflow::testing::fill_synthetic_metrics(metrics, tick);
      if (sigtimedwait(&stop_signals, nullptr, &tick_period) > 0) break;
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "tagflow_test_metrics_exporter: " << e.what() << "\n";
    return 1;
  }
}
