#include "transport/socket_wait.hpp"

#include <unistd.h>

#include <array>
#include <chrono>

#include <gtest/gtest.h>
#include <zmq.hpp>

namespace tagflow::transport {
namespace {

/// A connected PAIR of sockets over inproc.
struct Pair {
  zmq::context_t context;
  zmq::socket_t receiver{context, zmq::socket_type::pair};
  zmq::socket_t sender{context, zmq::socket_type::pair};
  Pair() {
    receiver.bind("inproc://socket-wait");
    sender.connect("inproc://socket-wait");
  }
};

TEST(SocketWait, ASocketNotReadOutIsAskedAndFoundReadableWithoutSleeping) {
  Pair pair;
  pair.sender.send(zmq::str_buffer("x"));
  bool read_out = false;
  std::array<WatchedSocket, 1> sockets{{{pair.receiver, read_out}}};
  // Found by asking, not by sleeping: the ask found input, so the socket is not read out.
  EXPECT_FALSE(wait_for_input(sockets, -1, std::chrono::minutes(1)));
  EXPECT_TRUE(sockets[0].readable);
  EXPECT_FALSE(read_out);
}

TEST(SocketWait, AnEmptySocketCountsAsReadOutAndItsNextMessageWakesTheWait) {
  Pair pair;
  bool read_out = false;
  {
    std::array<WatchedSocket, 1> sockets{{{pair.receiver, read_out}}};
    EXPECT_FALSE(wait_for_input(sockets, -1, std::chrono::milliseconds(0)));
    EXPECT_FALSE(sockets[0].readable);
  }
  EXPECT_TRUE(read_out);
  pair.sender.send(zmq::str_buffer("x"));
  std::array<WatchedSocket, 1> sockets{{{pair.receiver, read_out}}};
  for (int i = 0; i < 100 && !sockets[0].readable; ++i) {
    (void)wait_for_input(sockets, -1, std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(sockets[0].readable);
  zmq::message_t message;
  EXPECT_TRUE(pair.receiver.recv(message, zmq::recv_flags::dontwait));
  EXPECT_EQ(message.to_string(), "x");
}

TEST(SocketWait, AReadableExtraDescriptorIsReportedAndAnEmptySocketIsNotMarked) {
  Pair pair;
  bool read_out = false;  // asked first: that takes in ZeroMQ's own news of the connection
  std::array<int, 2> pipe_fds{};
  ASSERT_EQ(::pipe(pipe_fds.data()), 0);
  ASSERT_EQ(::write(pipe_fds[1], "w", 1), 1);
  std::array<WatchedSocket, 1> sockets{{{pair.receiver, read_out}}};
  bool woken = false;
  for (int i = 0; i < 100 && !woken; ++i) {
    woken = wait_for_input(sockets, pipe_fds[0], std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(woken);
  EXPECT_FALSE(sockets[0].readable);
  EXPECT_TRUE(read_out);
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}

}  // namespace
}  // namespace tagflow::transport
