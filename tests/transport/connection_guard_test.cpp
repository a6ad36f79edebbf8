#include "transport/connection_guard.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

#include "tests/support/raw_zmtp_peer.hpp"
#include "transport/wire_socket.hpp"

namespace tagflow::transport {
namespace {

using namespace std::chrono_literals;
using testing::EndlessMessage;
using testing::RawZmtpPeer;

/// A ROUTER receiving data messages the way a federate's data plane does, with a guard.
struct GuardedReceiver {
  zmq::context_t context;
  zmq::socket_t router{context, zmq::socket_type::router};
  ConnectionGuard guard;
  MessageValidator validator;
  PeerDropCounters drops;
  std::uint16_t port = 0;
  int delivered = 0;

  explicit GuardedReceiver(ConnectionLimits limits) : guard(context, router, limits) {
    configure_receiver(router, validator.policy());
    router.set(zmq::sockopt::linger, 0);
    router.bind("tcp://127.0.0.1:*");
    const std::string endpoint = router.get(zmq::sockopt::last_endpoint);
    port = static_cast<std::uint16_t>(std::stoi(endpoint.substr(endpoint.rfind(':') + 1)));
    validator.allow_port("up", 1);
  }

  /// A real upstream: a libzmq DEALER with routing id "up", connected.
  zmq::socket_t upstream() {
    zmq::socket_t sender(context, zmq::socket_type::dealer);
    sender.set(zmq::sockopt::routing_id, "up");
    sender.set(zmq::sockopt::linger, 0);
    sender.connect("tcp://127.0.0.1:" + std::to_string(port));
    return sender;
  }

  /// Reads everything waiting, then lets the guard check; returns the connections it cut.
  int pump() {
    while (true) {
      const ReceiveResult result =
          receive_wire_message(router, validator, drops, zmq::recv_flags::dontwait);
      if (!result.received) return guard.check(drops);
      guard.note_read(result.source_fd, result.message.peer, result.wire_bytes);
      if (result.error == DropReason::kNone) ++delivered;
    }
  }

