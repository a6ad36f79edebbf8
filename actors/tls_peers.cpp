#include "actors/tls_peers.hpp"

#include <netdb.h>
#include <sys/socket.h>

#include <map>
#include <mutex>
#include <utility>

#include <spdlog/spdlog.h>

#include "actors/peer_traffic.hpp"
#include "common/log_text.hpp"
#include "transport/drop_reason.hpp"

namespace tagflow::actors {
namespace {

struct Refusals {
  std::mutex mutex;
  std::uint64_t count = 0;
  PeerLogBudget budget;
  prometheus::Counter* counter = nullptr;
  std::function<void(const std::string&)> log;
};

struct Expected {
  std::mutex mutex;
  std::map<std::string, std::string> names;  // "ip:port" → certificate CN
};

Expected& expected() {
  static Expected state;
  return state;
}

Refusals& refusals() {
  static Refusals state;  // never destroyed before the hooks stop: CAF's threads end first
  return state;
}

/// The host part of "host:port" (one log line per remote machine, whatever ports it uses).
std::string host_of(const std::string& address) {
  const std::size_t colon = address.rfind(':');
  return colon == std::string::npos ? address : address.substr(0, colon);
}

}  // namespace

void record_refused_handshake(const std::string& address, bool accepting,
                              const std::string& detail) {
  Refusals& state = refusals();
  const std::lock_guard<std::mutex> lock(state.mutex);
  ++state.count;
  if (state.counter != nullptr) state.counter->Increment();
  if (!state.budget.allow(host_of(address))) return;
  const std::string line =
      std::string(accepting ? "refused a TLS connection from " : "TLS handshake failed with ") +
      escape_for_log(address) + " (" + escape_for_log(detail) +
      "); further refusals from this address are counted, not logged";
  if (state.log) {
    state.log(line);
  } else {
    spdlog::warn("actor mode: {}", line);
  }
}

void expect_certificate(const std::string& host, std::uint16_t port, const std::string& name) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0) return;  // the dial fails too
  Expected& state = expected();
  const std::lock_guard<std::mutex> lock(state.mutex);
  for (const addrinfo* at = found; at != nullptr; at = at->ai_next) {
    char ip[NI_MAXHOST] = {};
    if (::getnameinfo(at->ai_addr, at->ai_addrlen, ip, sizeof ip, nullptr, 0, NI_NUMERICHOST) ==
        0) {
      state.names[std::string(ip) + ":" + std::to_string(port)] = name;
    }
  }
  ::freeaddrinfo(found);
}

std::string expected_certificate(const std::string& address) {
  Expected& state = expected();
  const std::lock_guard<std::mutex> lock(state.mutex);
  const auto it = state.names.find(address);
  return it == state.names.end() ? std::string() : it->second;
}

std::uint64_t refused_handshakes() {
  Refusals& state = refusals();
  const std::lock_guard<std::mutex> lock(state.mutex);
  return state.count;
}

RefusedHandshakeMetrics::RefusedHandshakeMetrics(monitoring::ProcessMetrics& metrics,
                                                 std::function<void(const std::string&)> log) {
  prometheus::Counter& counter = metrics.counter(
      monitoring::Metric::transport_invalid_messages,
      {{"peer", PeerTraffic::kUnknownPeer},
       {"reason", transport::drop_reason_name(transport::DropReason::kRefusedHandshake)}});
  Refusals& state = refusals();
  const std::lock_guard<std::mutex> lock(state.mutex);
  state.counter = &counter;
  state.log = std::move(log);
}

RefusedHandshakeMetrics::~RefusedHandshakeMetrics() {
  Refusals& state = refusals();
  const std::lock_guard<std::mutex> lock(state.mutex);
  state.counter = nullptr;
  state.log = nullptr;
}

}  // namespace tagflow::actors
