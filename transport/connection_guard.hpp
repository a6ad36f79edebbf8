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
//     each connection (TCP_INFO tcpi_bytes_received) with what the application read from it and
//     what still waits in the kernel's receive queue (SIOCINQ): the difference is what ZeroMQ
//     holds for that connection in this process's memory.
// A connection is cut (shutdown(2): ZeroMQ sees the end, drops the connection and frees its
// half-received message; the messages it had received whole stay queued, out of the guard's
// count, until the application reads them) and counted in `drops` when
//   1. it holds more than `max_held_bytes` at two checks in a row and nothing was read from it
//      in between (incomplete_over_cap): a real peer's bytes not yet readable are at most one
//      message being received and one ZeroMQ has decoded but not handed over yet — within the
//      cap — so only complete messages not yet read can take it over the cap, and the receive
//      before the next check reads those; or
//   2. it holds more than a handshake (`handshake_allowance`, counting the kernel's queue too)
//      and neither received nor delivered a byte for `stall_after` (undelivered_connection):
//      ZeroMQ keeps its messages from the application — a second connection with a routing id
//      already in use — or it stopped in the middle of a message; or
//   3. the connections of every guard in the process together hold more than
//      `process_budget` (over_process_budget): then the connections nothing was read from since
//      the previous check are cut, the one holding most first, until the rest fit. Many
//      connections each under the cap thus cannot add up past the budget (a guard made
//      `budget_cuts_read_connections` then cuts the others too, most held first, until they
//      fit); or
//   4. the guard watches more than `max_connections` (when not 0) (too_many_connections): the
//      ones that have been quiet longest (neither received nor delivered a byte) are cut until
//      that many are left, so connections opened and left idle cannot take every file
//      descriptor and keep new clients out.
// Rules 1 and 2 are judged when the application calls check(), right after it read everything
// waiting. Rule 3 is also judged on the guard's own thread every `check_every` (every 1 ms while
// the process holds more than half its budget), so a process busy in a long reaction (reading
// nothing) still keeps within its budget; there "nothing read" means since the previous check
// of either kind. While it watches no TCP connection the thread sleeps until the monitor reports
// one (or the owner calls accepted()): a cluster whose links all run over Unix sockets wakes no
// guard thread.
// Drops are counted under the connection's routing id once it delivered a message, else under
// "(unidentified)"; the first drop of each logs the peer's address. Cuts made on the guard's
// thread reach `drops` at the next check() from the socket's thread.
// A guard made `count_only` (a CURVE socket, whose bytes on the wire are not the ZMTP framing
// note_read() counts) applies rule 4 alone.
// Handshakes that fail before any key check sees them (a client without CURVE at a CURVE socket
// or with CURVE at a plain one, or one with another server key) are counted too, as
// refused_handshake of peer "unknown", the first of each kind logged.
// Only TCP connections are watched (others have no TCP_INFO). note_read() and check() belong to
// the socket's thread; the process's total is shared between guards safely. The router must outlive
// the guard.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <zmq.hpp>

#include "common/event_fd.hpp"
#include "transport/peer_drop_counters.hpp"

