// FederateDataPlane on its own: two planes in one process over TCP loopback, and a stand-in
// coordinator (a ROUTER that answers JOIN with START) that shows which control frames the plane
// sends — so LTC batching, in-transit reports and the NET rules are checked frame by frame.
#include "federate/federate_data_plane.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <future>
#include <iostream>
#include <limits>
#include <optional>
#include <thread>
#include <tuple>

#include <gtest/gtest.h>
#include <unistd.h>

#include "tests/support/failed_handshake.hpp"
#include "tests/support/raw_zmtp_peer.hpp"
#include "transport/connection_guard.hpp"
#include "transport/curve_keys.hpp"
#include "transport/wire_socket.hpp"

namespace tagflow::coordinator {
namespace {

using namespace std::chrono_literals;

constexpr const char* kLink = R"(
federation:
  coordinator: tcp://127.0.0.1:*
  heartbeat_timeout: 60s
  federates:
    a: {downstreams: [b, c]}
    b: {upstreams: [a]}
    c: {upstreams: [{id: a, after: 1ms}]}
)";

/// START for `planes` (their data endpoints) at tag (0, 0), with their protocol versions.
ControlMessage start_of(
    const std::vector<std::tuple<std::string, FederateDataPlane*, std::uint32_t>>& planes) {
  ControlMessage start;
  start.type = ControlType::kStart;
  start.tag = {0, 0};
  for (const auto& [id, plane, version] : planes) {
    start.endpoints.emplace_back(id, plane->endpoint());
    start.versions.emplace_back(id, version);
  }
  return start;
}

/// Receives on `plane` until `count` messages were delivered (or 5 s passed).
std::vector<transport::ReceivedMessage> receive(FederateDataPlane& plane, std::size_t count) {
  std::vector<transport::ReceivedMessage> delivered;
  const auto give_up = std::chrono::steady_clock::now() + 5s;
  while (delivered.size() < count && std::chrono::steady_clock::now() < give_up) {
    (void)plane.receive(
        [&](transport::ReceivedMessage& message) { delivered.push_back(std::move(message)); });
    std::this_thread::sleep_for(1ms);
  }
  return delivered;
}

/// A coordinator stand-in: answers JOIN with START and hands over every other control frame.
class FakeCoordinator {
 public:
  explicit FakeCoordinator(zmq::context_t& context) : router_(context, zmq::socket_type::router) {
    router_.set(zmq::sockopt::linger, 0);
    router_.bind("tcp://127.0.0.1:*");
    endpoint_ = router_.get(zmq::sockopt::last_endpoint);
  }
  const std::string& endpoint() const { return endpoint_; }

  /// Joins `client`, answering its JOIN with `start`.
  void join(FederateClient& client, const ControlMessage& start) {
    auto joined = std::async(std::launch::async, [&] { return client.join(10s); });
    const std::optional<ControlMessage> join = next(10s);
    ASSERT_TRUE(join);
    ASSERT_EQ(join->type, ControlType::kJoin);
    router_.send(zmq::buffer(client.options().id), zmq::send_flags::sndmore);
    router_.send(zmq::buffer(encode_control(start)), zmq::send_flags::none);
    (void)joined.get();
  }
  /// The next control frame from a federate's control connection (heartbeats skipped), or nullopt
  /// when none came within `limit`.
  std::optional<ControlMessage> next(std::chrono::milliseconds limit = 2s) {
    zmq::pollitem_t item{router_.handle(), 0, ZMQ_POLLIN, 0};
    const auto give_up = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < give_up) {
      zmq::poll(&item, 1, 10ms);
      zmq::message_t identity;
      zmq::message_t body;
      if (!router_.recv(identity, zmq::recv_flags::dontwait)) continue;
      (void)router_.recv(body, zmq::recv_flags::none);
      if (identity.to_string().find("#hb") != std::string::npos) continue;
      return decode_control(body.data(), body.size());
    }
    return std::nullopt;
  }

 private:
  zmq::socket_t router_;
  std::string endpoint_;
};

class FederateDataPlaneTest : public ::testing::Test {
 protected:
  FederateDataPlaneTest()
      : spec_(parse_federation_spec(kLink)),
        a_(context_, spec_, "a", "tcp://127.0.0.1:*"),
        b_(context_, spec_, "b", "tcp://127.0.0.1:*"),
        c_(context_, spec_, "c", "tcp://127.0.0.1:*") {
    b_.allow_input("a", 1);
    c_.allow_input("a", 1);
    // c speaks the previous protocol version: it reads data header 2 only (PROTOCOL.md §2.5).
    const ControlMessage start = start_of({{"a", &a_, 4}, {"b", &b_, 4}, {"c", &c_, 3}});
    a_.connect(start, 4);
    b_.connect(start, 4);
    c_.connect(start, 3);
  }

  zmq::context_t context_;
  FederationSpec spec_;
  FederateDataPlane a_;
  FederateDataPlane b_;
  FederateDataPlane c_;
};

TEST_F(FederateDataPlaneTest, AValueArrivesAsTheSentBytesWithoutACopyOnEitherSide) {
  const transport::Payload value = transport::Payload::owning(std::string(100000, 'v'));
  ASSERT_TRUE(a_.send_value("b", 1, {5, 0}, value));
  ASSERT_TRUE(a_.send_value("c", 1, {5, 0}, value));  // fan-out: the same buffer again
  std::vector<transport::ReceivedMessage> got = receive(b_, 1);
  ASSERT_EQ(got.size(), 1U);
  EXPECT_EQ(got[0].header.from, "a");
  EXPECT_EQ(got[0].header.port, 1U);
  EXPECT_EQ(got[0].header.tag, (WireTag{5, 0}));
  const transport::Payload received = transport::adopt_frames(std::move(got[0].payloads));
  EXPECT_EQ(received.view(), value.view());
  ASSERT_EQ(receive(c_, 1).size(), 1U);
}

