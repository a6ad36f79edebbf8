#include "monitoring/metrics_endpoint.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <system_error>

#include <prometheus/collectable.h>
#include <prometheus/text_serializer.h>

#include "monitoring/metric_catalogue.hpp"
#include "monitoring/process_collector.hpp"
#include "monitoring/process_metrics.hpp"

namespace tagflow::monitoring {
namespace {

constexpr std::size_t kMaxRequestBytes = 8192;
/// The listen backlog: connections the kernel holds until the loop accepts them (with 16, churn
/// made the kernel drop connection attempts, and a scrape waited for the client's retry).
constexpr int kListenBacklog = 256;
/// The server thread's nice value: a flood of requests takes what CPU the process's own threads
/// leave, rather than a share equal to theirs (heartbeats and reactions come first).
constexpr int kServerNice = 10;
using Clock = std::chrono::steady_clock;

/// The `reason` label of each refusal (tagflow_transport_invalid_messages_total{peer="http"}),
/// and what it means, for the log line.
constexpr std::array<const char*, MetricsEndpoint::kRefusals> kRefusalNames = {
    "malformed", "not_get", "too_large", "timeout", "too_many_connections"};
constexpr std::array<const char*, MetricsEndpoint::kRefusals> kRefusalMeanings = {
    "not an HTTP/1.0 or HTTP/1.1 request line: answered 400 or 505",
    "a method other than GET or HEAD: answered 405",
    "a request line and headers over 8 KiB: answered 431",
    "no whole request sent, or the answer not taken, within the deadline: closed",
    "every connection slot taken: closed"};

/// One client: its request as read so far, then its answer as sent so far.
struct Client {
  int fd = -1;
  sockaddr_storage peer{};  // its address, for the log
  Clock::time_point deadline;
  std::string request;
  std::string reply;  // non-empty once the request is complete
  std::size_t sent = 0;
};

/// IPv6 addresses go in brackets in host:port text: [::1]:9100.
std::string host_part(const std::string& address) {
  const bool ipv6 = address.find(':') != std::string::npos && address.front() != '[';
  return ipv6 ? "[" + address + "]" : address;
}

std::string listen_text(const std::string& address, std::uint16_t port) {
  return host_part(address) + ":" + std::to_string(port);
}

/// ADDRESS:PORT of an accepted connection, written as listen_text() writes its own.
std::string peer_text(const sockaddr_storage& address) {
  char host[INET6_ADDRSTRLEN] = "?";
  if (address.ss_family == AF_INET6) {
    const auto& a = reinterpret_cast<const sockaddr_in6&>(address);
    ::inet_ntop(AF_INET6, &a.sin6_addr, host, sizeof host);
    return listen_text(host, ntohs(a.sin6_port));
  }
  const auto& a = reinterpret_cast<const sockaddr_in&>(address);
  ::inet_ntop(AF_INET, &a.sin_addr, host, sizeof host);
  return listen_text(host, ntohs(a.sin_port));
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
  const int fd = ::socket(found->ai_family, found->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  const int one = 1;
  if (fd >= 0) ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  const bool ok = fd >= 0 && ::bind(fd, found->ai_addr, found->ai_addrlen) == 0 &&
                  ::listen(fd, kListenBacklog) == 0;
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

bool would_block() { return errno == EAGAIN || errno == EINTR; }  // EWOULDBLOCK == EAGAIN on Linux

/// Where the request's head ends: the first empty line, its lines ended by CRLF or, as RFC 9112
/// §2.2 lets a server accept, by a bare LF; the position just past it, or npos.
std::size_t head_end(const std::string& request) {
  for (std::size_t at = request.find('\n'); at != std::string::npos;
       at = request.find('\n', at + 1)) {
    std::size_t next = at + 1;
    if (next < request.size() && request[next] == '\r') ++next;
    if (next < request.size() && request[next] == '\n') return next + 1;
  }
  return std::string::npos;
}

/// Reads what `client` sent; false when it is gone. Sets its reply once the request is whole.
bool read_request(Client& client) {
  char buffer[1024];
  while (client.request.size() < kMaxRequestBytes) {
    const ssize_t n = ::recv(client.fd, buffer, sizeof buffer, 0);
    if (n == 0) return false;
    if (n < 0) return would_block();
    client.request.append(buffer, static_cast<std::size_t>(n));
    if (head_end(client.request) != std::string::npos) break;
  }
  return true;
}

/// Sends what the socket takes of `client`'s reply; false when it is done or gone.
bool write_reply(Client& client) {
  while (client.sent < client.reply.size()) {
    const ssize_t n = ::send(client.fd, client.reply.data() + client.sent,
                             client.reply.size() - client.sent, MSG_NOSIGNAL);
    if (n < 0) return would_block();
    client.sent += static_cast<std::size_t>(n);
  }
  return false;
}

bool request_complete(const std::string& request) {
  return request.size() >= kMaxRequestBytes || head_end(request) != std::string::npos;
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
                                 std::uint16_t port, EndpointLimits limits)
    : limits_(limits),
      bind_address_(bind_address),
      constant_labels_(constant_labels(metrics.identity())),
      collectables_(metrics.collectables()),
      ready_(metrics.readiness()) {
  limits_.max_connections = std::max<std::size_t>(limits_.max_connections, 1);
  listen_fd_ = listen_on(bind_address, port);
  port_ = bound_port(listen_fd_);
  try {
    wake_.emplace();
  } catch (const std::system_error& e) {
    ::close(listen_fd_);
    throw MonitoringError("metrics endpoint on " + listen_text(bind_address, port) + ": " +
                          e.what());
  }
  thread_ = std::thread([this] { serve(); });
}

MetricsEndpoint::~MetricsEndpoint() {
  wake_->signal();
  if (thread_.joinable()) thread_.join();
  ::close(listen_fd_);
}

std::string MetricsEndpoint::url() const {
  return "http://" + host_part(bind_address_) + ":" + std::to_string(port_) + "/metrics";
}

void MetricsEndpoint::refuse(Refusal why, const sockaddr_storage& peer) {
  const auto index = static_cast<std::size_t>(why);
  if (refused_[index]++ == 0) {
    std::cerr << "metrics endpoint " << listen_text(bind_address_, port_) << ": dropped a client ("
              << peer_text(peer) << "): " << kRefusalNames[index] << ", " << kRefusalMeanings[index]
              << "; further drops for this reason are only counted "
                 "(tagflow_transport_invalid_messages_total{peer=\"http\",reason=\""
              << kRefusalNames[index] << "\"})" << std::endl;
  }
}

void MetricsEndpoint::serve() {
  // This thread only: a thread's nice value is its own on Linux.
  (void)::setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), kServerNice);
  std::vector<Client> clients;
  std::vector<pollfd> fds;
  const auto close_client = [](Client& client) {
    // What the client sent beyond what was read (a body, headers past 8 KiB) is read first, up to
    // 64 KiB: closing with unread bytes makes the kernel reset the connection, and the client may
    // then lose the answer before reading it.
    char discard[4096];
    for (int reads = 0; reads < 16 && ::recv(client.fd, discard, sizeof discard, 0) > 0; ++reads) {
    }
    ::close(client.fd);
    client.fd = -1;
  };
  while (true) {
    fds.assign({{listen_fd_, POLLIN, 0}, {wake_->fd(), POLLIN, 0}});
    Clock::time_point next_deadline = Clock::time_point::max();
    for (const Client& client : clients) {
      fds.push_back({client.fd, static_cast<short>(client.reply.empty() ? POLLIN : POLLOUT), 0});
      next_deadline = std::min(next_deadline, client.deadline);
    }
    int timeout_ms = -1;
    if (!clients.empty()) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(next_deadline - Clock::now());
      timeout_ms = static_cast<int>(std::max<std::int64_t>(left.count(), 0));
    }
    if (::poll(fds.data(), fds.size(), timeout_ms) < 0 && errno != EINTR) break;
    if (fds[1].revents != 0) break;
    const Clock::time_point now = Clock::now();
    for (std::size_t i = 0; i < clients.size(); ++i) {
      Client& client = clients[i];
      if (fds[i + 2].revents == 0) continue;
      if (client.reply.empty()) {
        if (!read_request(client)) {
          close_client(client);
          continue;
        }
        if (!request_complete(client.request)) continue;
        std::optional<Refusal> refused;
        client.reply = reply_to(client.request, refused);
        if (refused) refuse(*refused, client.peer);
      }
      if (!write_reply(client)) close_client(client);
    }
    for (Client& client : clients) {
      if (client.fd >= 0 && now >= client.deadline) {  // the whole-request cap
        refuse(Refusal::timeout, client.peer);
        close_client(client);
      }
    }
    clients.erase(std::remove_if(clients.begin(), clients.end(),
                                 [](const Client& client) { return client.fd < 0; }),
                  clients.end());
    if ((fds[0].revents & POLLIN) == 0) continue;
    sockaddr_storage address{};
    socklen_t length = sizeof address;
    for (int fd; (fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length,
                                 SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0;
         length = sizeof address) {
      if (clients.size() >= limits_.max_connections) {
        // Full: the oldest client still sending its request gives up its slot (clients are in
        // accept order); when every slot is answering, the newcomer is closed.
        const auto oldest = std::find_if(clients.begin(), clients.end(),
                                         [](const Client& client) { return client.reply.empty(); });
        if (oldest == clients.end()) {
          refuse(Refusal::too_many_connections, address);
          ::close(fd);
          continue;
        }
        refuse(Refusal::too_many_connections, oldest->peer);
        ::close(oldest->fd);
        clients.erase(oldest);
      }
      Client client;
      client.fd = fd;
      client.peer = address;
      client.deadline = Clock::now() + limits_.request_deadline;
      clients.push_back(std::move(client));
    }
  }
  for (Client& client : clients) close_client(client);
}

std::string MetricsEndpoint::reply_to(const std::string& request,
                                      std::optional<Refusal>& refused) const {
  const std::size_t end = head_end(request);
  if (end == std::string::npos || end > kMaxRequestBytes) {
    refused = Refusal::too_large;
    return response("431 Request Header Fields Too Large", "text/plain", "request over 8 KiB\n",
                    true);
  }
  // METHOD SP PATH SP HTTP/1.x: three words, one space apart.
  std::string line = request.substr(0, request.find('\n'));
  if (!line.empty() && line.back() == '\r') line.pop_back();
  const std::size_t first_space = line.find(' ');
  const std::size_t second_space =
      first_space == std::string::npos ? std::string::npos : line.find(' ', first_space + 1);
  const std::string version =
      second_space == std::string::npos ? std::string() : line.substr(second_space + 1);
  if (first_space == 0 || second_space == std::string::npos || second_space == first_space + 1 ||
      version.rfind("HTTP/", 0) != 0) {
    refused = Refusal::malformed;
    return response("400 Bad Request", "text/plain", "bad request\n", true);
  }
  if (version != "HTTP/1.0" && version != "HTTP/1.1") {
    refused = Refusal::malformed;
    return response("505 HTTP Version Not Supported", "text/plain", "HTTP/1.0 or HTTP/1.1\n", true);
  }
  const std::string method = line.substr(0, first_space);
  std::string path = line.substr(first_space + 1, second_space - first_space - 1);
  path = path.substr(0, path.find('?'));
  if (method != "GET" && method != "HEAD") {
    refused = Refusal::not_get;
    return response("405 Method Not Allowed", "text/plain", "GET or HEAD only\n", true);
  }
  const bool with_body = method == "GET";
  if (path == "/metrics") {
    return response("200 OK", "text/plain; version=0.0.4; charset=utf-8", page(), with_body);
  }
  if (path == "/health/live") return response("200 OK", "text/plain", "live\n", with_body);
  if (path == "/health/ready") {
    return ready_->load(std::memory_order_acquire)
               ? response("200 OK", "text/plain", "ready\n", with_body)
               : response("503 Service Unavailable", "text/plain", "not ready\n", with_body);
  }
  if (path == "/")
    return response("200 OK", "text/plain", "tagflow metrics: /metrics\n", with_body);
  return response("404 Not Found", "text/plain", "not found (the metrics are at /metrics)\n",
                  with_body);
}

std::string MetricsEndpoint::page() const {
  std::vector<prometheus::MetricFamily> families;
  for (const auto& weak : collectables_) {
    if (const auto collectable = weak.lock()) {
      std::vector<prometheus::MetricFamily> collected = collectable->Collect();
      families.insert(families.end(), collected.begin(), collected.end());
    }
  }
  if (!families.empty()) add_refusals(families);
  return prometheus::TextSerializer().Serialize(families);
}

void MetricsEndpoint::add_refusals(std::vector<prometheus::MetricFamily>& families) const {
  const std::string& name = spec(Metric::transport_invalid_messages).name;
  auto family = std::find_if(families.begin(), families.end(),
                             [&name](const auto& f) { return f.name == name; });
  for (std::size_t i = 0; i < kRefusals; ++i) {
    if (refused_[i] == 0) continue;  // a series appears at its first count, as the others do
    Labels labels = constant_labels_;
    labels["peer"] = "http";
    labels["reason"] = kRefusalNames[i];
    prometheus::MetricFamily one = one_series_family(Metric::transport_invalid_messages,
                                                     static_cast<double>(refused_[i]), labels);
    if (family == families.end()) {
      families.push_back(std::move(one));
      family = families.end() - 1;
    } else {
      family->metric.push_back(std::move(one.metric.front()));
    }
  }
}

}  // namespace tagflow::monitoring
