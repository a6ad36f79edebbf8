#include "transport/connection_guard.hpp"

#include <arpa/inet.h>
#include <linux/sockios.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>

#include <spdlog/spdlog.h>

#include "common/log_text.hpp"

namespace tagflow::transport {
namespace {

constexpr const char* kUnidentified = "(unidentified)";
constexpr const char* kStranger = "unknown";  // a peer refused in its handshake, as ZAP counts it

bool port_of(int fd, bool remote, std::uint16_t& port, std::string* address) {
  sockaddr_storage storage{};
  socklen_t length = sizeof storage;
  auto* any =
      reinterpret_cast<sockaddr*>(&storage);  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
  const int rc = remote ? getpeername(fd, any, &length) : getsockname(fd, any, &length);
  if (rc != 0) return false;
  char text[INET6_ADDRSTRLEN] = {};
  if (storage.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&storage);  // NOLINT
    port = ntohs(in->sin_port);
    inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
  } else if (storage.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&storage);  // NOLINT
    port = ntohs(in6->sin6_port);
    inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text);
  } else {
    return false;  // not TCP: nothing to watch
  }
  if (address != nullptr) *address = std::string(text) + ":" + std::to_string(port);
  return true;
}

/// Bytes the kernel received on TCP connection `fd`, or false when it is not one.
bool bytes_received(int fd, std::uint64_t& bytes) {
  tcp_info info{};
  socklen_t length = sizeof info;
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &length) != 0) return false;
  bytes = info.tcpi_bytes_received;
  return true;
}

/// Bytes waiting in the kernel's receive queue of `fd` (not yet read by ZeroMQ); 0 when unknown.
std::uint64_t bytes_in_kernel(int fd) {
  int queued = 0;
  if (ioctl(fd, SIOCINQ, &queued) != 0 || queued < 0) return 0;
  return static_cast<std::uint64_t>(queued);
}

/// What every guard of the process holds, as each published it at its last check.
std::atomic<std::uint64_t> process_total{0};

}  // namespace

std::vector<int> over_budget_cuts(std::vector<HeldConnection> connections, std::uint64_t total,
                                  std::uint64_t budget, bool read_too) {
  // Nothing read first, then most held first.
  std::stable_sort(connections.begin(), connections.end(),
                   [](const HeldConnection& a, const HeldConnection& b) {
                     return a.read != b.read ? !a.read : a.held > b.held;
                   });
  std::vector<int> cuts;
  for (const HeldConnection& c : connections) {
    if (total <= budget || (c.read && !read_too)) break;
    cuts.push_back(c.fd);
    total -= std::min(total, c.held);
  }
  return cuts;
}

ConnectionLimits limits_for_messages(std::size_t max_message_bytes, std::size_t max_header_bytes) {
  ConnectionLimits limits;
  const std::size_t message = max_message_bytes + max_header_bytes + 17 * 9;
  limits.max_held_bytes = 2 * message;
  limits.process_budget = std::max(kProcessHeldBudget, 2 * limits.max_held_bytes);
  return limits;
}

ConnectionGuard::ConnectionGuard(zmq::context_t& context, zmq::socket_t& router,
                                 ConnectionLimits limits)
    : limits_(limits),
      router_(&router),
      events_(monitor_events(context, router,
                             ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_CLOSED |
                                 ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL,
                             "connection-guard")) {
  events_fd_ = static_cast<int>(events_.get(zmq::sockopt::fd));
  thread_ = std::thread([this] { run(); });
}

ConnectionGuard::ConnectionGuard(ConnectionLimits limits) : limits_(limits) {
  thread_ = std::thread([this] { run(); });
}

void ConnectionGuard::accepted(int fd) {
  const std::lock_guard<std::mutex> lock(mutex_);
  watch(fd);
  // What was read from it before its owner passed the event on.
  if (const auto early = unmatched_.find(fd); early != unmatched_.end()) {
    if (const auto it = live_.find(fd); it != live_.end()) {
      it->second.read_bytes += early->second.bytes;
      it->second.peer = early->second.peer;
    }
    unmatched_.erase(early);
  }
}

void ConnectionGuard::ended(int fd) {
  const std::lock_guard<std::mutex> lock(mutex_);
  live_.erase(fd);
  unmatched_.erase(fd);
}

void ConnectionGuard::failed_handshake(std::uint32_t protocol_error) {
  const std::lock_guard<std::mutex> lock(mutex_);
  note_failed_handshake(protocol_error);
}

