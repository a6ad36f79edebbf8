#include "transport/local_links.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "transport/tcp_endpoint.hpp"

namespace tagflow::transport {
namespace {

constexpr std::size_t kMaxUnixPath = 107;  // sun_path holds 108 bytes with the final NUL

/// "tcp://ADDRESS:PORT" split, whatever PORT is ("*" included); IPv6 addresses lose their
/// brackets. False when not that shape.
bool split_tcp_any_port(const std::string& endpoint, std::string& address, std::string& port) {
  constexpr const char* kScheme = "tcp://";
  if (endpoint.rfind(kScheme, 0) != 0) return false;
  const std::string rest = endpoint.substr(std::strlen(kScheme));
  const std::size_t colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == rest.size()) return false;
  address = rest.substr(0, colon);
  port = rest.substr(colon + 1);
  if (address.size() > 2 && address.front() == '[' && address.back() == ']') {
    address = address.substr(1, address.size() - 2);
  }
  return address.find('/') == std::string::npos;
}

/// "tcp://ADDRESS:PORT" split, PORT a number; IPv6 addresses lose their brackets. False when not
/// that shape.
bool split_tcp(const std::string& endpoint, std::string& address, std::string& port) {
  if (!split_tcp_any_port(endpoint, address, port)) return false;
  for (const char c : port) {
    if (c < '0' || c > '9') return false;  // "*" (not bound yet) or a service name
  }
  return true;
}

/// The directory of this user's twins in this network namespace, made private if new; empty when
/// it is not (someone else's, or not a directory, or open to others).
std::string twin_directory() {
  struct stat netns {};
  if (::stat("/proc/self/ns/net", &netns) != 0) return {};
  const std::string user = "/tmp/tagflow-ipc-" + std::to_string(::geteuid());
  const std::string dir = user + "/" + std::to_string(netns.st_ino);
  for (const std::string& level : {user, dir}) {
    if (::mkdir(level.c_str(), 0700) != 0 && errno != EEXIST) return {};
    struct stat info {};
    if (::lstat(level.c_str(), &info) != 0 || !S_ISDIR(info.st_mode) ||
        info.st_uid != ::geteuid() || (info.st_mode & 077) != 0) {
      return {};
    }
  }
  return dir;
}

/// True when something listens at Unix socket `path`: a listener killed without closing leaves its
/// file behind, and a TCP listener without a twin may have the port since.
bool someone_listens(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof address.sun_path) return false;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  const int probe = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (probe < 0) return false;
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast)
  const bool listening =
      ::connect(probe, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0;
  ::close(probe);
  return listening;
}

}  // namespace

std::optional<std::string> resolve_preferring_ipv4(const std::string& name, std::string* error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(name.c_str(), nullptr, &hints, &found);
      rc != 0 || found == nullptr) {
    if (error != nullptr) *error = rc != 0 ? ::gai_strerror(rc) : "no address";
    return std::nullopt;
  }
  const addrinfo* chosen = nullptr;
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    if (a->ai_family == AF_INET) {
      chosen = a;
      break;
    }
    if (a->ai_family == AF_INET6 && chosen == nullptr) chosen = a;
  }
  char text[INET6_ADDRSTRLEN] = {};
  bool named = false;
  if (chosen != nullptr && chosen->ai_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(chosen->ai_addr);  // NOLINT
    named = ::inet_ntop(AF_INET, &in->sin_addr, text, sizeof text) != nullptr;
  } else if (chosen != nullptr) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(chosen->ai_addr);  // NOLINT
    named = ::inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text) != nullptr;
  }
  ::freeaddrinfo(found);
  if (!named) {
    if (error != nullptr) *error = "no IPv4 or IPv6 address";
    return std::nullopt;
  }
  return std::string(text);
}

bool local_links_enabled() {
  static const bool enabled = [] {
    const char* value = std::getenv("TAGFLOW_LOCAL_LINKS");
    return value == nullptr || std::strcmp(value, "0") != 0;
  }();
  return enabled;
}

std::optional<std::string> local_twin(const std::string& tcp_endpoint) {
  std::string address;
  std::string port;
  if (!split_tcp(tcp_endpoint, address, port)) return std::nullopt;
  const std::string dir = twin_directory();
  if (dir.empty()) return std::nullopt;
  const std::string path = dir + "/" + address + "-" + port;
  if (path.size() > kMaxUnixPath) return std::nullopt;
  return "ipc://" + path;
}