  /// Pumps every `step` until `done()` holds or `timeout` has passed; returns the connections
  /// cut meanwhile.
  template <class Done>
  int pump_until(Done done, std::chrono::milliseconds timeout,
                 std::chrono::milliseconds step = 1ms) {
    int cut = 0;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!done() && std::chrono::steady_clock::now() < deadline) {
      cut += pump();
      std::this_thread::sleep_for(step);
    }
    return cut;
  }
};

/// The limits of a receiver of messages up to 3 MB, with a short stall time.
ConnectionLimits small_limits() {
  ConnectionLimits limits = limits_for_messages(3'000'000, 1024);
  limits.stall_after = 200ms;
  limits.check_every = 1ms;
  return limits;
}

/// A header of version `version` (3: payload frames; 4: the payloads in the header's frame).
WireHeader header_at(std::int64_t time, std::uint32_t version = kFirstDoneHeaderVersion) {
  WireHeader header;
  header.version = version;
  header.from = "up";
  header.port = 1;
  header.tag = {time, 0};
  return header;
}

TEST(ConnectionGuard, ZmtpFrameBytesFollowShortAndLongFraming) {
  EXPECT_EQ(zmtp_frame_bytes(0), 2U);
  EXPECT_EQ(zmtp_frame_bytes(255), 257U);
  EXPECT_EQ(zmtp_frame_bytes(256), 265U);
}

TEST(ConnectionGuard, MultipartMessageWithoutEndIsCutNearTheCap) {
  GuardedReceiver receiver(small_limits());
  // Frames with MORE, never a last one: without the guard ZeroMQ keeps all of it. 1 MiB frames
  // at most 1 GiB/s; stops at the cut (or after 2 GiB, which the assertions below then fail on).
  const EndlessMessage flood{std::size_t{1} << 20, 1ms, 2048};
  std::atomic<bool> attacker_done{false};
  std::uint64_t attacker_sent = 0;
  int frames_sent = 0;
  bool handshake_done = false;
  std::thread attacker([&] {
    RawZmtpPeer peer(receiver.port, "intruder");
    handshake_done = peer.connected();
    frames_sent = flood.send(peer);
    attacker_sent = peer.bytes_sent();
    attacker_done.store(true);
  });
  const auto start = std::chrono::steady_clock::now();
  auto last_check = start;
  std::chrono::steady_clock::duration longest_gap{};
  while (!attacker_done.load() && std::chrono::steady_clock::now() < start + 30s) {
    (void)receiver.pump();
    const auto now = std::chrono::steady_clock::now();
    longest_gap = std::max(longest_gap, now - last_check);
    last_check = now;
    std::this_thread::sleep_for(2ms);
  }
  attacker.join();
  (void)receiver.pump();  // counts a cut the guard's own thread made after the last pump
  const ConnectionLimits& limits = receiver.guard.limits();
  // ZeroMQ cannot have held more than the attacker got to send before the cut: the cap, the
  // kernels' buffers, and what arrives within the checks (at the speed the attacker keeps to).
  const std::uint64_t bound = flood.bound(limits.max_held_bytes, longest_gap + limits.check_every);
  std::cout << "the attacker sent " << attacker_sent << " bytes before the cut (cap "
            << limits.max_held_bytes << ", bound " << bound << ")\n";
  ASSERT_TRUE(handshake_done);
  EXPECT_EQ(receiver.drops.count("(unidentified)", DropReason::kIncompleteOverCap), 1U);
  EXPECT_LT(frames_sent, flood.max_frames) << "the attacker was never cut";
  EXPECT_LT(attacker_sent, bound);
  EXPECT_EQ(receiver.guard.connections(), 0U);
}

TEST(ConnectionGuard, RealPeerSendingManySizesThenPausingIsNeverCut) {
  // stall_after 1 s, not 200 ms: a 3 MB message in the middle of being received counts as a
  // stall while ZeroMQ's I/O thread gets no CPU, and in a suite on two busy cores it once got
  // none for over 200 ms (the connection was cut with 3,000,165 bytes held; the default is 5 s).
  ConnectionLimits limits = small_limits();
  limits.stall_after = 1s;
  GuardedReceiver receiver(limits);
  zmq::socket_t sender = receiver.upstream();
  const std::size_t sizes[] = {0, 1, 200, 253, 254, 255, 256, 257, 70'000, 3'000'000};
  int sent = 0;
  for (int round = 0; round < 40; ++round) {
    for (const std::size_t size : sizes) {
      const Payload value = Payload::owning(std::string(size, 'v'));
      ASSERT_TRUE(send_wire_message(sender, header_at(++sent), {value}));
      if (size <= HeaderLimits{}.max_inline_bytes) {  // and in the header's frame
        ASSERT_TRUE(
            send_wire_message(sender, header_at(++sent, kFirstInlineHeaderVersion), {value}));
      }
    }
    (void)receiver.pump();
  }
  EXPECT_EQ(receiver.pump_until([&] { return receiver.delivered >= sent; }, 20s), 0);
  ASSERT_EQ(receiver.delivered, sent);
  // Idle for longer than stall_after: what it read matches what the kernel received, so the
  // connection holds nothing but its handshake.
  EXPECT_EQ(receiver.pump_until([] { return false; }, 3 * limits.stall_after, 5ms), 0);
  EXPECT_EQ(receiver.drops.total(), 0U);
  EXPECT_EQ(receiver.guard.connections(), 1U);
}

TEST(ConnectionGuard, SecondConnectionWithALiveRoutingIdIsCutAndCounted) {
  GuardedReceiver receiver(small_limits());
  zmq::socket_t sender = receiver.upstream();
  ASSERT_TRUE(send_wire_message(sender, header_at(1), {Payload::owning(std::string(10, 'a'))}));
  (void)receiver.pump_until([&] { return receiver.delivered >= 1; }, 10s);
  ASSERT_EQ(receiver.delivered, 1);

  RawZmtpPeer squatter(receiver.port, "up");
  ASSERT_TRUE(squatter.connected());
  // Whole messages under the live id: ZeroMQ queues them and never hands them over.
  const std::string header = encode_header([] {
    WireHeader h = header_at(2);
    h.sizes = {4};
    return h;
  }());
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(squatter.send_frame(header, true));
    ASSERT_TRUE(squatter.send_frame("evil", false));
  }
  (void)receiver.pump_until([&] { return receiver.drops.total() > 0; }, 10s, 5ms);
  EXPECT_EQ(receiver.drops.count("(unidentified)", DropReason::kUndeliveredConnection), 1U);
  EXPECT_TRUE(squatter.closed_by_peer());
  EXPECT_EQ(receiver.delivered, 1);  // nothing of the squatter's reached the application
  // The real upstream goes on.
  ASSERT_TRUE(send_wire_message(sender, header_at(3), {Payload::owning(std::string(10, 'b'))}));
  (void)receiver.pump_until([&] { return receiver.delivered >= 2; }, 10s);
  EXPECT_EQ(receiver.delivered, 2);
}

// Many connections, each holding less than a connection's cap, together more than the process's
// budget: the guard's own thread cuts the idle ones, most held first, until the rest fit, while
// the application reads nothing (as in a long reaction); the process's total ends within the
// budget, and the real upstream goes on.
TEST(ConnectionGuard, ConnectionsEachUnderTheCapAreCutWhenTogetherOverTheProcessBudget) {
  ConnectionLimits limits = small_limits();  // a connection's cap: two 3 MB messages
  limits.process_budget = std::size_t{12} << 20;
  limits.stall_after = 60s;  // rule 3 alone
  GuardedReceiver receiver(limits);
  zmq::socket_t sender = receiver.upstream();
  // Six connections, each one 4 MiB message that never ends (under the 6 MB cap): 24 MiB.
  std::vector<std::unique_ptr<RawZmtpPeer>> intruders;
  for (int i = 0; i < 6; ++i) {
    intruders.push_back(
        std::make_unique<RawZmtpPeer>(receiver.port, "intruder-" + std::to_string(i)));
    ASSERT_TRUE(intruders.back()->connected());
    const EndlessMessage part{std::size_t{1} << 20, 1ms, 4};
    ASSERT_EQ(part.send(*intruders.back()), 4);
  }
  // No receive, no check() from here: only the guard's thread looks.
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (receiver.guard.connections() > 3 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  (void)receiver.pump();  // counts the cuts
  // 24 MiB held against a 12 MiB budget: at least three of the six go (each holds at most 4 MiB,
  // and what is left must fit), and no more than needed.
  const std::uint64_t cut = receiver.drops.count("(unidentified)", DropReason::kOverProcessBudget);
  std::cout << "cut " << cut << " of 6 connections; the process holds "
            << ConnectionGuard::process_held() << " bytes\n";
  EXPECT_GE(cut, 3U);
  EXPECT_LE(cut, 4U);
  EXPECT_EQ(receiver.drops.total(), cut);
  EXPECT_LE(ConnectionGuard::process_held(), limits.process_budget);
  EXPECT_EQ(receiver.guard.connections(), 7 - cut);  // and the upstream
  ASSERT_TRUE(send_wire_message(sender, header_at(1), {Payload::owning(std::string(10, 'a'))}));
  (void)receiver.pump_until([&] { return receiver.delivered >= 1; }, 10s);
  EXPECT_EQ(receiver.delivered, 1);
}

// Rule 3's choice: the connections nothing was read from go first, most held first, and only
// while the total is over the budget; the ones being read stay unless the guard is made
// budget_cuts_read_connections (the inference gateway's, whose clients may each be read in turn
// and still send faster than they are read), and then they go too, most held first.
TEST(ConnectionGuard, OverTheBudgetTheIdleGoFirstAndTheReadOnlyWhereTheGuardSaysSo) {
  const std::vector<HeldConnection> held = {
      {10, 4, false}, {11, 8, true}, {12, 6, false}, {13, 5, true}, {14, 2, false}};
  // 25 held against 10: the idle ones (6, 4, 2) leave 13, still over.
  EXPECT_EQ(over_budget_cuts(held, 25, 10, false), (std::vector<int>{12, 10, 14}));
  // The read ones go next, most held first, until the rest fit: 8 leaves 5.
  EXPECT_EQ(over_budget_cuts(held, 25, 10, true), (std::vector<int>{12, 10, 14, 11}));
  // No more than needed: 16 against 10 loses the idle connection holding most (6), nothing else.
  EXPECT_EQ(over_budget_cuts(held, 16, 10, true), (std::vector<int>{12}));
  // Within the budget nothing is cut, whatever each holds.
  EXPECT_TRUE(over_budget_cuts(held, 10, 10, true).empty());
  // Only read connections over the budget: kept unless the guard says otherwise.
  const std::vector<HeldConnection> read = {{20, 7, true}, {21, 9, true}};
  EXPECT_TRUE(over_budget_cuts(read, 16, 10, false).empty());
  EXPECT_EQ(over_budget_cuts(read, 16, 10, true), (std::vector<int>{21}));
}

// Rule 4: beyond `max_connections`, the connections quiet longest are cut, so idle connections
// cannot take every descriptor; a peer that keeps sending is never the quietest and stays.
TEST(ConnectionGuard, ConnectionsOverTheCountAreCutQuietestFirst) {
  ConnectionLimits limits = small_limits();
  limits.stall_after = 60s;  // rule 4 alone
  limits.max_connections = 4;
  GuardedReceiver receiver(limits);
  zmq::socket_t sender = receiver.upstream();
  std::int64_t time = 1;
  const auto send_one = [&] {
    return send_wire_message(sender, header_at(time++), {Payload::owning(std::string(10, 'a'))});
  };
  ASSERT_TRUE(send_one());
  (void)receiver.pump_until([&] { return receiver.delivered >= 1; }, 10s);
  ASSERT_EQ(receiver.delivered, 1);
  // Eight idle connections, 20 ms apart, while the upstream sends every 2 ms.
  std::vector<std::unique_ptr<RawZmtpPeer>> idle;
  for (int i = 0; i < 8; ++i) {
    idle.push_back(std::make_unique<RawZmtpPeer>(receiver.port, "idle-" + std::to_string(i)));
    ASSERT_TRUE(idle.back()->connected()) << i;
    for (int k = 0; k < 10; ++k) {
      ASSERT_TRUE(send_one());
      (void)receiver.pump();
      std::this_thread::sleep_for(2ms);
    }
  }
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (receiver.drops.count("(unidentified)", DropReason::kTooManyConnections) < 5 &&
         std::chrono::steady_clock::now() < deadline) {
    ASSERT_TRUE(send_one());
    (void)receiver.pump();
    std::this_thread::sleep_for(2ms);
  }
  EXPECT_EQ(receiver.drops.count("(unidentified)", DropReason::kTooManyConnections), 5U);
  EXPECT_EQ(receiver.drops.count("up", DropReason::kTooManyConnections), 0U);
  EXPECT_EQ(receiver.guard.connections(), 4U);
  // The upstream was never cut: what it sends still arrives.
  const int before = receiver.delivered;
  ASSERT_TRUE(send_one());
  (void)receiver.pump_until([&] { return receiver.delivered > before; }, 10s);
  EXPECT_GT(receiver.delivered, before);
}

// With no TCP connection (a socket bound to a Unix socket only, as same-host links are) the
// guard's thread has nothing to check and sleeps; the first TCP connection wakes it, and it
// watches that connection without the application reading or checking anything.
TEST(ConnectionGuard, ItsThreadSleepsUntilATcpConnectionComesThenWatchesItAlone) {
  zmq::context_t context;
  zmq::socket_t router{context, zmq::socket_type::router};
  router.set(zmq::sockopt::linger, 0);
  ConnectionGuard guard(context, router, small_limits());  // checks every 1 ms when it watches
  const std::string path = ::testing::TempDir() + "guard-" + std::to_string(::getpid());
  router.bind("ipc://" + path);
  zmq::socket_t local(context, zmq::socket_type::dealer);
  local.set(zmq::sockopt::linger, 0);
  local.connect("ipc://" + path);
  local.send(zmq::str_buffer("hello"), zmq::send_flags::none);
  zmq::message_t identity;
  zmq::message_t body;
  ASSERT_TRUE(router.recv(identity));
  ASSERT_TRUE(router.recv(body));  // the Unix-socket connection is up and used
  const std::uint64_t before = guard.thread_passes();
  std::this_thread::sleep_for(300ms);
  // The Unix-socket connection's ACCEPTED event may wake it once; a timer would have woken it
  // about 300 times.
  EXPECT_LE(guard.thread_passes() - before, 2U);
  EXPECT_EQ(guard.connections(), 0U);

  router.bind("tcp://127.0.0.1:*");
  const std::string endpoint = router.get(zmq::sockopt::last_endpoint);
  zmq::socket_t remote(context, zmq::socket_type::dealer);
  remote.set(zmq::sockopt::linger, 0);
  remote.connect(endpoint);
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (guard.connections() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  EXPECT_EQ(guard.connections(), 1U);
  // Watching a connection, it checks on its timer again.
  const std::uint64_t watching = guard.thread_passes();
  std::this_thread::sleep_for(100ms);
  EXPECT_GE(guard.thread_passes() - watching, 10U);
  ::unlink(path.c_str());
}

}  // namespace
}  // namespace tagflow::transport
