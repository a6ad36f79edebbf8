#include "transport/connection_guard.hpp"

#include <arpa/inet.h>
#include <linux/tcp.h>
#include <netinet/in.h>
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

}  // namespace

std::size_t kernel_buffer_allowance() {
  // The kernel may hold up to tcp_rmem's maximum on a connection before ZeroMQ reads it.
  std::size_t most = 0;
  if (std::FILE* file = std::fopen("/proc/sys/net/ipv4/tcp_rmem", "r")) {
    unsigned long long low = 0;
    unsigned long long initial = 0;
    unsigned long long high = 0;
    if (std::fscanf(file, "%llu %llu %llu", &low, &initial, &high) == 3) {
      most = static_cast<std::size_t>(high);
    }
    std::fclose(file);
  }
  return std::max(std::size_t{16} << 20, most);
}

ConnectionLimits limits_for_messages(std::size_t max_message_bytes, std::size_t max_header_bytes) {
  ConnectionLimits limits;
  const std::size_t message = max_message_bytes + max_header_bytes + 17 * 9;
  limits.max_held_bytes = 2 * message + kernel_buffer_allowance();
  return limits;
}

ConnectionGuard::ConnectionGuard(zmq::context_t& context, zmq::socket_t& router,
                                 ConnectionLimits limits)
    : limits_(limits), router_(router), events_(context, zmq::socket_type::pair) {
  static std::atomic<std::uint64_t> next_id{0};
  const std::string endpoint = "inproc://tagflow-connection-guard-" +
                               std::to_string(next_id.fetch_add(1, std::memory_order_relaxed));
  const int rc = zmq_socket_monitor(router_.handle(), endpoint.c_str(),
                                    ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_CLOSED);
  if (rc != 0) throw zmq::error_t();
  events_.set(zmq::sockopt::linger, 0);
  events_.connect(endpoint);
}

ConnectionGuard::~ConnectionGuard() {
  (void)zmq_socket_monitor(router_.handle(), nullptr, 0);
  events_.close();
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
  std::uint16_t kind = 0;
  std::uint32_t value = 0;
  while (read_monitor_event(events_, kind, value)) {
    if (kind == 0) continue;
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
  connection.unchanged_since = Clock::now();
  live_[fd] = std::move(connection);
}

bool ConnectionGuard::still_same(int fd, const Connection& connection) const {
  // A descriptor ZeroMQ closed may already be another connection's (or another file's).
  std::uint16_t remote = 0;
  std::uint16_t local = 0;
  return port_of(fd, true, remote, nullptr) && port_of(fd, false, local, nullptr) &&
         remote == connection.remote_port && local == connection.local_port;
}

void ConnectionGuard::note_read(int fd, const std::string& peer, std::size_t wire_bytes) {
  auto it = live_.find(fd);
  if (it == live_.end()) {
    read_events();  // the ACCEPTED event may still be waiting
    it = live_.find(fd);
    if (it == live_.end()) return;
  }
  it->second.read_bytes += wire_bytes;
  if (it->second.peer.empty()) it->second.peer = peer.substr(0, 64);
}

int ConnectionGuard::check(PeerDropCounters& drops, Clock::time_point now) {
  if (now - last_check_ < limits_.check_every) return 0;
  last_check_ = now;
  read_events();
  int cut_count = 0;
  for (auto it = live_.begin(); it != live_.end();) {
    Connection& connection = it->second;
    // One system call per connection and check: each of them waits for the socket's lock, which
    // ZeroMQ's I/O thread holds while it reads a large frame from a fast sender, and a check
    // that waits lets such a sender go on. Whether the descriptor is still this connection is
    // asked only before a cut, the one step that must not hit another connection.
    std::uint64_t received = 0;
    if (!bytes_received(it->first, received)) {
      it = live_.erase(it);
      continue;
    }
    const std::uint64_t held =
        received > connection.read_bytes ? received - connection.read_bytes : 0;
    const bool progressed = connection.read_bytes != connection.read_at_last_check;
    const bool over_cap = held > limits_.max_held_bytes;
    if (received != connection.received_at_last_check || progressed ||
        held <= limits_.handshake_allowance) {
      connection.unchanged_since = now;
    }
    DropReason reason = DropReason::kNone;
    if (over_cap && connection.over_cap_at_last_check && !progressed) {
      reason = DropReason::kIncompleteOverCap;
    } else if (now - connection.unchanged_since >= limits_.stall_after) {
      reason = DropReason::kUndeliveredConnection;
    }
    connection.over_cap_at_last_check = over_cap;
    connection.read_at_last_check = connection.read_bytes;
    connection.received_at_last_check = received;
    if (reason == DropReason::kNone) {
      ++it;
      continue;
    }
    if (!still_same(it->first, connection)) {
      it = live_.erase(it);  // another connection's now: its own ACCEPTED event will watch it
      continue;
    }
    cut(it->first, connection, reason, held, drops);
    ++cut_count;
    it = live_.erase(it);
  }
  return cut_count;
}

void ConnectionGuard::cut(int fd, const Connection& connection, DropReason reason,
                          std::uint64_t held, PeerDropCounters& drops) {
  // shutdown, not close: the descriptor stays ZeroMQ's; its next read sees the end, and dropping
  // the connection rolls back (frees) the half-received message.
  (void)shutdown(fd, SHUT_RDWR);
  const std::string& peer = connection.peer.empty() ? std::string(kUnidentified) : connection.peer;
  if (drops.total(peer) == 0) {
    spdlog::warn(
        "transport: cut the connection from {} (routing id '{}'): {} with {} bytes held "
        "unread",
        connection.address, escape_for_log(peer), drop_reason_name(reason), held);
  }
  drops.record(peer, reason);
}

}  // namespace tagflow::transport
