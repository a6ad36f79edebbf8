// MetricsEndpoint: the HTTP endpoint of a process (or of one replica), serving its ProcessMetrics
// on /metrics in the Prometheus text exposition format (version 0.0.4).
//
// A small HTTP/1.1 server of its own on one thread: it answers `GET /metrics` (and `GET /`, a
// pointer to it) with `Connection: close`, and the health probes `GET /health/live` (200 while the
// process serves) and `GET /health/ready` (200 when ProcessMetrics::ready(), 503 before). One
// poll() loop over non-blocking sockets serves up to `max_connections` connections at once; each
// has a whole-request deadline (from accept to the last byte of the answer, 2 s by default) and an
// 8 KiB request cap, so idle, trickling or garbage-sending clients cannot hold it or delay a
// scrape. When every slot is taken, a new connection takes the slot of the oldest one that has not
// sent a whole request yet (a scrape sends its request at once; one that is being answered keeps
// its slot). prometheus-cpp's Exposer (civetweb) is not used: it refuses to start in processes that
// link Debian's LibTorch (learner and inference), and it blocks about 2 s on shutdown after a
// scrape.
//
// Create one per ProcessMetrics, with the address and port of this process from the cluster file
// (monitoring.bind, metrics_port + replica index; see scrape_targets.hpp). Port 0 lets the kernel
// choose; port() tells which.
//
// Errors: the constructor throws MonitoringError naming the address when it cannot listen (port
// taken, address not local or not resolvable). The endpoint holds the metrics only weakly:
// scrapes after the ProcessMetrics is gone return an empty page. Shutdown is immediate (the
// destructor wakes the server thread and joins it).
// Thread-safety: const methods may be called from any thread. Not copyable or movable.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/event_fd.hpp"

struct sockaddr_storage;

namespace prometheus {
class Collectable;
struct MetricFamily;
}  // namespace prometheus

namespace tagflow::monitoring {

class ProcessMetrics;

class MonitoringError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Bounds on what clients may hold (the defaults serve a cluster; tests shorten them).
struct EndpointLimits {
  std::chrono::milliseconds request_deadline{2000};  ///< accept → last byte of the answer
  std::size_t max_connections = 32;                  ///< served at once
};

class MetricsEndpoint {
 public:
  /// Why a client was dropped without the answer it asked for (the `reason` of its series).
  enum class Refusal : std::size_t { malformed, not_get, too_large, timeout, too_many_connections };
  static constexpr std::size_t kRefusals = 5;

  MetricsEndpoint(const ProcessMetrics& metrics, const std::string& bind_address,
                  std::uint16_t port, EndpointLimits limits = {});
  ~MetricsEndpoint();
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  /// The port it listens on (the kernel's choice when constructed with 0).
  std::uint16_t port() const { return port_; }

  /// http://ADDRESS:PORT/metrics
  std::string url() const;

 private:
  void serve();
  /// The whole HTTP answer to `request` (a complete request, or the first 8 KiB of one); sets
  /// `refused` when the answer refuses it.
  std::string reply_to(const std::string& request, std::optional<Refusal>& refused) const;
  std::string page() const;
  /// Counts a dropped client (its address, `peer`, an accepted connection's); the first drop for
  /// each reason is logged on stderr.
  void refuse(Refusal why, const sockaddr_storage& peer);
  /// The refusals so far as series of tagflow_transport_invalid_messages_total{peer="http"}.
  void add_refusals(std::vector<prometheus::MetricFamily>& families) const;

  EndpointLimits limits_;
  std::string bind_address_;
  std::uint16_t port_ = 0;
  std::map<std::string, std::string> constant_labels_;  // of the refusals' series
  std::vector<std::weak_ptr<prometheus::Collectable>> collectables_;
  std::array<std::uint64_t, kRefusals> refused_{};  // the server thread's only
  std::shared_ptr<const std::atomic<bool>> ready_;
  int listen_fd_ = -1;
  std::optional<EventFd> wake_;  // the destructor asks the server thread to end
  std::thread thread_;
};

}  // namespace tagflow::monitoring