namespace tagflow::transport {

/// What every guard of a process may hold together by default (rule 3): 64 MiB.
inline constexpr std::size_t kProcessHeldBudget = std::size_t{64} << 20;

struct ConnectionLimits {
  /// Bytes one connection may make ZeroMQ hold (see the class comment, rule 1).
  std::size_t max_held_bytes = std::size_t{32} << 20;
  /// Bytes all connections of all guards in this process may make ZeroMQ hold (rule 3).
  std::size_t process_budget = kProcessHeldBudget;
  /// Bytes that count as a handshake, not as held data (rule 2).
  std::size_t handshake_allowance = 1024;
  /// How long a connection may hold data without any progress (rule 2).
  std::chrono::milliseconds stall_after{5000};
  /// check() does nothing when called sooner than this after the previous check.
  std::chrono::milliseconds check_every{5};
  /// Connections the guard lets one socket have (rule 4); 0: no limit.
  std::size_t max_connections = 0;
  /// Rule 4 only: for a socket whose connections are not ZMTP framing as note_read() counts it
  /// (CURVE boxes every frame), so that what a connection holds cannot be told. Such a guard
  /// judges no bytes (rules 1 to 3) and adds nothing to the process's total; a connection is
  /// quiet while the kernel receives nothing on it and nothing is read from it.
  bool count_only = false;
  /// Rule 3 for a socket whose peers are clients, not upstreams whose every message the run
  /// needs (the inference gateway): when cutting the connections nothing was read from leaves
  /// the process over its budget, the others holding more than a handshake are cut too, most
  /// held first, until the rest fit. Without it, a flood of connections that are each read in
  /// turn, but more slowly than they send, is bounded only by ZeroMQ's receive pipes.
  bool budget_cuts_read_connections = false;
  /// What the log calls the socket ("the gateway", "the data port", "the coordinator").
  std::string socket_name = "a socket";
};

/// The limits for a receiver that accepts messages of up to `max_message_bytes` (payload) with
/// headers of up to `max_header_bytes`: per connection two whole messages (one being read, one
/// ZeroMQ decoded but has not yet handed over); per process kProcessHeldBudget, or twice a
/// connection's cap when that is more (room for two upstreams sending their largest at once).
[[nodiscard]] ConnectionLimits limits_for_messages(std::size_t max_message_bytes,
                                                   std::size_t max_header_bytes);

/// The bytes a frame of `size` takes on the wire in ZMTP 3 (flags, length, body).
[[nodiscard]] constexpr std::size_t zmtp_frame_bytes(std::size_t size) {
  return size + (size <= 255 ? 2 : 9);
}

/// What a ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL event's value (a ZMQ_PROTOCOL_ERROR_*) says about
/// the peer, for the log: a security mechanism other than the socket's (CURVE on one side only),
/// a CURVE hello that does not open (the client has another server key), or another broken
/// handshake (its code in hex).
[[nodiscard]] std::string handshake_failure_text(std::uint32_t protocol_error);

/// Logs a failed handshake (`security: refused a connection to SOCKET whose handshake failed:
/// ...`, SOCKET `socket_name`) the first time its kind is in `logged` (at most 64 kinds).
void log_failed_handshake(std::set<std::uint32_t>& logged, std::uint32_t protocol_error,
                          const std::string& socket_name);

/// A PAIR socket of `context` (linger 0) that receives `socket`'s monitor events `events`
/// (zmq_socket_monitor, at an inproc endpoint named after `name`). A socket has one monitor: this
/// replaces any other. Throws zmq::error_t.
[[nodiscard]] zmq::socket_t monitor_events(zmq::context_t& context, zmq::socket_t& socket,
                                           int events, const std::string& name);

/// Reads one event of a socket monitor (zmq_socket_monitor) from `events` without waiting: its
/// kind (ZMQ_EVENT_*) and value (for ACCEPTED and DISCONNECTED: the connection's descriptor).
/// False when none is waiting; a malformed event reads as kind 0.
bool read_monitor_event(zmq::socket_t& events, std::uint16_t& kind, std::uint32_t& value);

/// A connection as rule 3 weighs it: its descriptor, the bytes it holds, and whether anything
/// was read from it since the previous check.
struct HeldConnection {
  int fd = -1;
  std::uint64_t held = 0;
  bool read = false;
};

/// Rule 3's choice, in the order to cut: while `total` exceeds `budget`, the connections nothing
/// was read from, most held first; then, with `read_too` (budget_cuts_read_connections), the
/// others, most held first. Each cut takes its `held` off the total.
[[nodiscard]] std::vector<int> over_budget_cuts(std::vector<HeldConnection> connections,
                                                std::uint64_t total, std::uint64_t budget,
                                                bool read_too);

class ConnectionGuard {
 public:
  using Clock = std::chrono::steady_clock;

  /// Starts watching `router`'s connections; call before it binds (connections accepted
  /// earlier are not watched).
  ConnectionGuard(zmq::context_t& context, zmq::socket_t& router, ConnectionLimits limits);
  /// A guard told of connections by its owner (accepted(), ended()), for a socket whose monitor
  /// the owner reads itself (a socket has one monitor).
  explicit ConnectionGuard(ConnectionLimits limits);
  ~ConnectionGuard();
  ConnectionGuard(const ConnectionGuard&) = delete;
  ConnectionGuard& operator=(const ConnectionGuard&) = delete;

