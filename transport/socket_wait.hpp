// Waiting for ZeroMQ sockets to have input without zmq::poll (federate/README.md): ZeroMQ's own
// poll asks every socket for its events before and after it sleeps, a system call or two each.
// wait_for_input() sleeps in poll(2) on the sockets' ZMQ_FD descriptors, which turn readable when
// ZeroMQ has news for a socket read to its end (messages, or only its own commands, which the next
// read takes in). A socket not read to its end since it last changed may hold messages its
// descriptor will not announce, so it is asked for its events first; asked and found empty, it
// counts as read to its end.
// Thread-safety: call it from the sockets' own thread.
#pragma once

#include <poll.h>

#include <array>
#include <chrono>
#include <cstddef>

#include <zmq.hpp>

namespace tagflow::transport {

/// A socket to wait for. `read_out` (the caller's own flag, read and written): the socket was
/// read to its end since it last changed; the caller clears it when it stops reading early or
/// sends on the socket. `readable` (written): read it now.
struct WatchedSocket {
  zmq::socket_t& socket;
  bool& read_out;
  bool readable = false;
};

/// Asks every socket not read out for its events and returns at once when one has input. Else
/// sleeps at most `limit` in poll(2) on the sockets' descriptors and `extra_fd` (an eventfd, say;
/// -1 for none), marks the sockets whose descriptor turned readable, and returns true when
/// `extra_fd` did.
template <std::size_t N>
bool wait_for_input(std::array<WatchedSocket, N>& sockets, int extra_fd,
                    std::chrono::milliseconds limit) {
  bool has_input = false;
  for (WatchedSocket& watched : sockets) {
    if (watched.read_out) continue;
    watched.readable = (watched.socket.get(zmq::sockopt::events) & ZMQ_POLLIN) != 0;
    watched.read_out = !watched.readable;
    has_input = has_input || watched.readable;
  }
  if (has_input) return false;
  std::array<pollfd, N + 1> fds{};
  for (std::size_t i = 0; i < N; ++i) {
    fds[i] = {sockets[i].socket.get(zmq::sockopt::fd), POLLIN, 0};
  }
  fds[N] = {extra_fd, POLLIN, 0};  // poll(2) skips a negative descriptor
  if (::poll(fds.data(), fds.size(), static_cast<int>(limit.count())) <= 0) return false;
  for (std::size_t i = 0; i < N; ++i) sockets[i].readable = fds[i].revents != 0;
  return extra_fd >= 0 && fds[N].revents != 0;
}

}  // namespace tagflow::transport
