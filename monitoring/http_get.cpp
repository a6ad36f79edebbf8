#include "monitoring/http_get.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace tagflow::monitoring {
namespace {

using clock = std::chrono::steady_clock;

/// Closes a socket descriptor at scope exit.
class SocketGuard {
 public:
  explicit SocketGuard(int fd) : fd_(fd) {}
  ~SocketGuard() {
    if (fd_ >= 0) ::close(fd_);
  }
  SocketGuard(const SocketGuard&) = delete;
  SocketGuard& operator=(const SocketGuard&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

int millis_left(clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
  return static_cast<int>(std::max<long long>(0, left.count()));
}

/// Waits until `fd` is ready for `events` or the deadline passes.
bool wait_ready(int fd, short events, clock::time_point deadline) {
  for (;;) {
    const int left = millis_left(deadline);
    if (left == 0) return false;
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, left);
    if (n > 0) return true;
    if (n == 0) return false;
    if (errno != EINTR) return false;
  }
}

/// A connected non-blocking socket to one of the host's addresses, or -1.
int connect_with_deadline(const std::string& host, std::uint16_t port, clock::time_point deadline) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) return -1;
  int connected = -1;
  for (addrinfo* a = found; a != nullptr && connected < 0; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    bool ok = ::connect(fd, a->ai_addr, a->ai_addrlen) == 0;
    if (!ok && errno == EINPROGRESS && wait_ready(fd, POLLOUT, deadline)) {
      int error = 0;
      socklen_t length = sizeof(error);
      ok = ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 && error == 0;
    }
    if (ok) {
      connected = fd;
    } else {
      ::close(fd);
    }
  }
  ::freeaddrinfo(found);
  return connected;
}

bool send_all(int fd, const std::string& data, clock::time_point deadline) {
  std::size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (!wait_ready(fd, POLLOUT, deadline)) return false;
    } else {
      return false;
    }
  }
  return true;
}

/// The Content-Length header's value, or nullopt.
std::optional<std::size_t> content_length(const std::string& headers) {
  std::string lower = headers;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const std::string key = "\r\ncontent-length:";
  const auto at = lower.find(key);
  if (at == std::string::npos) return std::nullopt;
  return static_cast<std::size_t>(std::strtoull(lower.c_str() + at + key.size(), nullptr, 10));
}

}  // namespace

std::optional<std::string> http_get(const std::string& host, std::uint16_t port,
                                    const std::string& path, std::chrono::milliseconds timeout,
                                    std::size_t max_bytes) {
  const auto deadline = clock::now() + timeout;
  SocketGuard socket(connect_with_deadline(host, port, deadline));
  if (socket.fd() < 0) return std::nullopt;
  const bool ipv6 = host.find(':') != std::string::npos;
  const std::string request =
      "GET " + path + " HTTP/1.0\r\nHost: " + (ipv6 ? "[" + host + "]" : host) + ":" +
      std::to_string(port) + "\r\nAccept: text/plain\r\nConnection: close\r\n\r\n";
  if (!send_all(socket.fd(), request, deadline)) return std::nullopt;

  std::string response;
  std::size_t header_end = std::string::npos;
  std::optional<std::size_t> length;
  char buffer[16384];
  for (;;) {
    if (header_end != std::string::npos && length && response.size() >= header_end + *length) {
      break;  // the whole body arrived; the server may keep the connection open
    }
    const ssize_t n = ::recv(socket.fd(), buffer, sizeof(buffer), 0);
    if (n > 0) {
      response.append(buffer, static_cast<std::size_t>(n));
      if (response.size() > max_bytes) return std::nullopt;
      if (header_end == std::string::npos) {
        const auto end = response.find("\r\n\r\n");
        if (end != std::string::npos) {
          header_end = end + 4;
          length = content_length(response.substr(0, end + 2));
        }
      }
    } else if (n == 0) {
      break;  // the server closed: end of the body
    } else if (errno == EAGAIN || errno == EINTR) {
      if (!wait_ready(socket.fd(), POLLIN, deadline)) return std::nullopt;
    } else {
      return std::nullopt;
    }
  }
  // Status line: HTTP/1.x 200 ...
  if (header_end == std::string::npos || response.compare(0, 5, "HTTP/") != 0) return std::nullopt;
  const auto space = response.find(' ');
  if (space == std::string::npos || response.compare(space + 1, 3, "200") != 0) {
    return std::nullopt;
  }
  std::string body = response.substr(header_end);
  if (length && body.size() > *length) body.resize(*length);
  return body;
}

}  // namespace tagflow::monitoring
