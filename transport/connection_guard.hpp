// ConnectionGuard: bounds what one TCP connection to a receiving ROUTER can make ZeroMQ hold
// before the application sees it (WIRE.md §3.1).
//
// ZeroMQ hands a multipart message to the application only once its last frame has arrived, and
// ZMQ_MAXMSGSIZE caps one frame, not a message: a peer that sends frames with the MORE flag and
// never a last one makes ZeroMQ hold everything it sends. A second connection whose routing id
// is already in use is accepted by ZeroMQ and its messages queued, but never handed over. Neither
// is visible through the socket, so the guard watches the connections themselves:
//   - a socket monitor reports each accepted connection (its file descriptor) and its end;
//   - every message the application reads is noted with its connection (ZMQ_SRCFD) and the
//     bytes its frames took on the wire (ZMTP 3 framing);
//   - check(), called after a receive found nothing waiting, compares what the kernel received on
//     each connection (TCP_INFO tcpi_bytes_received) with what the application read from it:
//     the difference is what ZeroMQ holds for that connection (plus what is still in the kernel).
// A connection is cut (shutdown(2): ZeroMQ sees the end, drops the connection and frees its
// half-received message) and counted in `drops` when
//   1. it holds more than `max_held_bytes` at two checks in a row and nothing was read from it
//      in between (incomplete_over_cap): a real peer's bytes not yet readable are at most one
//      message being received, one ZeroMQ has decoded but not handed over yet, and the kernel's
//      buffer — within the cap — so only complete messages not yet read can take it over the
//      cap, and the receive before the next check reads those; or
//   2. it holds more than a handshake (`handshake_allowance`) and neither received nor delivered
//      a byte for `stall_after` (undelivered_connection): ZeroMQ keeps its messages from the
//      application — a second connection with a routing id already in use — or it stopped in
//      the middle of a message.
// Drops are counted under the connection's routing id once it delivered a message, else under
// "(unidentified)"; the first drop of each logs the peer's address.
// Only TCP connections are watched (others have no TCP_INFO). Not thread-safe: use it from the
// socket's thread. The router must outlive the guard.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include <zmq.hpp>

#include "transport/peer_drop_counters.hpp"

namespace tagflow::transport {

struct ConnectionLimits {
  /// Bytes one connection may make ZeroMQ hold (see the class comment, rule 1).
  std::size_t max_held_bytes = std::size_t{80} << 20;
  /// Bytes that count as a handshake, not as held data (rule 2).
  std::size_t handshake_allowance = 1024;
  /// How long a connection may hold data without any progress (rule 2).
  std::chrono::milliseconds stall_after{5000};
  /// check() does nothing when called sooner than this after the previous check.
  std::chrono::milliseconds check_every{5};
};

/// The limits for a receiver that accepts messages of up to `max_message_bytes` (payload) with
/// headers of up to `max_header_bytes`: two whole messages (one being read, one ZeroMQ decoded
/// but has not yet handed over) plus the kernel's receive buffer (tcp_rmem's maximum, at least
/// 16 MiB).
[[nodiscard]] ConnectionLimits limits_for_messages(std::size_t max_message_bytes,
                                                   std::size_t max_header_bytes);

/// The bytes a frame of `size` takes on the wire in ZMTP 3 (flags, length, body).
[[nodiscard]] constexpr std::size_t zmtp_frame_bytes(std::size_t size) {
  return size + (size <= 255 ? 2 : 9);
}

/// Reads one event of a socket monitor (zmq_socket_monitor) from `events` without waiting: its
/// kind (ZMQ_EVENT_*) and value (for ACCEPTED and DISCONNECTED: the connection's descriptor).
/// False when none is waiting; a malformed event reads as kind 0.
bool read_monitor_event(zmq::socket_t& events, std::uint16_t& kind, std::uint32_t& value);

class ConnectionGuard {
 public:
  using Clock = std::chrono::steady_clock;

  /// Starts watching `router`'s connections; call before it binds (connections accepted
  /// earlier are not watched).
  ConnectionGuard(zmq::context_t& context, zmq::socket_t& router, ConnectionLimits limits);
  ~ConnectionGuard();
  ConnectionGuard(const ConnectionGuard&) = delete;
  ConnectionGuard& operator=(const ConnectionGuard&) = delete;

  /// The application read a message of `wire_bytes` from connection `fd` (ZMQ_SRCFD) whose
  /// routing id is `peer`.
  void note_read(int fd, const std::string& peer, std::size_t wire_bytes);
  /// Cuts the connections that break a rule (see above) and counts them in `drops`. Call after a
  /// receive found nothing waiting. Returns how many it cut.
  int check(PeerDropCounters& drops, Clock::time_point now = Clock::now());
  /// The TCP connections being watched.
  [[nodiscard]] std::size_t connections() const { return live_.size(); }
  [[nodiscard]] const ConnectionLimits& limits() const { return limits_; }

 private:
  struct Connection {
    std::string address;  ///< the peer's ip:port, for the log
    std::string peer;     ///< its routing id, once it delivered a message
    std::uint16_t local_port = 0;
    std::uint16_t remote_port = 0;
    std::uint64_t read_bytes = 0;
    std::uint64_t read_at_last_check = 0;
    std::uint64_t received_at_last_check = 0;
    bool over_cap_at_last_check = false;
    Clock::time_point unchanged_since;
  };
  void read_events();
  void watch(int fd);
  [[nodiscard]] bool still_same(int fd, const Connection& connection) const;
  void cut(int fd, const Connection& connection, DropReason reason, std::uint64_t held,
           PeerDropCounters& drops);

  ConnectionLimits limits_;
  zmq::socket_t& router_;
  zmq::socket_t events_;
  std::map<int, Connection> live_;  // by file descriptor
  Clock::time_point last_check_{};
};

}  // namespace tagflow::transport
