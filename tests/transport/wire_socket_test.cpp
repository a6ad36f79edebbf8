#include "transport/wire_socket.hpp"

#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

namespace tagflow::transport {
namespace {

struct Link {
  zmq::context_t context;
  zmq::socket_t receiver{context, zmq::socket_type::router};
  zmq::socket_t sender{context, zmq::socket_type::dealer};

  explicit Link(const std::string& transport, const std::string& sender_id = "a") {
    configure_receiver(receiver, ValidationPolicy{});
    if (transport == "ipc") {
      receiver.bind("ipc://" + ::testing::TempDir() + "wire-socket-test-" +
                    std::to_string(::getpid()));
    } else {
      receiver.bind(transport == "tcp" ? "tcp://127.0.0.1:*" : "inproc://wire-socket-test");
    }
    sender.set(zmq::sockopt::routing_id, sender_id);
    sender.connect(receiver.get(zmq::sockopt::last_endpoint));
  }
};

/// A header of version `version` (3: payload frames; 4: the payloads in the header's frame).
WireHeader header_at(std::int64_t time, std::uint32_t version = kFirstDoneHeaderVersion) {
  WireHeader header;
  header.version = version;
  header.from = "a";
  header.port = 1;
  header.tag = {time, 0};
  return header;
}

TEST(WireSocket, PayloadFramesArriveIntactWithTheirHeader) {
  Link link("tcp");
  MessageValidator validator;
  validator.allow_port("a", 1);
  PeerDropCounters drops;
  std::vector<std::uint8_t> big(100'000);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<std::uint8_t>(i * 7);
  const std::string small = "hello";
  ASSERT_TRUE(send_wire_message(
      link.sender, header_at(5),
      {Payload::copy_of(big.data(), big.size()), Payload::copy_of(small.data(), small.size())}));
  const ReceiveResult result = receive_wire_message(link.receiver, validator, drops);
  ASSERT_TRUE(result.received);
  ASSERT_EQ(result.error, DropReason::kNone);
  EXPECT_EQ(result.message.peer, "a");
  EXPECT_EQ(result.message.header.tag, (WireTag{5, 0}));
  ASSERT_EQ(result.message.payloads.size(), 2U);
  ASSERT_EQ(result.message.payloads[0].size(), big.size());
  EXPECT_EQ(std::memcmp(result.message.payloads[0].data(), big.data(), big.size()), 0);
  EXPECT_EQ(result.message.payloads[1].to_string(), "hello");
  EXPECT_EQ(drops.total(), 0U);
}

TEST(WireSocket, SaysWhichMessagesCameOverTcp) {
  // The connection guard watches TCP connections only (WIRE.md §3.1): a message over a Unix
  // socket (a twin, §1.1) is not noted with it.
  for (const std::string transport : {"tcp", "ipc"}) {
    Link link(transport);
    MessageValidator validator;
    validator.allow_port("a", 1);
    PeerDropCounters drops;
    ASSERT_TRUE(send_wire_message(link.sender, header_at(1), {Payload::owning(std::string("x"))}));
    const ReceiveResult result = receive_wire_message(link.receiver, validator, drops);
    ASSERT_EQ(result.error, DropReason::kNone) << transport;
    EXPECT_EQ(result.over_tcp, transport == "tcp") << transport;
    // The descriptor is read for the guard, which watches only TCP connections.
    if (transport == "tcp") {
      EXPECT_GE(result.source_fd, 0);
    } else {
      EXPECT_EQ(result.source_fd, -1);
    }
  }
}

TEST(WireSocket, ReadsTheConnectionsMetadataOnlyWhenAsked) {
  // Without a guard nothing reads the descriptor or the transport, without CURVE nothing the
  // User-Id: each is a lookup in ZeroMQ's metadata per message, skipped when not asked for.
  Link link("tcp");
  MessageValidator validator;
  validator.allow_port("a", 1);
  PeerDropCounters drops;
  for (int i = 1; i <= 2; ++i) {
    ASSERT_TRUE(send_wire_message(link.sender, header_at(i), {Payload::owning(std::string("x"))}));
  }
  ReceiveResult skipped =
      receive_wire_message(link.receiver, validator, drops, zmq::recv_flags::none, {false, false});
  ASSERT_EQ(skipped.error, DropReason::kNone);
  EXPECT_EQ(skipped.source_fd, -1);
  EXPECT_FALSE(skipped.over_tcp);
  EXPECT_EQ(take_payload(skipped.message).view(), "x");
  const ReceiveResult read = receive_wire_message(link.receiver, validator, drops);
  ASSERT_EQ(read.error, DropReason::kNone);
  EXPECT_GE(read.source_fd, 0);
  EXPECT_TRUE(read.over_tcp);
}

TEST(WireSocket, InprocPayloadIsHandedOverWithoutCopying) {
  Link link("inproc");
  MessageValidator validator;
  validator.allow_port("a", 1);
  PeerDropCounters drops;
  auto bytes = std::make_shared<std::vector<char>>(4096, 'x');
  Payload payload{bytes, bytes->data(), bytes->size()};
  ASSERT_TRUE(send_wire_message(link.sender, header_at(1), {payload}));
  const ReceiveResult result = receive_wire_message(link.receiver, validator, drops);
  ASSERT_EQ(result.error, DropReason::kNone);
  ASSERT_EQ(result.message.payloads.size(), 1U);
  EXPECT_EQ(result.message.payloads[0].data(), bytes->data());
}

TEST(WireSocket, AdoptedFrameIsTheReceivedBytesNotACopy) {
  Link link("tcp");
  MessageValidator validator;
  validator.allow_port("a", 1);
  PeerDropCounters drops;
  const Payload sent = Payload::owning(std::string(50'000, 'f'));
  ASSERT_TRUE(send_wire_message(link.sender, header_at(1), {sent}));
  ReceiveResult result = receive_wire_message(link.receiver, validator, drops);
  ASSERT_EQ(result.error, DropReason::kNone);
  ASSERT_EQ(result.message.payloads.size(), 1U);
  const void* frame_bytes = result.message.payloads[0].data();
  const Payload adopted = adopt_frames(std::move(result.message.payloads));
  EXPECT_EQ(adopted.data, frame_bytes);
  EXPECT_EQ(adopted.view(), sent.view());
}

TEST(WireSocket, SeveralFramesAreJoinedIntoOnePayloadAndNoneIsEmpty) {
  std::vector<zmq::message_t> frames;
  frames.emplace_back(std::string("ab"));
  frames.emplace_back(std::string("cd"));
  EXPECT_EQ(adopt_frames(std::move(frames)).view(), "abcd");
  EXPECT_EQ(adopt_frames({}).size, 0U);
}

TEST(WireSocket, MalformedSprayIsDroppedAndCountedWhileValidMessagesGetThrough) {
  Link link("tcp");
  zmq::socket_t spray(link.context, zmq::socket_type::dealer);
  spray.set(zmq::sockopt::routing_id, "sprayer");
  spray.connect(link.receiver.get(zmq::sockopt::last_endpoint));
  MessageValidator validator(ValidationPolicy{HeaderLimits{}, 1 << 20});
  validator.allow_port("a", 1);
  validator.set_completed_tag({0, 0});
  PeerDropCounters drops;

  std::mt19937 random(42);
  const std::string valid_header = encode_header(header_at(9));
  constexpr int kGarbage = 300;
  for (int i = 0; i < kGarbage; ++i) {
    std::string junk(random() % 64, '\0');
    for (char& c : junk) c = static_cast<char>(random());
    switch (i % 5) {
      case 0:
        spray.send(zmq::buffer(junk), zmq::send_flags::none);
        break;
      case 1:  // a valid header that lies about its sizes
        spray.send(zmq::buffer(valid_header), zmq::send_flags::sndmore);
        spray.send(zmq::buffer(junk), zmq::send_flags::none);
        break;
      case 2: {  // a correct header from a spoofed sender
        const std::string spoof = encode_header(header_at(9 + i));
        spray.send(zmq::buffer(spoof), zmq::send_flags::none);
        break;
      }
      case 3:  // a truncated header
        spray.send(zmq::buffer(valid_header.substr(0, valid_header.size() / 2)),
                   zmq::send_flags::none);
        break;
      default:  // too many frames
        for (int f = 0; f < 40; ++f) spray.send(zmq::buffer(junk), zmq::send_flags::sndmore);
        spray.send(zmq::buffer(junk), zmq::send_flags::none);
    }
    if (i % 30 == 0) {
      const std::string value = std::to_string(i);
      ASSERT_TRUE(send_wire_message(link.sender, header_at(100 + i),
                                    {Payload::copy_of(value.data(), value.size())}));
    }
  }
  int valid = 0;
  int dropped = 0;
  while (valid + dropped < kGarbage + kGarbage / 30) {
    const ReceiveResult result = receive_wire_message(link.receiver, validator, drops);
    ASSERT_TRUE(result.received);
    if (result.error != DropReason::kNone) {
      EXPECT_EQ(result.message.peer, "sprayer");
      ++dropped;
      continue;
    }
    EXPECT_EQ(result.message.peer, "a");
    EXPECT_EQ(result.message.header.tag.time_ns(), 100 + valid * 30);
    EXPECT_EQ(result.message.payloads.at(0).to_string(), std::to_string(valid * 30));
    ++valid;
  }
  EXPECT_EQ(valid, kGarbage / 30);
  EXPECT_EQ(dropped, kGarbage);
  EXPECT_EQ(drops.total("sprayer"), static_cast<std::uint64_t>(kGarbage));
  EXPECT_EQ(drops.total("a"), 0U);
}

TEST(WireSocket, FrameAboveMaxMessageSizeDisconnectsTheSenderInsteadOfArriving) {
  Link link("tcp");
  ValidationPolicy small{HeaderLimits{}, 4096};
  zmq::socket_t receiver(link.context, zmq::socket_type::router);
  configure_receiver(receiver, small);
  receiver.bind("tcp://127.0.0.1:*");
  zmq::socket_t big_sender(link.context, zmq::socket_type::dealer);
  big_sender.set(zmq::sockopt::routing_id, "big");
  big_sender.connect(receiver.get(zmq::sockopt::last_endpoint));
  zmq::socket_t good_sender(link.context, zmq::socket_type::dealer);
  good_sender.set(zmq::sockopt::routing_id, "a");
  good_sender.connect(receiver.get(zmq::sockopt::last_endpoint));
  MessageValidator validator(small);
  validator.allow_port("a", 1);
  PeerDropCounters drops;
  const std::string huge(1 << 20, 'h');
  big_sender.send(zmq::buffer(huge), zmq::send_flags::none);
  ASSERT_TRUE(send_wire_message(good_sender, header_at(3), {}));
  const ReceiveResult result = receive_wire_message(receiver, validator, drops);
  ASSERT_EQ(result.error, DropReason::kNone);
  EXPECT_EQ(result.message.peer, "a");
  receiver.set(zmq::sockopt::rcvtimeo, 200);
  EXPECT_FALSE(receive_wire_message(receiver, validator, drops).received);
}

TEST(WireSocket, Version4PayloadsArriveInTheHeadersOwnFrame) {
  Link link("tcp");
  MessageValidator validator;
  validator.allow_port("a", 1);
  PeerDropCounters drops;
  ASSERT_TRUE(send_wire_message(
      link.sender, header_at(4, kFirstInlineHeaderVersion),
      {Payload::owning(std::string("hello")), Payload::owning(std::string("world!"))}));
  ASSERT_TRUE(send_wire_message(link.sender, header_at(5, kFirstInlineHeaderVersion), {}));
  ReceiveResult result = receive_wire_message(link.receiver, validator, drops);
  ASSERT_EQ(result.error, DropReason::kNone);
  EXPECT_EQ(result.message.header.version, kFirstInlineHeaderVersion);
  EXPECT_EQ(result.message.header.sizes, (std::vector<std::uint64_t>{5, 6}));
  EXPECT_TRUE(result.message.payloads.empty());  // no frame followed the header
  EXPECT_EQ(take_payload(result.message).view(), "helloworld!");
  result = receive_wire_message(link.receiver, validator, drops);
  ASSERT_EQ(result.error, DropReason::kNone);
  EXPECT_EQ(take_payload(result.message).size, 0U);
  EXPECT_EQ(drops.total(), 0U);
}

TEST(WireSocket, Version4FramesWhosePayloadBytesDisagreeWithTheirSizesAreDropped) {
  Link link("tcp");
  MessageValidator validator;
  validator.allow_port("a", 1);
  PeerDropCounters drops;
  WireHeader header = header_at(4, kFirstInlineHeaderVersion);
  header.sizes = {5};
  const std::string map = encode_header(header);
  // Fewer bytes than `sizes` lists, more, and a payload frame behind the header's frame.
  link.sender.send(zmq::buffer(map + "abcd"), zmq::send_flags::none);
  link.sender.send(zmq::buffer(map + "abcdef"), zmq::send_flags::none);
  link.sender.send(zmq::buffer(map + "abcde"), zmq::send_flags::sndmore);
  link.sender.send(zmq::buffer(std::string("x")), zmq::send_flags::none);
  link.sender.send(zmq::buffer(map + "abcde"), zmq::send_flags::none);  // right
  EXPECT_EQ(receive_wire_message(link.receiver, validator, drops).error, DropReason::kSizeMismatch);
  EXPECT_EQ(receive_wire_message(link.receiver, validator, drops).error, DropReason::kSizeMismatch);
  EXPECT_EQ(receive_wire_message(link.receiver, validator, drops).error,
            DropReason::kFrameCountMismatch);
  ReceiveResult result = receive_wire_message(link.receiver, validator, drops);
  ASSERT_EQ(result.error, DropReason::kNone);
  EXPECT_EQ(take_payload(result.message).view(), "abcde");
  EXPECT_EQ(drops.total("a"), 3U);
}

TEST(WireSocket, AReceiverOfAnEarlierVersionRefusesVersion4) {
  Link link("tcp");
  MessageValidator validator;
  validator.allow_port("a", 1);
  validator.set_newest_version(kFirstDoneHeaderVersion);  // a federate of protocol version 4 or 5
  PeerDropCounters drops;
  ASSERT_TRUE(send_wire_message(link.sender, header_at(4, kFirstInlineHeaderVersion),
                                {Payload::owning(std::string("hi"))}));
  EXPECT_EQ(receive_wire_message(link.receiver, validator, drops).error, DropReason::kBadVersion);
  // The version is judged before the frames (§3 step 4 before step 5).
  WireHeader header = header_at(5, kFirstInlineHeaderVersion);
  header.sizes = {2};
  link.sender.send(zmq::buffer(encode_header(header) + "hi"), zmq::send_flags::sndmore);
  link.sender.send(zmq::buffer(std::string("x")), zmq::send_flags::none);
  EXPECT_EQ(receive_wire_message(link.receiver, validator, drops).error, DropReason::kBadVersion);
  EXPECT_EQ(drops.count("a", DropReason::kBadVersion), 2U);
}

}  // namespace
}  // namespace tagflow::transport