std::string bindable_endpoint(const std::string& tcp_endpoint) {
  std::string address;
  std::string port;
  if (!split_tcp(tcp_endpoint, address, port) || address == "*") return tcp_endpoint;
  in_addr v4{};
  in6_addr v6{};
  if (::inet_pton(AF_INET, address.c_str(), &v4) == 1 ||
      ::inet_pton(AF_INET6, address.c_str(), &v6) == 1) {
    return tcp_endpoint;
  }
  const std::optional<std::string> chosen = resolve_preferring_ipv4(address);
  if (!chosen) return tcp_endpoint;  // an interface name (lo, eth0), or a name ZeroMQ refuses
  return transport::tcp_endpoint(*chosen, port);
}

void set_ipv6_for(zmq::socket_t& socket, const std::string& tcp_endpoint) {
  std::string address;
  std::string port;
  if (!split_tcp_any_port(tcp_endpoint, address, port) || address == "*") return;
  // An address resolves to itself, a name to its first IPv4 address, else its first IPv6 one.
  const std::optional<std::string> chosen = resolve_preferring_ipv4(address);
  if (chosen && is_ipv6_address(*chosen)) socket.set(zmq::sockopt::ipv6, 1);
}

bool is_local_address(const std::string& tcp_endpoint) {
  std::string address;
  std::string port;
  if (!split_tcp(tcp_endpoint, address, port)) return false;
  in_addr v4{};
  in6_addr v6{};
  const bool is_v4 = ::inet_pton(AF_INET, address.c_str(), &v4) == 1;
  const bool is_v6 = !is_v4 && ::inet_pton(AF_INET6, address.c_str(), &v6) == 1;
  if (!is_v4 && !is_v6) return false;
  if (is_v4 && ((ntohl(v4.s_addr) >> 24) == 127 || v4.s_addr == INADDR_ANY)) return true;
  if (is_v6 && (IN6_IS_ADDR_LOOPBACK(&v6) || IN6_IS_ADDR_UNSPECIFIED(&v6))) return true;
  ifaddrs* interfaces = nullptr;
  if (::getifaddrs(&interfaces) != 0) return false;
  bool found = false;
  for (const ifaddrs* i = interfaces; i != nullptr && !found; i = i->ifa_next) {
    if (i->ifa_addr == nullptr) continue;
    if (is_v4 && i->ifa_addr->sa_family == AF_INET) {
      const auto* in = reinterpret_cast<const sockaddr_in*>(i->ifa_addr);  // NOLINT
      found = in->sin_addr.s_addr == v4.s_addr;
    } else if (is_v6 && i->ifa_addr->sa_family == AF_INET6) {
      const auto* in6 = reinterpret_cast<const sockaddr_in6*>(i->ifa_addr);  // NOLINT
      found = std::memcmp(&in6->sin6_addr, &v6, sizeof v6) == 0;
    }
  }
  ::freeifaddrs(interfaces);
  return found;
}

std::optional<std::string> bind_local_twin(zmq::socket_t& socket,
                                           const std::string& bound_tcp_endpoint) {
  std::optional<std::string> twin = local_twin(bound_tcp_endpoint);
  if (!twin) return std::nullopt;
  try {
    socket.bind(*twin);  // ZeroMQ first removes a file a killed listener left at that path
  } catch (const zmq::error_t&) {
    return std::nullopt;
  }
  return twin;
}

void TwinFile::adopt(const std::optional<std::string>& twin) {
  remove();
  if (!twin) return;
  const std::string path = twin->substr(std::strlen("ipc://"));
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0 || !S_ISSOCK(info.st_mode)) return;
  path_ = path;
  device_ = info.st_dev;
  inode_ = info.st_ino;
}

void TwinFile::remove() noexcept {
  if (path_.empty()) return;
  struct stat info {};
  if (::stat(path_.c_str(), &info) == 0 && info.st_dev == device_ && info.st_ino == inode_) {
    (void)::unlink(path_.c_str());
  }
  path_.clear();
}

std::string nearest_endpoint(const std::string& endpoint) {
  if (!local_links_enabled() || !is_local_address(endpoint)) return endpoint;
  const std::optional<std::string> twin = local_twin(endpoint);
  if (!twin) return endpoint;
  struct stat info {};
  const std::string path = twin->substr(std::strlen("ipc://"));
  if (::stat(path.c_str(), &info) != 0 || !S_ISSOCK(info.st_mode)) return endpoint;
  // A twin nobody listens at is one a killed listener left behind.
  return someone_listens(path) ? *twin : endpoint;
}

}  // namespace tagflow::transport
