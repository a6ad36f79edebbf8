// Free loopback TCP ports, for programs that start clusters on this machine (benchmarks, tests):
// whether a port can be bound now, and a run of consecutive free ones. A port found free may be
// taken by another process before it is used; callers that start servers on it must expect that.
// Programs that choose ports here also claim them from each other (claim_port_blocks), so that
// programs run side by side (tests under `ctest -j N`, two suites, a benchmark beside a test)
// never pick the same ports between one cluster and the next. Header-only; POSIX sockets and
// flock(2).
#pragma once

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <system_error>
#include <vector>

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

/// Ports are claimed in blocks of this many: block b is ports b * 100 .. b * 100 + 99.
inline constexpr int kPortBlock = 100;

/// Claims, for the rest of this process's life, every block of kPortBlock ports that
/// [first, first + count) touches: an exclusive flock(2) on `<temp dir>/tagflow-ports/<block>`,
/// held by a descriptor left open (the kernel drops it when the process ends, however it ends).
/// Returns false, claiming nothing, when another process holds one of them. Every chooser of free
/// ports in this tree claims before it returns (tests/examples/ too, in Python), so two programs
/// choosing at once cannot both use a port they each found free. (Files with fixed ports, such
/// as the shipped configs, are not covered.)
inline bool claim_port_blocks(int first, int count) {
  std::error_code error;
  const std::filesystem::path dir = std::filesystem::temp_directory_path(error) / "tagflow-ports";
  std::filesystem::create_directories(dir, error);
  std::vector<int> held;
  for (int block = first / kPortBlock; block <= (first + count - 1) / kPortBlock; ++block) {
    const std::string path = (dir / std::to_string(block)).string();
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd >= 0 && ::flock(fd, LOCK_EX | LOCK_NB) == 0) {
      held.push_back(fd);
      continue;
    }
    if (fd >= 0) ::close(fd);
    for (const int h : held) ::close(h);  // closing a descriptor drops its lock
    return false;
  }
  return true;  // the descriptors stay open: the claims last until the process ends
}

/// The first of `count` (at most kPortBlock) consecutive free loopback ports, claimed for this
/// process (claim_port_blocks), or -1. They start at a random block from 20000 up to the kernel's
/// ephemeral range, not in it: a port found free there can become the source port of any outgoing
/// connection (a ZeroMQ peer, a scrape) before it is bound.
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
  const int blocks = span / kPortBlock;
  for (int attempt = 0; attempt < 200; ++attempt) {
    const int base = first + static_cast<int>(rng() % static_cast<unsigned>(blocks)) * kPortBlock;
    bool all = true;
    for (int i = 0; i < count && all; ++i) all = loopback_port_free(base + i);
    if (all && claim_port_blocks(base, count)) return base;
  }
  return -1;
}

}  // namespace tagflow
