// "tcp://ADDRESS:PORT" from a host's address and a port, as ZeroMQ reads it: an IPv6 address in
// brackets (`tcp://[::1]:7600`), an IPv4 address or a host name as it is. Header-only; the IPv6
// test is common/bind_address.hpp's. Which sockets then need ZMQ_IPV6: set_ipv6_for()
// (local_links.hpp).
#pragma once

#include <string>

#include "common/bind_address.hpp"

namespace tagflow::transport {

/// "tcp://ADDRESS:PORT", `address` in brackets when it is an IPv6 address.
[[nodiscard]] inline std::string tcp_endpoint(const std::string& address, const std::string& port) {
  const std::string host = is_ipv6_address(address) ? "[" + address + "]" : address;
  return "tcp://" + host + ":" + port;
}

[[nodiscard]] inline std::string tcp_endpoint(const std::string& address, long port) {
  return tcp_endpoint(address, std::to_string(port));
}

}  // namespace tagflow::transport