void log_failed_handshake(std::set<std::uint32_t>& logged, std::uint32_t protocol_error,
                          const std::string& socket_name) {
  if (logged.size() < 64 && logged.insert(protocol_error).second) {
    spdlog::warn("security: refused a connection to {} whose handshake failed: {}", socket_name,
                 handshake_failure_text(protocol_error));
  }
}

void ConnectionGuard::note_failed_handshake(std::uint32_t protocol_error) {
  log_failed_handshake(logged_handshakes_, protocol_error, limits_.socket_name);
  for (Cut& c : cuts_) {
    if (c.peer == kStranger && c.reason == DropReason::kRefusedHandshake) {
      ++c.count;
      return;
    }
  }
  cuts_.push_back({std::string(kStranger), DropReason::kRefusedHandshake, 1});
}

std::string handshake_failure_text(std::uint32_t protocol_error) {
  switch (protocol_error) {
    case ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH:
      return "its security mechanism is not this socket's (CURVE on one side only?)";
    case ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC:
      return "its CURVE hello does not open with this socket's key (it has another server key?)";
    default: {
      char code[16];
      std::snprintf(code, sizeof code, "0x%08x", protocol_error);
      return std::string("a broken ZMTP handshake (ZeroMQ protocol error ") + code + ")";
    }
  }
}

ConnectionGuard::~ConnectionGuard() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.signal();
  thread_.join();
  publish(0);
  if (router_ != nullptr) {
    (void)zmq_socket_monitor(router_->handle(), nullptr, 0);
    events_.close();
  }
}

zmq::socket_t monitor_events(zmq::context_t& context, zmq::socket_t& socket, int events,
                             const std::string& name) {
  static std::atomic<std::uint64_t> next_id{0};
  const std::string endpoint = "inproc://tagflow-monitor-" + name + "-" +
                               std::to_string(next_id.fetch_add(1, std::memory_order_relaxed));
  if (zmq_socket_monitor(socket.handle(), endpoint.c_str(), events) != 0) throw zmq::error_t();
  zmq::socket_t reader(context, zmq::socket_type::pair);
  reader.set(zmq::sockopt::linger, 0);
  reader.connect(endpoint);
  return reader;
}

bool read_monitor_event(zmq::socket_t& events, std::uint16_t& kind, std::uint32_t& value) {
  zmq::message_t event;
  zmq::message_t address;
  if (!events.recv(event, zmq::recv_flags::dontwait)) return false;
  kind = 0;
  value = 0;
  const bool well_formed = event.size() >= 6 && events.get(zmq::sockopt::rcvmore) != 0;
  if (well_formed) {
    std::memcpy(&kind, event.data(), sizeof kind);
    std::memcpy(&value, static_cast<const char*>(event.data()) + 2, sizeof value);
  }
  while (events.get(zmq::sockopt::rcvmore) != 0) {
    if (!events.recv(address, zmq::recv_flags::dontwait)) break;
  }
  return true;
}

void ConnectionGuard::read_events() {
  if (router_ == nullptr) return;  // fed by accepted() and ended()
  std::uint16_t kind = 0;
  std::uint32_t value = 0;
  while (read_monitor_event(events_, kind, value)) {
    if (kind == 0) continue;
    if (kind == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL) {
      note_failed_handshake(value);
      continue;
    }
    const int fd = static_cast<int>(value);
    if (kind == ZMQ_EVENT_ACCEPTED) {
      watch(fd);
    } else {
      live_.erase(fd);
    }
  }
}

void ConnectionGuard::watch(int fd) {
  Connection connection;
  std::uint64_t received = 0;
  if (!port_of(fd, true, connection.remote_port, &connection.address) ||
      !port_of(fd, false, connection.local_port, nullptr) || !bytes_received(fd, received)) {
    live_.erase(fd);
    return;
  }
  connection.received_at_last_check = received;
  connection.received_at_last_inspect = received;
  connection.unchanged_since = Clock::now();
  connection.quiet_since = connection.unchanged_since;
  const bool first = live_.empty();
  live_[fd] = std::move(connection);
  if (first) wake_.signal();  // the thread may be waiting without a time limit (run())
}

