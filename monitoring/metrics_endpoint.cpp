#include "monitoring/metrics_endpoint.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include <prometheus/collectable.h>
#include <prometheus/text_serializer.h>

#include "monitoring/process_metrics.hpp"

namespace tagflow::monitoring {
namespace {

constexpr std::size_t kMaxRequestBytes = 8192;
constexpr int kClientTimeoutSeconds = 2;

/// IPv6 addresses go in brackets in host:port text: [::1]:9100.
std::string host_part(const std::string& address) {
  const bool ipv6 = address.find(':') != std::string::npos && address.front() != '[';
  return ipv6 ? "[" + address + "]" : address;
}

std::string listen_text(const std::string& address, std::uint16_t port) {
  return host_part(address) + ":" + std::to_string(port);
}

/// A listening TCP socket on address:port; throws MonitoringError naming them.
int listen_on(const std::string& address, std::uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  const std::string host = address.size() > 1 && address.front() == '['
                               ? address.substr(1, address.size() - 2)
                               : address;
  if (const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    throw MonitoringError("cannot serve metrics on " + listen_text(address, port) + ": " +
                          ::gai_strerror(rc));
  }
  const int fd = ::socket(found->ai_family, found->ai_socktype | SOCK_CLOEXEC, 0);
  const int one = 1;
  if (fd >= 0) ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  const bool ok =
      fd >= 0 && ::bind(fd, found->ai_addr, found->ai_addrlen) == 0 && ::listen(fd, 16) == 0;
  const int error = errno;
  ::freeaddrinfo(found);
  if (!ok) {
    if (fd >= 0) ::close(fd);
    throw MonitoringError("cannot serve metrics on " + listen_text(address, port) + ": " +
                          std::strerror(error));
  }
  return fd;
}

std::uint16_t bound_port(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  if (address.ss_family == AF_INET6) {
    return ntohs(reinterpret_cast<const sockaddr_in6*>(&address)->sin6_port);
  }
  return ntohs(reinterpret_cast<const sockaddr_in*>(&address)->sin_port);
}

void send_all(int fd, const std::string& text) {
  std::size_t sent = 0;
  while (sent < text.size()) {
    const ssize_t n = ::send(fd, text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return;  // the client went away or timed out: nothing to do
    sent += static_cast<std::size_t>(n);
  }
}

std::string response(const char* status, const char* content_type, const std::string& body,
                     bool with_body) {
  std::string text = std::string("HTTP/1.1 ") + status + "\r\nContent-Type: " + content_type +
                     "\r\nContent-Length: " + std::to_string(body.size()) +
                     "\r\nConnection: close\r\n\r\n";
  if (with_body) text += body;
  return text;
}

}  // namespace

MetricsEndpoint::MetricsEndpoint(const ProcessMetrics& metrics, const std::string& bind_address,
                                 std::uint16_t port)
    : bind_address_(bind_address), collectables_(metrics.collectables()) {
  listen_fd_ = listen_on(bind_address, port);
  port_ = bound_port(listen_fd_);
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) {
    ::close(listen_fd_);
    throw MonitoringError("metrics endpoint on " + listen_text(bind_address, port) +
                          ": eventfd: " + std::strerror(errno));
  }
  thread_ = std::thread([this] { serve(); });
}

MetricsEndpoint::~MetricsEndpoint() {
  const std::uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
  if (thread_.joinable()) thread_.join();
  ::close(listen_fd_);
  ::close(wake_fd_);
}

std::string MetricsEndpoint::url() const {
  return "http://" + host_part(bind_address_) + ":" + std::to_string(port_) + "/metrics";
}

void MetricsEndpoint::serve() {
  std::array<pollfd, 2> fds{{{listen_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}}};
  while (true) {
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    if ((fds[0].revents & POLLIN) == 0) continue;
    const int connection = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (connection < 0) continue;
    answer(connection);
    ::close(connection);
  }
}

void MetricsEndpoint::answer(int connection) const {
  timeval timeout{kClientTimeoutSeconds, 0};
  ::setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  ::setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  std::string request;
  std::array<char, 1024> buffer{};
  while (request.find("\r\n\r\n") == std::string::npos && request.size() < kMaxRequestBytes) {
    const ssize_t n = ::recv(connection, buffer.data(), buffer.size(), 0);
    if (n <= 0) break;
    request.append(buffer.data(), static_cast<std::size_t>(n));
  }
  const std::size_t line_end = request.find("\r\n");
  if (line_end == std::string::npos) {
    send_all(connection, response("400 Bad Request", "text/plain", "bad request\n", true));
    return;
  }
  const std::string line = request.substr(0, line_end);
  const std::size_t first_space = line.find(' ');
  const std::size_t second_space = line.find(' ', first_space + 1);
  const std::string method = line.substr(0, first_space);
  std::string path = first_space == std::string::npos
                         ? std::string()
                         : line.substr(first_space + 1, second_space - first_space - 1);
  path = path.substr(0, path.find('?'));
  if (method != "GET" && method != "HEAD") {
    send_all(connection, response("405 Method Not Allowed", "text/plain", "GET only\n", true));
    return;
  }
  const bool with_body = method == "GET";
  if (path == "/metrics") {
    send_all(connection,
             response("200 OK", "text/plain; version=0.0.4; charset=utf-8", page(), with_body));
  } else if (path == "/") {
    send_all(connection,
             response("200 OK", "text/plain", "tagflow metrics: /metrics\n", with_body));
  } else {
    send_all(connection,
             response("404 Not Found", "text/plain", "not found: /metrics\n", with_body));
  }
}

std::string MetricsEndpoint::page() const {
  std::vector<prometheus::MetricFamily> families;
  for (const auto& weak : collectables_) {
    if (const auto collectable = weak.lock()) {
      std::vector<prometheus::MetricFamily> collected = collectable->Collect();
      families.insert(families.end(), collected.begin(), collected.end());
    }
  }
  return prometheus::TextSerializer().Serialize(families);
}

}  // namespace tagflow::monitoring
