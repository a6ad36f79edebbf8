// The raw ceilings' receive (bench/paper/raw_placements.cpp, bench/marl_bench.cpp): one whole
// ZeroMQ message, every frame of it, within a timeout. Header-only: both executables use it.
#pragma once

#include <chrono>
#include <vector>
#include <zmq.hpp>

namespace tagflow::bench::paper {

/// Receives one message's frames on `socket` within `timeout` into `frames` (replaced); false
/// when none came.
inline bool receive_frames(zmq::socket_t& socket, std::vector<zmq::message_t>& frames,
                           std::chrono::milliseconds timeout) {
  zmq::pollitem_t item{socket.handle(), 0, ZMQ_POLLIN, 0};
  if (zmq::poll(&item, 1, timeout) <= 0) return false;
  frames.clear();
  do {
    frames.emplace_back();
    (void)socket.recv(frames.back(), zmq::recv_flags::none);
  } while (socket.get(zmq::sockopt::rcvmore) != 0);
  return true;
}

}  // namespace tagflow::bench::paper
