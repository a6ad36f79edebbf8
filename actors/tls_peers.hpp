// What the OpenSSL hooks of actor_system_setup.cpp know about TLS peers (actor mode with
// certificates, actors/README.md): the handshakes this process refused, and the certificate name
// each address it dials must present.
//
// Refusals.
// CAF 0.17's OpenSSL module closes a connection whose handshake fails without telling anyone: a
// port scan, a plain CAF client, a holder of another CA's certificate or a forged BASP header
// all vanish silently. The OpenSSL hooks of actor_system_setup.cpp see every handshake step and
// call record_refused_handshake() once for each connection whose handshake ends in a TLS error
// (not TLS at all, a certificate of another CA or of another name, an alert from the peer), on
// either side (this process accepting, or dialling a peer). A peer that only connects and closes
// is not counted: with TLS 1.3 a member that dials and leaves at once looks the same.
//
// Each refusal is counted (refused_handshakes(), and, while a RefusedHandshakeMetrics lives, as
// tagflow_transport_invalid_messages_total{peer="unknown", reason="refused_handshake"}) and the
// first one from each remote host (the address without its port) is logged with OpenSSL's reason
// (PeerLogBudget: one line per host for 256 hosts, one more for the first host beyond, and 20
// lines a second, so a flood of connections cannot flood the log). The peer label is "unknown"
// because a refused peer never proves a name; the address is in the log line.
//
// Expected names. Every certificate of a run names one process (CN = process name, minted by
// `tagflow up` or `tagflow keys generate`), and every process holds one, so a certificate only
// proves membership. expect_certificate() binds an address to a name: a connection this process
// dials to that address completes its handshake only when the peer's certificate names that
// process (OpenSSL's host check against the CN, set on the connection before its first handshake
// step), so one member's key cannot stand in for another's at its address. The address is
// resolved when the binding is made; a later dial to it uses the binding.
//
// Thread-safety: record_refused_handshake() may be called from any thread (CAF's multiplexer
// thread in practice); one internal mutex guards the state. A RefusedHandshakeMetrics must be
// created and destroyed while no handshake is under way that it could miss, i.e. around the
// actor system's life; at most one exists at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "monitoring/process_metrics.hpp"

namespace tagflow::actors {

/// Counts one refused handshake with the peer at `address` ("host:port", or "unknown");
/// `accepting` is true when this process was the server side; `detail` is OpenSSL's reason.
void record_refused_handshake(const std::string& address, bool accepting,
                              const std::string& detail);

/// From now on, a connection this process dials to `host:port` must present a certificate whose
/// CN is `name`. `host` is an address or a name (resolved now, every address it has).
void expect_certificate(const std::string& host, std::uint16_t port, const std::string& name);

/// The name bound to the remote address "ip:port" by expect_certificate(), or "" when none.
[[nodiscard]] std::string expected_certificate(const std::string& address);

/// Handshakes refused since the process started.
[[nodiscard]] std::uint64_t refused_handshakes();

/// While alive, refused handshakes are counted in `metrics` and logged through `log` (instead of
/// spdlog). Ownership: `metrics` must outlive this object.
class RefusedHandshakeMetrics {
 public:
  RefusedHandshakeMetrics(monitoring::ProcessMetrics& metrics,
                          std::function<void(const std::string&)> log);
  ~RefusedHandshakeMetrics();
  RefusedHandshakeMetrics(const RefusedHandshakeMetrics&) = delete;
  RefusedHandshakeMetrics& operator=(const RefusedHandshakeMetrics&) = delete;
};

}  // namespace tagflow::actors
