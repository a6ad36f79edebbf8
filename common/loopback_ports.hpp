// Free loopback TCP ports, for programs that start clusters on this machine (benchmarks, tests):
// whether a port can be bound now, and a run of consecutive free ones. A port found free may be
// taken by another process before it is used; callers that start servers on it must expect that.
// Header-only; POSIX sockets.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <random>

namespace tagflow {

/// Whether a loopback TCP port can be bound now.
inline bool loopback_port_free(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  ::close(fd);
  return ok;
}

/// The lowest port the kernel hands out as the local port of an outgoing connection
/// (/proc/sys/net/ipv4/ip_local_port_range; 32768 when it cannot be read).
inline int ephemeral_port_floor() {
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 0;
  return in >> low && low > 1024 ? low : 32768;
}

/// The first of `count` consecutive free loopback ports (random start), or -1. They are taken
/// from 20000 up to the kernel's ephemeral range, not in it: a port found free there can become
/// the source port of any outgoing connection (a ZeroMQ peer, a scrape) before it is bound.
inline int free_loopback_port_range(int count) {
  std::mt19937 rng(
      static_cast<unsigned>(::getpid()) ^
      static_cast<unsigned>(std::chrono::steady_clock::now().time_since_epoch().count()));
  int first = 20000;
  int span = ephemeral_port_floor() - count - first;
  if (span < 1000) {  // an unusual ephemeral range: the registered ports below it are too few
    first = 10000;
    span = 10000;
  }
  for (int attempt = 0; attempt < 200; ++attempt) {
    const int base = first + static_cast<int>(rng() % static_cast<unsigned>(span));
    bool all = true;
    for (int i = 0; i < count && all; ++i) all = loopback_port_free(base + i);
    if (all) return base;
  }
  return -1;
}

}  // namespace tagflow