bool ConnectionGuard::still_same(int fd, const Connection& connection) const {
  // A descriptor ZeroMQ closed may already be another connection's (or another file's).
  std::uint16_t remote = 0;
  std::uint16_t local = 0;
  return port_of(fd, true, remote, nullptr) && port_of(fd, false, local, nullptr) &&
         remote == connection.remote_port && local == connection.local_port;
}

void ConnectionGuard::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    // The monitor's descriptor turns readable only for an event that follows a read that found
    // none: read them all before waiting on it.
    read_events();
    // Faster once the process holds half its budget: what arrives between two checks is what
    // the budget can be overrun by. With no TCP connection there is nothing to check: the thread
    // sleeps until the monitor reports a connection, watch() is first to see one (it signals
    // wake_), or the guard ends.
    const bool filling = process_total.load(std::memory_order_relaxed) > limits_.process_budget / 2;
    int timeout_ms = -1;
    if (!live_.empty()) timeout_ms = filling ? 1 : static_cast<int>(limits_.check_every.count());
    lock.unlock();
    pollfd fds[2] = {{wake_.fd(), POLLIN, 0}, {events_fd_, POLLIN, 0}};
    (void)::poll(fds, events_fd_ >= 0 ? 2 : 1, timeout_ms);
    if ((fds[0].revents & POLLIN) != 0) wake_.clear();
    lock.lock();
    thread_passes_.fetch_add(1, std::memory_order_relaxed);
    if (stop_) break;
    const Clock::time_point now = Clock::now();
    if (!filling && now - last_check_ < limits_.check_every) continue;  // checked just now
    inspect(now, false);
  }
}

std::size_t ConnectionGuard::connections() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return live_.size();
}

void ConnectionGuard::note_read(int fd, const std::string& peer, std::size_t wire_bytes) {
  const std::lock_guard<std::mutex> lock(mutex_);
  auto it = live_.find(fd);
  if (it == live_.end()) {
    read_events();  // the ACCEPTED event may still be waiting
    it = live_.find(fd);
  }
  if (it == live_.end()) {
    if (router_ == nullptr && (unmatched_.size() < 1024 || unmatched_.count(fd) != 0)) {
      // Fed by its owner, whose ACCEPTED event for this connection may come after the read.
      Unmatched& early = unmatched_[fd];
      early.bytes += wire_bytes;
      if (early.peer.empty()) early.peer = peer.substr(0, 64);
    }
    return;
  }
  it->second.read_bytes += wire_bytes;
  if (it->second.peer.empty()) it->second.peer = peer.substr(0, 64);
}

std::uint64_t ConnectionGuard::process_held() {
  return process_total.load(std::memory_order_relaxed);
}

void ConnectionGuard::publish(std::uint64_t held) {
  if (held >= published_) {
    process_total.fetch_add(held - published_, std::memory_order_relaxed);
  } else {
    process_total.fetch_sub(published_ - held, std::memory_order_relaxed);
  }
  published_ = held;
}

int ConnectionGuard::check(PeerDropCounters& drops, Clock::time_point now) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (now - last_drained_check_ >= limits_.check_every) {
    last_drained_check_ = now;
    inspect(now, true);
  }
  int counted = 0;
  for (const Cut& c : cuts_) {
    for (std::uint64_t i = 0; i < c.count; ++i) drops.record(c.peer, c.reason);
    counted += static_cast<int>(c.count);
  }
  cuts_.clear();
  return counted;
}

