// MetricsEndpoint: the one HTTP endpoint of a process, serving its ProcessMetrics on /metrics.
//
// Wraps prometheus-cpp's Exposer (civetweb). Create exactly one per process, after the
// ProcessMetrics it serves, with the address and port of this process from the cluster file
// (monitoring.bind, metrics_port + replica index; see scrape_targets.hpp). Port 0 lets the kernel
// choose; port() tells which.
//
// Errors: the constructor throws MonitoringError naming the address when it cannot listen (port
// taken, address not local). The endpoint holds the metrics only weakly: scrapes after the
// ProcessMetrics is gone return an empty page.
// Shutdown: the destructor blocks for up to about 2 s once a scrape has been served (civetweb
// waits for its keep-alive connections). Destroy it once, at process exit, off any hot path.
// Thread-safety: const methods may be called from any thread. Not copyable or movable.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

namespace prometheus {
class Exposer;
}

namespace tagflow::monitoring {

class ProcessMetrics;

class MonitoringError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class MetricsEndpoint {
 public:
  MetricsEndpoint(const ProcessMetrics& metrics, const std::string& bind_address,
                  std::uint16_t port);
  ~MetricsEndpoint();
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  /// The port it listens on (the kernel's choice when constructed with 0).
  std::uint16_t port() const { return port_; }

  /// http://ADDRESS:PORT/metrics
  std::string url() const;

 private:
  std::string bind_address_;
  std::uint16_t port_ = 0;
  std::unique_ptr<prometheus::Exposer> exposer_;
};

}  // namespace tagflow::monitoring