  /// The application read a message of `wire_bytes` from connection `fd` (ZMQ_SRCFD) whose
  /// routing id is `peer`.
  void note_read(int fd, const std::string& peer, std::size_t wire_bytes);
  /// The owner's monitor reported a connection accepted on `fd`, or its end (second constructor).
  void accepted(int fd);
  void ended(int fd);
  /// A handshake on the socket failed before any key check could see it (the monitor's
  /// ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL with its ZMQ_PROTOCOL_ERROR_*): counted at the next
  /// check() as a refused_handshake of peer "unknown", the first of each kind logged. The guard
  /// of a socket whose monitor it reads calls it itself.
  void failed_handshake(std::uint32_t protocol_error);
  /// Cuts the connections that break a rule (see above) and counts in `drops` every cut since
  /// the previous call (the guard's thread's too). Call after a receive found nothing waiting.
  /// Returns how many it counted.
  int check(PeerDropCounters& drops, Clock::time_point now = Clock::now());
  /// The TCP connections being watched.
  [[nodiscard]] std::size_t connections() const;
  /// What every guard of this process held at their last checks.
  [[nodiscard]] static std::uint64_t process_held();
  [[nodiscard]] const ConnectionLimits& limits() const { return limits_; }
  /// How many times the guard's thread has woken (timer, monitor event or signal).
  [[nodiscard]] std::uint64_t thread_passes() const {
    return thread_passes_.load(std::memory_order_relaxed);
  }
  /// How many connections the guard has cut, by either thread (counted in `drops` or not yet).
  [[nodiscard]] std::uint64_t cuts_made() const {
    return cuts_made_.load(std::memory_order_relaxed);
  }

 private:
  struct Connection {
    std::string address;  ///< the peer's ip:port, for the log
    std::string peer;     ///< its routing id, once it delivered a message
    std::uint16_t local_port = 0;
    std::uint16_t remote_port = 0;
    std::uint64_t read_bytes = 0;
    std::uint64_t read_at_last_check = 0;
    std::uint64_t received_at_last_check = 0;
    std::uint64_t read_at_last_inspect = 0;  ///< at the last check of either thread
    std::uint64_t held = 0;                  ///< in this process's memory, at the last check
    std::uint64_t received_at_last_inspect = 0;
    bool over_cap_at_last_check = false;
    Clock::time_point unchanged_since;
    Clock::time_point quiet_since;  ///< since it last received or delivered a byte (rule 4)
  };
  struct Cut {
    std::string peer;
    DropReason reason;
    std::uint64_t count;
  };
  void run();
  /// One check; `drained`: called by the application after it read everything waiting (rules 1
  /// and 2 apply). Holds mutex_.
  void inspect(Clock::time_point now, bool drained);
  /// Rule 4: cuts the connections quiet longest until at most max_connections are left.
  void keep_within_count();
  void read_events();
  /// failed_handshake() with mutex_ held.
  void note_failed_handshake(std::uint32_t protocol_error);
  void watch(int fd);
  [[nodiscard]] bool still_same(int fd, const Connection& connection) const;
  void cut(int fd, const Connection& connection, DropReason reason, std::uint64_t held);
  /// Rule 3 (over_budget_cuts) over `holding`: the connections holding more than a handshake.
  void keep_within_budget(const std::vector<HeldConnection>& holding);
  void publish(std::uint64_t held);

  ConnectionLimits limits_;
  zmq::socket_t* router_ = nullptr;  // nullptr: fed by accepted() and ended()
  zmq::socket_t events_;
  std::map<int, Connection> live_;  // by file descriptor
  struct Unmatched {
    std::uint64_t bytes = 0;
    std::string peer;
  };
  /// Fed by its owner: reads from connections whose ACCEPTED event has not come yet (at most
  /// 1024), credited when it does.
  std::map<int, Unmatched> unmatched_;
  Clock::time_point last_check_{};             // by either thread
  Clock::time_point last_drained_check_{};     // by check()
  std::uint64_t published_ = 0;                // this guard's share of the process's total
  std::vector<Cut> cuts_;                      // not yet counted in the caller's drops
  std::set<std::string> logged_;               // names whose first cut was logged
  std::set<std::uint32_t> logged_handshakes_;  // failed handshakes' kinds already logged
  mutable std::mutex mutex_;                   // guards everything above, and events_
  EventFd wake_;                               // signalled to end the thread's wait
  int events_fd_ = -1;  // events_'s ZMQ_FD: readable when a monitor event may be waiting
  std::atomic<std::uint64_t> thread_passes_{0};
  std::atomic<std::uint64_t> cuts_made_{0};
  bool stop_ = false;
  std::thread thread_;  // last: starts once the rest is ready
};

}  // namespace tagflow::transport
