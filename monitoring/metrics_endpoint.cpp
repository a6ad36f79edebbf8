#include "monitoring/metrics_endpoint.hpp"

#include <prometheus/exposer.h>

#include "monitoring/process_metrics.hpp"

namespace tagflow::monitoring {
namespace {

/// civetweb wants IPv6 addresses in brackets: [::1]:9100.
std::string host_part(const std::string& address) {
  const bool ipv6 = address.find(':') != std::string::npos && address.front() != '[';
  return ipv6 ? "[" + address + "]" : address;
}

}  // namespace

MetricsEndpoint::MetricsEndpoint(const ProcessMetrics& metrics, const std::string& bind_address,
                                 std::uint16_t port)
    : bind_address_(bind_address) {
  const std::string listen = host_part(bind_address) + ":" + std::to_string(port);
  try {
    exposer_ = std::make_unique<prometheus::Exposer>(listen, 2);
  } catch (const std::exception& e) {
    throw MonitoringError("cannot serve metrics on " + listen + ": " + e.what());
  }
  for (const auto& collectable : metrics.collectables()) exposer_->RegisterCollectable(collectable);
  const std::vector<int> ports = exposer_->GetListeningPorts();
  if (ports.empty()) throw MonitoringError("metrics endpoint on " + listen + " has no port");
  port_ = static_cast<std::uint16_t>(ports.front());
}

MetricsEndpoint::~MetricsEndpoint() = default;

std::string MetricsEndpoint::url() const {
  return "http://" + host_part(bind_address_) + ":" + std::to_string(port_) + "/metrics";
}

}  // namespace tagflow::monitoring
