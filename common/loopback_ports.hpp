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

/// The first of `count` consecutive free loopback ports in 20000..49999 (random start), or -1.
inline int free_loopback_port_range(int count) {
  std::mt19937 rng(
      static_cast<unsigned>(::getpid()) ^
      static_cast<unsigned>(std::chrono::steady_clock::now().time_since_epoch().count()));
  for (int attempt = 0; attempt < 200; ++attempt) {
    const int base = 20000 + static_cast<int>(rng() % 30000);
    bool all = true;
    for (int i = 0; i < count && all; ++i) all = loopback_port_free(base + i);
    if (all) return base;
  }
  return -1;
}

}  // namespace tagflow