TEST_F(FederateDataPlaneTest, AValueOverTheMessageCapIsRefusedWhereItIsSentNamingItsPort) {
  const transport::Payload huge =
      transport::Payload::owning(std::string((std::size_t{64} << 20) + 1, 'h'));
  try {
    (void)a_.send_value("b", 1, {5, 0}, huge);
    FAIL() << "a value over the cap was sent";
  } catch (const MessageCapError& e) {  // the runtimes report it to the coordinator
    EXPECT_NE(std::string(e.what()).find("input 1 of 'b'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("67108865 bytes"), std::string::npos) << e.what();
    EXPECT_EQ(e.port(), 1U);
    // A cluster's node names the port (nodes::wire_port_name) in what it reports.
    EXPECT_EQ(e.with_port_name("a", "weights[0]"),
              "federate 'a': a value of 67108865 bytes for weights[0] of 'b' is over the message "
              "cap of 16777216 bytes (transport/WIRE.md, section 3); nothing was sent");
  }
  const transport::Payload small = transport::Payload::owning(std::string(10, 's'));
  ASSERT_TRUE(a_.send_value("b", 1, {5, 0}, small));  // the plane still sends
  std::vector<transport::ReceivedMessage> got = receive(b_, 1);
  ASSERT_EQ(got.size(), 1U);  // only the small value arrived
  EXPECT_EQ(transport::adopt_frames(std::move(got[0].payloads)).view(), small.view());
}

/// kLink's three planes, not yet connected (each test gives its own START).
struct Planes {
  zmq::context_t context;
  FederationSpec spec = parse_federation_spec(kLink);
  FederateDataPlane a{context, spec, "a", "tcp://127.0.0.1:*"};
  FederateDataPlane b{context, spec, "b", "tcp://127.0.0.1:*"};
  FederateDataPlane c{context, spec, "c", "tcp://127.0.0.1:*"};
};

// Version 6 (PROTOCOL.md §2.5, WIRE.md §2): a value of at most 16 KiB goes to a downstream that
// reads header 4 in the header's own frame, a larger one as a frame of its own; a downstream of
// version 5 gets header 3 either way.
TEST(FederateDataPlaneVersions, SmallValuesTravelInTheHeadersFrameWhereTheDownstreamReadsIt) {
  Planes planes;
  FederateDataPlane& a = planes.a;
  FederateDataPlane& b = planes.b;
  FederateDataPlane& c = planes.c;
  b.allow_input("a", 1);
  c.allow_input("a", 1);
  const ControlMessage start = start_of({{"a", &a, kProtocolVersion},
                                         {"b", &b, kProtocolVersion},
                                         {"c", &c, kFirstInlineVersion - 1}});
  a.connect(start, kProtocolVersion);
  b.connect(start, kProtocolVersion);
  c.connect(start, kFirstInlineVersion - 1);
  const std::size_t cap = transport::HeaderLimits{}.max_inline_bytes;
  const transport::Payload small = transport::Payload::owning(std::string(cap, 's'));
  const transport::Payload big = transport::Payload::owning(std::string(cap + 1, 'B'));
  ASSERT_TRUE(a.send_value("b", 1, {5, 0}, small, WireTag{5, 0}));
  ASSERT_TRUE(a.send_value("b", 1, {6, 0}, big));
  ASSERT_TRUE(a.send_value("c", 1, {5, 0}, small));
  std::vector<transport::ReceivedMessage> got = receive(b, 2);
  ASSERT_EQ(got.size(), 2U);
  EXPECT_EQ(got[0].header.version, transport::kFirstInlineHeaderVersion);
  EXPECT_TRUE(got[0].payloads.empty());
  EXPECT_EQ(got[0].header.done, (WireTag{5, 0}));  // the notice rides along, as in header 3
  EXPECT_EQ(transport::take_payload(got[0]).view(), small.view());
  EXPECT_EQ(got[1].header.version, transport::kFirstDoneHeaderVersion);
  EXPECT_EQ(got[1].payloads.size(), 1U);
  EXPECT_EQ(transport::take_payload(got[1]).view(), big.view());
  got = receive(c, 1);
  ASSERT_EQ(got.size(), 1U);
  EXPECT_EQ(got[0].header.version, transport::kFirstDoneHeaderVersion);
  EXPECT_EQ(transport::take_payload(got[0]).view(), small.view());
  EXPECT_EQ(b.drops().total() + c.drops().total(), 0U);
}

TEST_F(FederateDataPlaneTest, ArrivalTagsAddTheLinkDelay) {
  EXPECT_EQ(a_.arrival_tag("b", {5, 2}), (WireTag{5, 2}));
  EXPECT_EQ(a_.arrival_tag("c", {5, 2}), (WireTag{1000005, 0}));
  EXPECT_TRUE(a_.sends_to("b"));
  EXPECT_FALSE(a_.sends_to("a"));
  EXPECT_FALSE(a_.send_value("nobody", 1, {5, 0}, transport::Payload::copy_of("x", 1)));
}

TEST_F(FederateDataPlaneTest, ReceivedMessagesCountTowardsGrantsUntilTheirTagCompletes) {
  ASSERT_TRUE(a_.send_value("b", 1, {3, 0}, transport::Payload::copy_of("x", 1)));
  ASSERT_TRUE(a_.send_absent("b", 1, {4, 0}));
  const std::vector<transport::ReceivedMessage> got = receive(b_, 2);
  ASSERT_EQ(got.size(), 2U);
  EXPECT_EQ(got[1].header.kind, transport::MessageKind::kPortAbsent);
  EXPECT_TRUE(b_.asked_by_input({3, 0}));
  EXPECT_FALSE(b_.asked_by_input({2, 0}));
  EXPECT_TRUE(b_.counts_met({{"a", 1}}, {3, 0}));
  EXPECT_FALSE(b_.counts_met({{"a", 2}}, {3, 0}));  // the ABSENT at 4 is not covered
  EXPECT_TRUE(b_.counts_met({{"a", 2}}, {4, 0}));
  b_.complete({3, 0});
  EXPECT_FALSE(b_.asked_by_input({3, 0}));
  EXPECT_TRUE(b_.counts_met({{"a", 1}}, {3, 0}));  // completed messages still count
  EXPECT_TRUE(b_.counts_met({{"a", 2}}, {4, 0}));
}

/// Receives on `plane` until its upstream bound is no longer kNever (or 5 s passed).
WireTag bound_after_notices(FederateDataPlane& plane) {
  const auto give_up = std::chrono::steady_clock::now() + 5s;
  while (plane.upstream_bound() == transport::kNever &&
         std::chrono::steady_clock::now() < give_up) {
    (void)plane.receive([](transport::ReceivedMessage&) {});
    std::this_thread::sleep_for(1ms);
  }
  return plane.upstream_bound();
}

// PROTOCOL.md §3.8: after a tag completes, each downstream sent to hears of it on the data path
// and may run every tag its upstreams can no longer send to, through the link's delay.
TEST_F(FederateDataPlaneTest, CompletedNoticesBoundWhatEachDownstreamMayStillReceive) {
  EXPECT_EQ(b_.upstream_bound(), transport::kNever);  // nothing heard yet
  ASSERT_TRUE(a_.send_value("b", 1, {3, 0}, transport::Payload::copy_of("x", 1)));
  ASSERT_TRUE(
      a_.send_value("c", 1, a_.arrival_tag("c", {3, 0}), transport::Payload::copy_of("y", 1)));
  a_.send_completed_notices();  // none due before the tag completes
  a_.complete({3, 0});
  a_.complete({3, 1});  // nothing sent at (3, 1): no notice is due for it
  a_.send_completed_notices();
  EXPECT_EQ(bound_after_notices(b_), (WireTag{3, 0}));  // no delay: through the completed tag
  // 1 ms later: a may still send at (3, 1) for (3 + 1 ms, 0), so everything before that.
  EXPECT_EQ(bound_after_notices(c_), (WireTag{1000002, std::numeric_limits<std::uint32_t>::max()}));
  // The notice is no data message: no grant counts it, and b still has its value to count.
  EXPECT_TRUE(b_.counts_met({{"a", 1}}, {3, 0}));
  EXPECT_FALSE(b_.counts_met({{"a", 2}}, {3, 0}));
  EXPECT_EQ(b_.drops().total(), 0U);
}

// WIRE.md §2: a value sent with the sender's completion carries it as `done` to a downstream that
// reads header 3 (one message instead of two); a version-3 downstream gets header 2 and the
// notice after the value. Both end up with the same bound.
TEST_F(FederateDataPlaneTest, AValueCarriesItsNoticeWhereTheDownstreamReadsItAndIsFollowedByOne) {
  ASSERT_TRUE(a_.send_value("b", 1, {3, 0}, transport::Payload::copy_of("x", 1), WireTag{3, 0}));
  ASSERT_TRUE(a_.send_value("c", 1, a_.arrival_tag("c", {3, 0}),
                            transport::Payload::copy_of("y", 1), WireTag{3, 0}));
  std::vector<transport::ReceivedMessage> at_b = receive(b_, 1);
  ASSERT_EQ(at_b.size(), 1U);
  EXPECT_EQ(at_b[0].header.version, 3U);
  ASSERT_TRUE(at_b[0].header.done.has_value());
  EXPECT_EQ(*at_b[0].header.done, (WireTag{3, 0}));
  EXPECT_EQ(b_.upstream_bound(), (WireTag{3, 0}));  // known with the value, no notice needed
  std::vector<transport::ReceivedMessage> at_c = receive(c_, 1);
  ASSERT_EQ(at_c.size(), 1U);
  EXPECT_EQ(at_c[0].header.version, 2U);
  EXPECT_FALSE(at_c[0].header.done.has_value());
  EXPECT_EQ(bound_after_notices(c_), (WireTag{1000002, std::numeric_limits<std::uint32_t>::max()}));
  EXPECT_EQ(b_.drops().total(), 0U);
  EXPECT_EQ(c_.drops().total(), 0U);
}

/// The DataLossError receive() throws on `plane` within 5 s ("" when none).
std::string data_loss(FederateDataPlane& plane) {
  const auto give_up = std::chrono::steady_clock::now() + 5s;
  while (std::chrono::steady_clock::now() < give_up) {
    try {
      (void)plane.receive([](transport::ReceivedMessage&) {});
    } catch (const DataLossError& e) {
      return e.what();
    }
    std::this_thread::sleep_for(1ms);
  }
  return "";
}

// The upstream reported these in transit, so the grants count them: dropping one and waiting
// would hang the federate (and the run) for ever. It stops, naming sender, port and reason.
TEST_F(FederateDataPlaneTest, AnUpstreamsMessageOnAnUnknownPortIsCountedAndStopsTheFederate) {
  ASSERT_TRUE(a_.send_value("b", 7, {11, 0}, transport::Payload::copy_of("x", 1)));
  const std::string error = data_loss(b_);
  EXPECT_NE(error.find("federate 'b' dropped a data message from 'a' on port 7 at tag (11, 0): "
                       "unknown_port"),
            std::string::npos)
      << error;
  EXPECT_EQ(b_.drops().count("a", transport::DropReason::kUnknownPort), 1U);
  EXPECT_FALSE(b_.counts_met({{"a", 1}}, {11, 0}));  // dropped messages count for nothing
}

// The same for a header the downstream does not read: an upstream told (wrongly) that c reads
// header 4 sends it one; c refuses it for its version, and the grants still count it.
TEST(FederateDataPlaneVersions, AnUpstreamsMessageInAHeaderTheFederateDoesNotReadStopsIt) {
  Planes planes;
  FederateDataPlane& a = planes.a;
  FederateDataPlane& b = planes.b;
  FederateDataPlane& c = planes.c;
  c.allow_input("a", 1);
  a.connect(
      start_of(
          {{"a", &a, kProtocolVersion}, {"b", &b, kProtocolVersion}, {"c", &c, kProtocolVersion}}),
      kProtocolVersion);
  c.connect(start_of({{"a", &a, kProtocolVersion},
                      {"b", &b, kProtocolVersion},
                      {"c", &c, kFirstInlineVersion - 1}}),
            kFirstInlineVersion - 1);
  ASSERT_TRUE(a.send_value("c", 1, {4, 0}, transport::Payload::copy_of("x", 1)));
  const std::string error = data_loss(c);
  EXPECT_NE(error.find("from 'a' on port 1 at tag (4, 0): bad_version"), std::string::npos)
      << error;
  EXPECT_EQ(c.drops().count("a", transport::DropReason::kBadVersion), 1U);
}

/// What plane `s`, whose one upstream is `a`, does with one message from `a`'s routing id whose
/// header frame is `header` (then a one-byte payload frame): the DataLossError it throws ("" when
/// none), and its drops of `reason` from a.
std::pair<std::string, std::uint64_t> refused_from_upstream(const transport::WireHeader& header,
                                                            transport::DropReason reason) {
  const FederationSpec spec = parse_federation_spec(R"(
federation:
  coordinator: tcp://127.0.0.1:*
  federates:
    a: {downstreams: [s]}
    s: {upstreams: [a]}
)");
  zmq::context_t context;
  FederateDataPlane s(context, spec, "s", "tcp://127.0.0.1:*");
  s.allow_input("a", 1);
  s.connect(start_of({{"s", &s, kProtocolVersion}}), kProtocolVersion);
  zmq::socket_t a(context, zmq::socket_type::dealer);
  a.set(zmq::sockopt::routing_id, std::string("a"));
  a.set(zmq::sockopt::linger, 0);
  a.connect(s.endpoint());
  const std::string frame = transport::encode_header(header);
  (void)a.send(zmq::buffer(frame), zmq::send_flags::sndmore);
  (void)a.send(zmq::str_buffer("x"), zmq::send_flags::none);
  std::string error = data_loss(s);
  return {std::move(error), s.drops().count("a", reason)};
}

// A header in a version no tagflow reads (a later one, say) or listing more payload frames than
// any may have still names its sender: from an upstream on its own connection, the grants may
// count it, so the federate stops naming it instead of waiting for ever (WIRE.md §3).
TEST(FederateDataPlaneVersions, AnUpstreamsHeaderOfAnUnknownVersionOrTooManyFramesStopsIt) {
  transport::WireHeader later;
  later.version = 9;
  later.tag = {6, 0};
  later.from = "a";
  later.port = 1;
  later.sizes = {1};
  const auto [version_error, version_drops] =
      refused_from_upstream(later, transport::DropReason::kBadVersion);
  EXPECT_NE(version_error.find("from 'a' on port 1 at tag (6, 0): bad_version"), std::string::npos)
      << version_error;
  EXPECT_EQ(version_drops, 1U);

  transport::WireHeader crowded = later;
  crowded.version = transport::kFirstDoneHeaderVersion;
  crowded.tag = {7, 0};
  crowded.sizes.assign(17, 1);
  const auto [frames_error, frames_drops] =
      refused_from_upstream(crowded, transport::DropReason::kTooManyFrames);
  EXPECT_NE(frames_error.find("from 'a' on port 1 at tag (7, 0): too_many_frames"),
            std::string::npos)
      << frames_error;
  EXPECT_EQ(frames_drops, 1U);
}

/// That `plane` stops on a message from 'a' on port 1 at `tag` ("(10, 0)") as `tag_in_past`,
/// naming it, and counts that drop once.
void expect_stopped_in_the_past(FederateDataPlane& plane, const std::string& tag) {
  const std::string error = data_loss(plane);
  EXPECT_NE(error.find("from 'a' on port 1 at tag " + tag + ": tag_in_past"), std::string::npos)
      << error;
  EXPECT_EQ(plane.drops().count("a", transport::DropReason::kTagInPast), 1U);
}

TEST_F(FederateDataPlaneTest, AnUpstreamsMessageFromThePastIsCountedAndStopsTheFederate) {
  b_.complete({10, 0});
  ASSERT_TRUE(a_.send_value("b", 1, {10, 0}, transport::Payload::copy_of("x", 1)));
  expect_stopped_in_the_past(b_, "(10, 0)");
}

// One message per port and tag, in tag order on each port (WIRE.md §3): a second value at a tag
// not yet completed, or a tag before the port's previous one, cannot be matched with the grants'
// counts, so the federate stops naming it instead of waiting for ever.
TEST_F(FederateDataPlaneTest, ASecondValueOnAPortAtOneTagStopsTheFederate) {
  ASSERT_TRUE(a_.send_value("b", 1, {10, 0}, transport::Payload::copy_of("x", 1)));
  ASSERT_TRUE(a_.send_value("b", 1, {10, 0}, transport::Payload::copy_of("y", 1)));
  expect_stopped_in_the_past(b_, "(10, 0)");
}

TEST_F(FederateDataPlaneTest, ATagBeforeThePortsPreviousOneStopsTheFederate) {
  ASSERT_TRUE(a_.send_value("b", 1, {12, 0}, transport::Payload::copy_of("x", 1)));
  ASSERT_TRUE(a_.send_absent("b", 1, {11, 5}));
  expect_stopped_in_the_past(b_, "(11, 5)");
}

// Ports of one upstream may interleave their tags (connections of one link with different
// delays): each port in order is fine, and the counts see the messages in tag order.
TEST_F(FederateDataPlaneTest, PortsOfOneUpstreamMayInterleaveTheirTags) {
  b_.allow_input("a", 2);
  ASSERT_TRUE(a_.send_value("b", 1, {20, 0}, transport::Payload::copy_of("x", 1)));
  ASSERT_TRUE(a_.send_value("b", 2, {15, 0}, transport::Payload::copy_of("y", 1)));
  ASSERT_TRUE(a_.send_value("b", 1, {21, 0}, transport::Payload::copy_of("z", 1)));
  ASSERT_EQ(receive(b_, 3).size(), 3U);
  EXPECT_EQ(b_.drops().total(), 0U);
  EXPECT_TRUE(b_.counts_met({{"a", 1}}, {15, 0}));
  EXPECT_FALSE(b_.counts_met({{"a", 2}}, {15, 0}));
  EXPECT_TRUE(b_.counts_met({{"a", 2}}, {20, 0}));
  EXPECT_FALSE(b_.counts_met({{"a", 3}}, {20, 0}));
  EXPECT_TRUE(b_.counts_met({{"a", 3}}, {21, 0}));
  b_.complete({15, 0});
  EXPECT_FALSE(b_.asked_by_input({15, 0}));
  EXPECT_TRUE(b_.asked_by_input({20, 0}));
  EXPECT_TRUE(b_.counts_met({{"a", 2}}, {20, 0}));
}

/// Every non-zero drop count of `peers` in `drops`, as "peer reason count" lines, for a failure's
/// message.
std::string drops_of(const transport::PeerDropCounters& drops,
                     const std::vector<std::string>& peers) {
  std::string text = "drops (" + std::to_string(drops.total()) + " in all):";
  for (const std::string& peer : peers) {
    for (int reason = 1; reason < transport::kDropReasonCount; ++reason) {
      const auto kind = static_cast<transport::DropReason>(reason);
      if (const std::uint64_t count = drops.count(peer, kind); count > 0) {
        text +=
            "\n  " + peer + " " + transport::drop_reason_name(kind) + " " + std::to_string(count);
      }
    }
  }
  return text;
}

// Without CURVE anyone can connect to a data socket. A raw ZMTP peer that sends one multipart
// message without end is cut by the plane's connection guard once it holds more than the cap,
// counted, and the real upstream's data still arrives.
//
// The guard's bound is relative to its checks, so the attacker's speed is bounded
// (EndlessMessage) and the loop measures its longest gap between checks: a loaded machine that
// delays the checks widens the bound instead of failing the test.
TEST_F(FederateDataPlaneTest, AMultipartMessageWithoutEndIsCutAndTheUpstreamGoesOn) {
  ASSERT_NE(b_.guard(), nullptr);
  const std::string endpoint = b_.endpoint();
  const auto port = static_cast<std::uint16_t>(std::stoi(endpoint.substr(endpoint.rfind(':') + 1)));
  const testing::EndlessMessage flood;
  std::atomic<bool> attacker_done{false};
  std::uint64_t attacker_sent = 0;
  int frames_sent = 0;
  std::thread attacker([&] {
    testing::RawZmtpPeer peer(port, "intruder");  // not a live upstream's id (WIRE.md §3.1)
    frames_sent = flood.send(peer);
    attacker_sent = peer.bytes_sent();
    attacker_done.store(true);
  });
  const auto start = std::chrono::steady_clock::now();
  auto last_check = start;
  std::chrono::steady_clock::duration longest_gap{};
  while (!attacker_done.load() && std::chrono::steady_clock::now() < start + 30s) {
    (void)b_.receive([](transport::ReceivedMessage&) {});
    const auto now = std::chrono::steady_clock::now();
    longest_gap = std::max(longest_gap, now - last_check);
    last_check = now;
    std::this_thread::sleep_for(2ms);
  }
  attacker.join();
  const transport::ConnectionLimits& limits = b_.guard()->limits();
  const std::uint64_t bound = flood.bound(limits.max_held_bytes, longest_gap + limits.check_every);
  std::cout << "the attacker sent " << attacker_sent << " bytes before the cut (cap "
            << limits.max_held_bytes << ", longest gap between checks "
            << std::chrono::duration<double, std::milli>(longest_gap).count() << " ms, bound "
            << bound << ")\n";
  const std::string drops = drops_of(b_.drops(), {"(unidentified)", "intruder", "a"});
  // Cut once, by the connection's cap; or, when the checks came far apart (a loaded machine), by
  // the guard's own thread once the process held more than its budget before two cap checks.
  const std::uint64_t over_cap =
      b_.drops().count("(unidentified)", transport::DropReason::kIncompleteOverCap);
  const std::uint64_t over_budget =
      b_.drops().count("(unidentified)", transport::DropReason::kOverProcessBudget);
  EXPECT_EQ(over_cap + over_budget, 1U) << drops;
  if (over_budget != 0) {
    EXPECT_GT(attacker_sent, limits.process_budget) << drops;
  }
  EXPECT_LT(frames_sent, flood.max_frames) << "the attacker was never cut";
  EXPECT_LT(attacker_sent, bound) << drops;
  ASSERT_TRUE(a_.send_value("b", 1, {5, 0}, transport::Payload::copy_of("x", 1)));
  EXPECT_EQ(receive(b_, 1).size(), 1U) << drops_of(b_.drops(), {"(unidentified)", "intruder", "a"});
}

/// A one-byte value on `socket` whose header says it comes from `from`.
void send_one_byte(zmq::socket_t& socket, const std::string& from, std::uint32_t port,
                   const WireTag& tag) {
  transport::WireHeader header;
  header.version = transport::kFirstDoneHeaderVersion;  // what b reads (protocol version 4)
  header.tag = tag;
  header.from = from;
  header.port = port;
  transport::send_wire_message(socket, header, {transport::Payload::copy_of("x", 1)});
}

TEST_F(FederateDataPlaneTest, MessagesFromAStrangerAreDroppedAndCountedWithoutStopping) {
  zmq::socket_t stranger(context_, zmq::socket_type::dealer);
  stranger.set(zmq::sockopt::routing_id, std::string("mallory"));
  stranger.set(zmq::sockopt::linger, 0);
  stranger.connect(b_.endpoint());
  send_one_byte(stranger, "mallory", 7, {11, 0});
  // Then a valid message from the real upstream: it arrives, and the stranger's was dropped.
  ASSERT_TRUE(a_.send_value("b", 1, {11, 0}, transport::Payload::copy_of("x", 1)));
  ASSERT_EQ(receive(b_, 1).size(), 1U);
  const auto give_up = std::chrono::steady_clock::now() + 5s;
  while (b_.drops().total() == 0 && std::chrono::steady_clock::now() < give_up) {
    (void)b_.receive([](transport::ReceivedMessage&) {});
    std::this_thread::sleep_for(1ms);
  }
  EXPECT_EQ(b_.drops().count("mallory", transport::DropReason::kUnknownPeer), 1U);
}

// WIRE.md §3 (end): without keys too, bytes that name no sender on the connection that holds an
// upstream's routing id (the socket hands that id's messages over from the first connection to
// claim it only) are that upstream's, which its grants may count: the federate stops, naming it,
// where it would wait for ever.
TEST(FederateDataPlaneRoutingIds, AnUpstreamsUnreadableMessageUnderItsRoutingIdStopsTheFederate) {
  // b alone: its upstream a is this test's socket, the one connection under a's routing id.
  zmq::context_t context;
  const FederationSpec spec = parse_federation_spec(kLink);
  FederateDataPlane b(context, spec, "b", "tcp://127.0.0.1:*");
  b.allow_input("a", 1);
  b.connect(start_of({{"b", &b, kProtocolVersion}}), kProtocolVersion);
  zmq::socket_t upstream(context, zmq::socket_type::dealer);
  upstream.set(zmq::sockopt::routing_id, std::string("a"));
  upstream.set(zmq::sockopt::linger, 0);
  upstream.connect(b.endpoint());
  const std::string garbage = "\xc1 not a header";
  upstream.send(zmq::buffer(garbage), zmq::send_flags::none);
  const std::string error = data_loss(b);
  EXPECT_NE(error.find("federate 'b' could not read a data message from its upstream 'a' "
                       "(malformed_header; it came on the connection of that upstream's routing "
                       "id): its grants may count it"),
            std::string::npos)
      << error;
}

TEST_F(FederateDataPlaneTest, ReceiveStopsAfterABatchAndReportsThatMoreMayWait) {
  constexpr int kSent = 3 * FederateDataPlane::kMaxReceivedPerCall;
  // The bound is only reached when a whole batch waits at once; on a loaded machine the messages
  // may trickle in, so a round whose calls never hit it is sent again with a longer wait.
  bool stopped_at_bound = false;
  int tag = 0;
  for (int round = 1; round <= 5 && !stopped_at_bound; ++round) {
    for (int i = 0; i < kSent; ++i) {
      ASSERT_TRUE(a_.send_value("b", 1, {++tag, 0}, transport::Payload::copy_of("x", 1)));
    }
    std::this_thread::sleep_for(round * 300ms);  // let them reach b's queue
    int total = 0;
    const auto give_up = std::chrono::steady_clock::now() + 5s;
    while (total < kSent && std::chrono::steady_clock::now() < give_up) {
      int delivered = 0;
      const bool more = b_.receive([&](transport::ReceivedMessage&) { ++delivered; });
      EXPECT_LE(delivered, FederateDataPlane::kMaxReceivedPerCall);
      if (more) {
        EXPECT_EQ(delivered, FederateDataPlane::kMaxReceivedPerCall);
        stopped_at_bound = true;
      }
      total += delivered;
    }
    ASSERT_EQ(total, kSent);
  }
  EXPECT_TRUE(stopped_at_bound);
}

class FederateDataPlaneControlTest : public FederateDataPlaneTest {
 protected:
  FederateDataPlaneControlTest() : coordinator_(context_) {
    spec_.address = coordinator_.endpoint();
    const ControlMessage start = start_of({{"a", &a_, 4}, {"b", &b_, 4}, {"c", &c_, 3}});
    client_a_ = std::make_unique<FederateClient>(context_, FederateOptions::from_spec(spec_, "a"));
    client_b_ = std::make_unique<FederateClient>(context_, FederateOptions::from_spec(spec_, "b"));
    coordinator_.join(*client_a_, start);
    coordinator_.join(*client_b_, start);
  }

  FakeCoordinator coordinator_;
  std::unique_ptr<FederateClient> client_a_;
  std::unique_ptr<FederateClient> client_b_;
};

TEST_F(FederateDataPlaneControlTest, AnnounceSendsTheTagsLtcWithItsInTransitReportsAndTheNextTag) {
  a_.report_in_transit(*client_a_, "b", {1, 0});
  a_.complete({1, 0});
  a_.report_in_transit(*client_a_, "c", {1000002, 0});
  a_.complete({2, 0});
  EXPECT_EQ(a_.unreported_tags(), 2);
  a_.announce(*client_a_, {7, 0});
  const std::optional<ControlMessage> ltc = coordinator_.next();
  ASSERT_TRUE(ltc);
  EXPECT_EQ(ltc->type, ControlType::kCompleted);
  EXPECT_EQ(ltc->tag, (WireTag{2, 0}));
  const std::vector<std::pair<std::string, WireTag>> reported = {{"b", {1, 0}},
                                                                 {"c", {1000002, 0}}};
  EXPECT_EQ(ltc->in_transit, reported);
  EXPECT_EQ(ltc->next, std::optional<WireTag>(WireTag{7, 0}));
  EXPECT_EQ(a_.announced(), (WireTag{7, 0}));
  EXPECT_EQ(a_.unreported_tags(), 0);
  // The coordinator has 7 already: nothing more; a new next tag is a NET.
  a_.announce(*client_a_, {7, 0});
  a_.announce(*client_a_, {9, 0});
  const std::optional<ControlMessage> net = coordinator_.next();
  ASSERT_TRUE(net);
  EXPECT_EQ(net->type, ControlType::kNextEvent);
  EXPECT_EQ(net->tag, (WireTag{9, 0}));
  EXPECT_FALSE(coordinator_.next(100ms));
}

TEST_F(FederateDataPlaneControlTest, AnLtcWithoutANextTagLeavesTheCoordinatorWithoutOne) {
  a_.complete({1, 0});
  a_.flush_completed(*client_a_, std::nullopt);
  const std::optional<ControlMessage> ltc = coordinator_.next();
  ASSERT_TRUE(ltc);
  EXPECT_EQ(ltc->type, ControlType::kCompleted);
  EXPECT_FALSE(ltc->next);
  EXPECT_EQ(a_.announced(), transport::kNever);
  a_.flush_completed(*client_a_, WireTag{5, 0});  // nothing to report: nothing sent
  EXPECT_FALSE(coordinator_.next(100ms));
}

TEST_F(FederateDataPlaneControlTest, AFullInTransitListGoesFirstWithTheLatestCompletedTag) {
  a_.complete({1, 0});
  a_.flush_completed(*client_a_, WireTag{2, 0});
  ASSERT_TRUE(coordinator_.next());
  for (std::size_t i = 0; i <= kMaxInTransitPerLtc; ++i) {
    a_.report_in_transit(*client_a_, "b", {2, 0});
  }
  const std::optional<ControlMessage> early = coordinator_.next();
  ASSERT_TRUE(early);
  EXPECT_EQ(early->type, ControlType::kCompleted);
  EXPECT_EQ(early->tag, (WireTag{1, 0}));
  EXPECT_EQ(early->in_transit.size(), kMaxInTransitPerLtc);
  a_.complete({2, 0});
  a_.announce(*client_a_, {3, 0});
  const std::optional<ControlMessage> ltc = coordinator_.next();
  ASSERT_TRUE(ltc);
  EXPECT_EQ(ltc->tag, (WireTag{2, 0}));
  EXPECT_EQ(ltc->in_transit.size(), 1U);
}

TEST_F(FederateDataPlaneControlTest, NoNetForATagOnlyAReceivedMessageAsksForBelowTheAnnouncedOne) {
  b_.announce(*client_b_, {50, 0});
  ASSERT_EQ(coordinator_.next()->tag, (WireTag{50, 0}));
  ASSERT_TRUE(a_.send_value("b", 1, {20, 0}, transport::Payload::copy_of("x", 1)));
  ASSERT_EQ(receive(b_, 1).size(), 1U);
  // The sender's in-transit report brings b's bound down to 20: a NET would add nothing.
  b_.announce(*client_b_, {20, 0});
  EXPECT_FALSE(coordinator_.next(100ms));
  EXPECT_EQ(b_.announced(), (WireTag{50, 0}));
  // A tag no received message asks for is announced.
  b_.announce(*client_b_, {30, 0});
  const std::optional<ControlMessage> net = coordinator_.next();
  ASSERT_TRUE(net);
  EXPECT_EQ(net->tag, (WireTag{30, 0}));
}

// With CURVE, the data socket's ZAP handler admits every upstream's key; a key used under
// another upstream's routing id (before the real one connects) is not that upstream: dropped,
// never counted by a grant.
/// Federate s with upstreams a and c, CURVE keys for all three in a directory of their own, and a
/// client that connects to s with the key pair of `key` and the routing id `id`.
class KeyedPlane {
 public:
  KeyedPlane()
      : keys_(std::filesystem::temp_directory_path() /
              ("tagflow-plane-keys-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(keys_);
    for (const char* name : {"a", "c", "s"}) {
      transport::write_key_pair(keys_, name, transport::generate_curve_key_pair());
    }
    spec_ = parse_federation_spec(R"(
federation:
  coordinator: tcp://127.0.0.1:*
  federates:
    a: {downstreams: [s]}
    c: {downstreams: [s]}
    s: {upstreams: [a, c]}
)");
    spec_.keys_dir = keys_.string();
    s_.emplace(context_, spec_, "s", "tcp://127.0.0.1:*");
    s_->allow_input("a", 1);
    s_->allow_input("c", 1);
    s_->connect(start_of({{"s", &*s_, kProtocolVersion}}), kProtocolVersion);
  }
  ~KeyedPlane() { std::filesystem::remove_all(keys_); }
  FederateDataPlane& s() { return *s_; }
  zmq::socket_t client(const std::string& key, const std::string& id) {
    zmq::socket_t socket(context_, zmq::socket_type::dealer);
    socket.set(zmq::sockopt::routing_id, id);
    socket.set(zmq::sockopt::linger, 0);
    transport::make_curve_client(socket, transport::read_key_pair(keys_, key),
                                 transport::read_key_pair(keys_, "s", true).public_key);
    socket.connect(s_->endpoint());
    return socket;
  }

 private:
  std::filesystem::path keys_;
  FederationSpec spec_;
  zmq::context_t context_;
  std::optional<FederateDataPlane> s_;
};

TEST(FederateDataPlaneKeys, AnUpstreamsKeyUnderAnotherUpstreamsIdIsDropped) {
  KeyedPlane plane;
  zmq::socket_t squatter = plane.client("a", "c");  // a's key pair, calling itself c
  send_one_byte(squatter, "c", 1, {5, 0});
  std::size_t delivered = 0;
  const auto give_up = std::chrono::steady_clock::now() + 10s;
  while (plane.s().drops().total() == 0 && std::chrono::steady_clock::now() < give_up) {
    (void)plane.s().receive([&](transport::ReceivedMessage&) { ++delivered; });
    std::this_thread::sleep_for(1ms);
  }
  EXPECT_EQ(plane.s().drops().count("c", transport::DropReason::kUnknownPeer), 1U);
  EXPECT_EQ(delivered, 0U);
  EXPECT_FALSE(plane.s().asked_by_input({5, 0}));
}

// A client without CURVE, and one whose hello is boxed for another server key, fail the handshake
// before the key check: counted as refused all the same (WIRE.md §5).
TEST(FederateDataPlaneKeys, HandshakesThatFailBeforeTheKeyCheckAreCounted) {
  KeyedPlane plane;
  zmq::context_t context;
  for (const bool curve : {false, true}) {
    const std::uint64_t before = plane.s().refused_handshakes();
    const testing::FailedHandshake stranger(context, plane.s().endpoint(), curve);
    const auto give_up = std::chrono::steady_clock::now() + 10s;
    while (plane.s().refused_handshakes() == before && std::chrono::steady_clock::now() < give_up) {
      (void)plane.s().receive([](transport::ReceivedMessage&) {});
      std::this_thread::sleep_for(1ms);
    }
    EXPECT_EQ(plane.s().refused_handshakes(), before + 1)
        << (curve ? "another server key" : "no CURVE");
  }
  EXPECT_EQ(plane.s().drops().total(), 0U);
}

// WIRE.md §3 (end): with keys, bytes that name no sender on an upstream's own authenticated
// connection are that upstream's message, which its grants may count: the federate stops, naming
// it, instead of waiting for ever. (Without keys, on the connection of the upstream's routing id:
// FederateDataPlaneRoutingIds; under any other routing id they
// are dropped and counted, MessagesFromAStrangerAreDroppedAndCountedWithoutStopping.)
TEST(FederateDataPlaneKeys, AnUpstreamsUnreadableMessageOnItsOwnKeyStopsTheFederate) {
  KeyedPlane plane;
  zmq::socket_t a = plane.client("a", "a");
  const std::string garbage = "\xc1 not a header";
  a.send(zmq::buffer(garbage), zmq::send_flags::none);
  const std::string error = data_loss(plane.s());
  EXPECT_NE(error.find("federate 's' could not read a data message from its upstream 'a' "
                       "(malformed_header; the connection is authenticated by that upstream's "
                       "key): its grants may count it"),
            std::string::npos)
      << error;
}

}  // namespace
}  // namespace tagflow::coordinator

namespace tagflow::coordinator {
namespace {

// A coordinator behind on its reading still sends a federate grants and notices until it reads
// that federate's RESIGN. A federate that closed its control connection at once, with those
// unread, would reset it (TCP RST), and the coordinator would lose what it had not read yet: the
// RESIGN behind its backlog (PROTOCOL.md §5 rule 6). resign() reads until the coordinator's
// FINISHED, which it sends once it has read the RESIGN, so every frame arrives however slowly it
// reads. Over TCP (the stand-in has no Unix-socket twin).
TEST(FederateClientResign, ARESIGNBehindABacklogReachesACoordinatorThatKeepsSendingUntilItReadsIt) {
  constexpr int kBacklog = 3000;  // three times ZeroMQ's default receive high-water mark
  zmq::context_t coordinator_context;
  zmq::socket_t router(coordinator_context, zmq::socket_type::router);
  router.set(zmq::sockopt::linger, 1000);
  router.bind("tcp://127.0.0.1:*");
  FederationSpec spec = parse_federation_spec(kLink);
  spec.address = router.get(zmq::sockopt::last_endpoint);
  FederateOptions options = FederateOptions::from_spec(spec, "a");
  options.heartbeat_timeout = 20s;  // resign() waits at most that long for FINISHED
  const auto send_to_a = [&](const std::string& frame) {
    router.send(zmq::buffer(std::string("a")), zmq::send_flags::sndmore);
    router.send(zmq::buffer(frame), zmq::send_flags::dontwait);
  };
  const std::string notice = encode_control(make_tag_message(ControlType::kFloor, {0, 0}));
  ControlMessage finished;
  finished.type = ControlType::kFinished;
  std::atomic<int> read{0};
  std::atomic<bool> resigned{false};
  std::thread coordinator([&] {
    const auto give_up = std::chrono::steady_clock::now() + 30s;
    zmq::pollitem_t item{router.handle(), 0, ZMQ_POLLIN, 0};
    bool flooded = false;
    while (!resigned && std::chrono::steady_clock::now() < give_up) {
      zmq::poll(&item, 1, 10ms);
      zmq::message_t identity;
      zmq::message_t body;
      if (!router.recv(identity, zmq::recv_flags::dontwait)) continue;
      (void)router.recv(body, zmq::recv_flags::none);
      if (identity.to_string() != "a") continue;  // its heartbeat connection
      if (!flooded) {
        // Grants for its whole backlog at once: more than the federate's socket takes in.
        for (int i = 0; i < 1500; ++i) send_to_a(notice);
        flooded = true;
      }
      const std::optional<ControlMessage> message = decode_control(body.data(), body.size());
      ASSERT_TRUE(message);
      ++read;
      if (message->type == ControlType::kResign) {
        resigned = true;
        send_to_a(encode_control(finished));
      } else {
        send_to_a(notice);  // one more for each message read, as a behind coordinator grants
      }
      std::this_thread::sleep_for(100us);
    }
  });
  std::chrono::steady_clock::duration resigning{};
  {
    zmq::context_t federate_context;
    FederateClient client(federate_context, options);
    for (int i = 0; i < kBacklog; ++i) client.send_resumed({i, 0});
    const auto before = std::chrono::steady_clock::now();
    client.resign();
    resigning = std::chrono::steady_clock::now() - before;
  }  // closes the connection, and ends the context once what it queued is sent
  coordinator.join();
  EXPECT_TRUE(resigned) << "the RESIGN never arrived; " << read << " frames of " << kBacklog + 1
                        << " did";
  EXPECT_EQ(read, kBacklog + 1);
  EXPECT_LT(resigning, options.heartbeat_timeout) << "resign() waited out its limit: no FINISHED";
}

// A federate of a version before 7 gets no FINISHED: it reads until nothing has come for
// kResignQuiet and closes, long before its limit of heartbeat_timeout / 4; its RESIGN arrives.
TEST(FederateClientResign, AFederateOfVersion6ClosesAfterTheQuietWithoutFinished) {
  zmq::context_t coordinator_context;
  zmq::socket_t router(coordinator_context, zmq::socket_type::router);
  router.set(zmq::sockopt::linger, 0);
  router.set(zmq::sockopt::rcvtimeo, 10000);
  router.bind("tcp://127.0.0.1:*");
  FederationSpec spec = parse_federation_spec(kLink);
  spec.address = router.get(zmq::sockopt::last_endpoint);
  FederateOptions options = FederateOptions::from_spec(spec, "a");
  options.heartbeat_timeout = 400s;  // a limit of 100 s, which the quiet must end long before
  options.protocol_version = kFirstFinishedVersion - 1;
  zmq::context_t federate_context;
  FederateClient client(federate_context, options);
  const auto before = std::chrono::steady_clock::now();
  client.resign();
  EXPECT_LT(std::chrono::steady_clock::now() - before, 50s);
  std::optional<ControlMessage> message;
  zmq::message_t identity;
  zmq::message_t body;
  while (router.recv(identity) && router.recv(body)) {
    if (identity.to_string() != "a") continue;  // its heartbeat connection
    message = decode_control(body.data(), body.size());
    break;
  }
  ASSERT_TRUE(message) << "no RESIGN within 10 s";
  EXPECT_EQ(message->type, ControlType::kResign);
}

}  // namespace
}  // namespace tagflow::coordinator
