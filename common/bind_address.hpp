// What a cluster file may name as the address a server listens on, checked when the file is
// loaded rather than when the process that listens starts (there a mistake stops the run, or
// leaves a service silently off). Two kinds of listener, two rules:
//   - a metrics endpoint resolves its address with getaddrinfo: an IPv4 or IPv6 address (without
//     brackets, as the Kubernetes probes read it too) or a host name;
//   - a gateway's ZeroMQ socket binds only to `*` (every IPv4 interface), an IPv4 or IPv6
//     address (without brackets; `::` is every interface, IPv6 and IPv4), or an interface name
//     (`lo`, `eth0`): ZeroMQ does not resolve host names when it binds, so `localhost` there
//     fails with "No such device". The gateway sets ZMQ_IPV6 for an IPv6 address.
// Only the form is checked: whether the address belongs to the machine the process runs on is
// known there alone, so another host name passes as an interface name and fails when the gateway
// starts. Header-only; POSIX inet_pton.
#pragma once

#include <arpa/inet.h>

#include <string>

namespace tagflow {

/// True when `text` is an IPv6 address (without brackets).
[[nodiscard]] inline bool is_ipv6_address(const std::string& text) {
  in6_addr parsed{};
  return ::inet_pton(AF_INET6, text.c_str(), &parsed) == 1;
}

namespace bind_address_detail {

inline bool only_digits_and_dots(const std::string& text) {
  return text.find_first_not_of("0123456789.") == std::string::npos;
}

inline bool is_ipv4(const std::string& text) {
  in_addr out{};
  return ::inet_pton(AF_INET, text.c_str(), &out) == 1;
}

/// RFC 1123 host name: dot-separated labels of 1..63 letters, digits and hyphens, neither first
/// nor last a hyphen, 253 characters at most.
inline bool is_host_name(const std::string& text) {
  if (text.empty() || text.size() > 253) return false;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('.', start);
    if (end == std::string::npos) end = text.size();
    const std::string label = text.substr(start, end - start);
    if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') {
      return false;
    }
    for (const char c : label) {
      const bool ok =
          (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
      if (!ok) return false;
    }
    start = end + 1;
  }
  return true;
}

/// A Linux interface name: 1..15 characters, none of them '/', ':' or white space.
inline bool is_interface_name(const std::string& text) {
  if (text.empty() || text.size() > 15) return false;
  for (const char c : text) {
    if (c == '/' || c == ':' || c <= ' ' || c > '~') return false;
  }
  return true;
}

/// Why `address`, which has a ':', is no IPv6 address, or "" when it is one; an ADDRESS:PORT is
/// told that the port goes elsewhere.
inline std::string ipv6_problem(const std::string& address) {
  if (is_ipv6_address(address)) return "";
  const std::size_t colon = address.find(':');
  if (colon == address.rfind(':') && colon + 1 < address.size() &&
      address.find_first_not_of("0123456789", colon + 1) == std::string::npos) {
    return "'" + address + "' is not an address: the port goes in a key of its own";
  }
  return "'" + address + "' is not an IPv6 address";
}

}  // namespace bind_address_detail

/// Why `address` cannot be a metrics endpoint's address, or "" when it can.
[[nodiscard]] inline std::string resolvable_bind_problem(const std::string& address) {
  using namespace bind_address_detail;
  if (address.empty()) return "must not be empty";
  if (address.front() == '[') return "'" + address + "': write an IPv6 address without brackets";
  if (address.find(':') != std::string::npos) {
    return ipv6_problem(address);
  }
  if (only_digits_and_dots(address)) {
    return is_ipv4(address) ? "" : "'" + address + "' is not an IPv4 address";
  }
  return is_host_name(address) ? "" : "'" + address + "' is neither an IP address nor a host name";
}

/// Why `address` cannot be a ZeroMQ socket's bind address, or "" when it can.
[[nodiscard]] inline std::string zmq_bind_problem(const std::string& address) {
  using namespace bind_address_detail;
  if (address.empty()) return "must not be empty";
  if (address == "*") return "";
  if (address.front() == '[') return "'" + address + "': write an IPv6 address without brackets";
  if (address.find(':') != std::string::npos) {
    return ipv6_problem(address);
  }
  if (only_digits_and_dots(address)) {
    return is_ipv4(address) ? "" : "'" + address + "' is not an IPv4 address";
  }
  if (address == "localhost") {
    return "ZeroMQ binds to an address or an interface, not a host name: write 127.0.0.1 for "
           "'localhost'";
  }
  return is_interface_name(address)
             ? ""
             : "'" + address + "' is neither '*', an IP address nor an interface name";
}

/// The address a ZeroMQ socket bound to `address` (a form zmq_bind_problem() accepts) listens on:
/// 0.0.0.0 for `*`, an IP address as it is, "" for an interface name (the socket's to resolve).
[[nodiscard]] inline std::string zmq_bind_listen_address(const std::string& address) {
  using namespace bind_address_detail;
  if (address == "*") return "0.0.0.0";
  return is_ipv4(address) || is_ipv6_address(address) ? address : "";
}

}  // namespace tagflow
