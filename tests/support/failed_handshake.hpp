// A client whose ZeroMQ handshake fails before any key check, for tests of how servers count
// them: without CURVE, or with CURVE and a server key that is not the server's.
//
// Without CURVE it is a raw peer that sends its whole NULL greeting and keeps the connection: a
// ZeroMQ client without CURVE hangs up itself once it reads a CURVE server's greeting, and when
// it does so first the server sees a closed connection, not a failed handshake.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include <zmq.hpp>

#include "tests/support/raw_zmtp_peer.hpp"
#include "transport/curve_keys.hpp"

namespace tagflow::testing {

class FailedHandshake {
 public:
  /// Connects to `endpoint` (tcp://127.0.0.1:PORT); `curve`: with CURVE and a stranger's server
  /// key, else without CURVE. The connection stays open while this lives.
  FailedHandshake(zmq::context_t& context, const std::string& endpoint, bool curve)
      : socket_(context, zmq::socket_type::dealer) {
    socket_.set(zmq::sockopt::linger, 0);
    socket_.set(zmq::sockopt::reconnect_ivl, -1);  // one handshake, not one per reconnect
    if (!curve) {
      const auto port =
          static_cast<std::uint16_t>(std::stoi(endpoint.substr(endpoint.rfind(':') + 1)));
      raw_.emplace(port, "stranger", std::chrono::seconds(2));
      return;
    }
    const transport::CurveKeyPair own = transport::generate_curve_key_pair();
    transport::make_curve_client(socket_, own, transport::generate_curve_key_pair().public_key);
    socket_.connect(endpoint);
    (void)socket_.send(zmq::str_buffer("x"), zmq::send_flags::dontwait);
  }

 private:
  zmq::socket_t socket_;
  std::optional<RawZmtpPeer> raw_;
};

}  // namespace tagflow::testing
