// "tcp://ADDRESS:PORT" from a host's address and a port, as ZeroMQ reads it: an IPv6 address in
// brackets (`tcp://[::1]:7600`), an IPv4 address or a host name as it is. Header-only; POSIX
// inet_pton. Which sockets then need ZMQ_IPV6: set_ipv6_for() (local_links.hpp).
#pragma once

#include <arpa/inet.h>

#include <string>

namespace tagflow::transport {

/// True when `address` is an IPv6 address (without brackets).
[[nodiscard]] inline bool is_ipv6_address(const std::string& address) {
  in6_addr parsed{};
  return ::inet_pton(AF_INET6, address.c_str(), &parsed) == 1;
}

/// "tcp://ADDRESS:PORT", `address` in brackets when it is an IPv6 address.
[[nodiscard]] inline std::string tcp_endpoint(const std::string& address, const std::string& port) {
  const std::string host = is_ipv6_address(address) ? "[" + address + "]" : address;
  return "tcp://" + host + ":" + port;
}

[[nodiscard]] inline std::string tcp_endpoint(const std::string& address, long port) {
  return tcp_endpoint(address, std::to_string(port));
}

}  // namespace tagflow::transport