void ConnectionGuard::inspect(Clock::time_point now, bool drained) {
  last_check_ = now;
  read_events();
  std::uint64_t total = 0;
  std::vector<HeldConnection> holding;  // more than a handshake
  for (auto it = live_.begin(); it != live_.end();) {
    Connection& connection = it->second;
    // One system call per connection and check (two when it holds bytes): each of them waits
    // for the socket's lock, which ZeroMQ's I/O thread holds while it reads a large frame from a
    // fast sender, and a check that waits lets such a sender go on. Whether the descriptor is
    // still this connection is asked only before a cut, the one step that must not hit another
    // connection.
    std::uint64_t received = 0;
    if (!bytes_received(it->first, received)) {
      it = live_.erase(it);
      continue;
    }
    const std::uint64_t unread = received > connection.read_bytes && !limits_.count_only
                                     ? received - connection.read_bytes
                                     : 0;
    const std::uint64_t in_kernel = unread > 0 ? bytes_in_kernel(it->first) : 0;
    const std::uint64_t held = unread > in_kernel ? unread - in_kernel : 0;
    DropReason reason = DropReason::kNone;
    if (drained && !limits_.count_only) {
      // Rules 1 and 2, judged only right after the application read everything waiting.
      const bool progressed = connection.read_bytes != connection.read_at_last_check;
      const bool over_cap = held > limits_.max_held_bytes;
      if (received != connection.received_at_last_check || progressed ||
          unread <= limits_.handshake_allowance) {
        connection.unchanged_since = now;
      }
      if (over_cap && connection.over_cap_at_last_check && !progressed) {
        reason = DropReason::kIncompleteOverCap;
      } else if (now - connection.unchanged_since >= limits_.stall_after) {
        reason = DropReason::kUndeliveredConnection;
      }
      connection.over_cap_at_last_check = over_cap;
      connection.read_at_last_check = connection.read_bytes;
      connection.received_at_last_check = received;
    }
    const bool read_nothing = connection.read_bytes == connection.read_at_last_inspect;
    if (!read_nothing || received != connection.received_at_last_inspect) {
      connection.quiet_since = now;
    }
    connection.received_at_last_inspect = received;
    connection.read_at_last_inspect = connection.read_bytes;
    connection.held = held;
    if (reason == DropReason::kNone) {
      total += held;
      if (held > limits_.handshake_allowance) holding.push_back({it->first, held, !read_nothing});
      ++it;
      continue;
    }
    if (!still_same(it->first, connection)) {
      it = live_.erase(it);  // another connection's now: its own ACCEPTED event will watch it
      continue;
    }
    cut(it->first, connection, reason, held);
    it = live_.erase(it);
  }
  publish(total);
  if (process_total.load(std::memory_order_relaxed) > limits_.process_budget) {
    keep_within_budget(holding);
  }
  if (limits_.max_connections > 0 && live_.size() > limits_.max_connections) keep_within_count();
}

void ConnectionGuard::keep_within_count() {
  std::vector<int> quietest;
  quietest.reserve(live_.size());
  for (const auto& entry : live_) quietest.push_back(entry.first);
  std::sort(quietest.begin(), quietest.end(),
            [this](int a, int b) { return live_.at(a).quiet_since < live_.at(b).quiet_since; });
  std::uint64_t total = published_;
  for (const int fd : quietest) {
    if (live_.size() <= limits_.max_connections) break;
    const auto it = live_.find(fd);
    const std::uint64_t held = it->second.held;
    if (still_same(fd, it->second)) cut(fd, it->second, DropReason::kTooManyConnections, held);
    live_.erase(it);
    total -= std::min(total, held);
    publish(total);
  }
}

void ConnectionGuard::keep_within_budget(const std::vector<HeldConnection>& holding) {
  std::uint64_t total = published_;
  for (const int fd :
       over_budget_cuts(holding, process_total.load(std::memory_order_relaxed),
                        limits_.process_budget, limits_.budget_cuts_read_connections)) {
    const auto it = live_.find(fd);
    const std::uint64_t held = it->second.held;
    if (still_same(fd, it->second)) cut(fd, it->second, DropReason::kOverProcessBudget, held);
    live_.erase(it);
    total -= std::min(total, held);
    publish(total);
  }
}

void ConnectionGuard::cut(int fd, const Connection& connection, DropReason reason,
                          std::uint64_t held) {
  // shutdown, not close: the descriptor stays ZeroMQ's; its next read sees the end, and dropping
  // the connection rolls back (frees) the half-received message.
  (void)shutdown(fd, SHUT_RDWR);
  cuts_made_.fetch_add(1, std::memory_order_relaxed);
  const std::string& peer = connection.peer.empty() ? std::string(kUnidentified) : connection.peer;
  // Logged once per name (and for at most 256 names), as PeerDropCounters logs its drops.
  if (logged_.size() < 256 && logged_.insert(peer).second) {
    spdlog::warn(
        "transport: cut the connection from {} (routing id '{}'): {} with {} bytes held "
        "unread",
        connection.address, escape_for_log(peer), drop_reason_name(reason), held);
  }
  // Kept for the next check() from the socket's thread: at most 256 entries, the rest together.
  const std::string& name = cuts_.size() < 256 ? peer : std::string("(other)");
  for (Cut& c : cuts_) {
    if (c.peer == name && c.reason == reason) {
      ++c.count;
      return;
    }
  }
  cuts_.push_back({name, reason, 1});
}

}  // namespace tagflow::transport
