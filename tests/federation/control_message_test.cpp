#include "federation/control_message.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace tagflow::coordinator {
namespace {

ControlMessage round_trip(const ControlMessage& message) {
  const std::string frame = encode_control(message);
  const std::optional<ControlMessage> decoded = decode_control(frame.data(), frame.size());
  EXPECT_TRUE(decoded.has_value()) << control_type_name(message.type);
  return decoded.value_or(ControlMessage{});
}

// PROTOCOL.md §1: a reason longer than a receiver reads (256 bytes) is sent cut, so that it still
// arrives: a refusal that lists every federate of a large federation, a long FAILED.
TEST(ControlMessage, ALongReasonIsSentCutToWhatAReceiverReads) {
  for (const ControlType type : {ControlType::kRefused, ControlType::kFailed}) {
    ControlMessage message;
    message.type = type;
    message.federate = "a";
    message.text = std::string(200, 'r') + std::string(300, 's');
    const std::string frame = encode_control(message);
    const std::optional<ControlMessage> decoded = decode_control(frame.data(), frame.size());
    ASSERT_TRUE(decoded.has_value()) << static_cast<int>(type);
    EXPECT_EQ(decoded->text.size(), ControlLimits{}.max_string_chars);
    EXPECT_EQ(decoded->text.substr(0, 200), std::string(200, 'r'));
    EXPECT_EQ(decoded->text.substr(decoded->text.size() - 8), "...(cut)");
    message.text = std::string(256, 'x');  // at the limit: whole
    const std::string whole = encode_control(message);
    EXPECT_EQ(decode_control(whole.data(), whole.size())->text, message.text);
  }
}

TEST(ControlMessage, JoinCarriesNeighboursDelaysAndEndpoint) {
  ControlMessage join;
  join.type = ControlType::kJoin;
  join.federate = "sink";
  join.upstreams = {{"left", std::nullopt}, {"right", 1'000'000}, {"zero", 0}};
  join.downstreams = {"a", "b"};
  join.endpoints = {{"sink", "tcp://127.0.0.1:5555"}};
  const ControlMessage decoded = round_trip(join);
  EXPECT_EQ(decoded.type, ControlType::kJoin);
  EXPECT_EQ(decoded.federate, "sink");
  EXPECT_EQ(decoded.upstreams, join.upstreams);
  EXPECT_EQ(decoded.downstreams, join.downstreams);
  EXPECT_EQ(decoded.endpoints, join.endpoints);
  EXPECT_EQ(decoded.version, kProtocolVersion);
}

// PROTOCOL.md §1, §2.5: START to a version-4 federate adds every federate's version; the
// version-3 form (three fields) still decodes, with no versions.
TEST(ControlMessage, StartCarriesTheVersionsOnlyWhenItHasThem) {
  ControlMessage start = make_tag_message(ControlType::kStart, {0, 0});
  start.endpoints = {{"a", "tcp://127.0.0.1:1"}, {"b", "tcp://127.0.0.1:2"}};
  EXPECT_EQ(static_cast<unsigned char>(encode_control(start)[0]), 0x93);  // [3, tag, endpoints]
  EXPECT_TRUE(round_trip(start).versions.empty());
  start.versions = {{"a", 4}, {"b", 3}};
  EXPECT_EQ(static_cast<unsigned char>(encode_control(start)[0]), 0x94);
  const ControlMessage decoded = round_trip(start);
  EXPECT_EQ(decoded.endpoints, start.endpoints);
  EXPECT_EQ(decoded.versions, start.versions);
  EXPECT_TRUE(decoded.file_digest.empty());
  // To a version-8 federate, the coordinator's cluster-file digest comes last.
  start.file_digest = "0123456789abcdef";
  EXPECT_EQ(static_cast<unsigned char>(encode_control(start)[0]), 0x95);
  EXPECT_EQ(round_trip(start).file_digest, start.file_digest);
  EXPECT_EQ(round_trip(start).versions, start.versions);
}

TEST(ControlMessage, GrantsCarryTheirTagAndMessageCounts) {
  ControlMessage grant = make_tag_message(ControlType::kProvisional, {42, 7});
  grant.counts = {{"left", 3}, {"right", 0}};
  const ControlMessage decoded = round_trip(grant);
  EXPECT_EQ(decoded.type, ControlType::kProvisional);
  EXPECT_EQ(decoded.tag, (WireTag{42, 7}));
  EXPECT_EQ(decoded.counts, grant.counts);
}

// What a trace records with a control message (tracing/README.md): its tag, or NEVER for the
// types PROTOCOL.md §1 gives none, whatever the message's tag field holds.
TEST(ControlMessage, OnlyTypesWithATagCarryOneIntoATrace) {
  const std::vector<ControlType> tagless = {
      ControlType::kJoin,      ControlType::kRefused,      ControlType::kResign,
      ControlType::kHeartbeat, ControlType::kFailed,       ControlType::kFinished,
      ControlType::kResult,    ControlType::kResultStored, ControlType::kReportRequest,
      ControlType::kTracePart, ControlType::kTraceStored,  ControlType::kClockRequest,
      ControlType::kClock};
  for (std::uint8_t number = 1; number <= kLastControlType; ++number) {
    const auto type = static_cast<ControlType>(number);
    ControlMessage message = make_tag_message(type, {0, 0});  // the field's default
    const bool has_none = std::find(tagless.begin(), tagless.end(), type) != tagless.end();
    const WireTag expected = has_none ? transport::kNever : WireTag{0, 0};
    EXPECT_EQ(carried_tag(message), expected) << control_type_name(type);
  }
}

TEST(ControlMessage, StopGrantedCarriesTheStopTagAndTheEarliestProposal) {
  ControlMessage granted = make_tag_message(ControlType::kStopGranted, {9'000'000, 0});
  granted.proposal = {5'000'000, 1};
  const ControlMessage decoded = round_trip(granted);
  EXPECT_EQ(decoded.tag, (WireTag{9'000'000, 0}));
  EXPECT_EQ(decoded.proposal, (WireTag{5'000'000, 1}));
}

TEST(ControlMessage, CompletedMayCarryTheMessagesSentInTransit) {
  ControlMessage ltc = make_tag_message(ControlType::kCompleted, {7, 1});
  ltc.in_transit = {{"b", {8, 0}}, {"c", {1'000'007, 0}}};
  const ControlMessage decoded = round_trip(ltc);
  EXPECT_EQ(decoded.tag, (WireTag{7, 1}));
  EXPECT_EQ(decoded.in_transit, ltc.in_transit);
  EXPECT_TRUE(round_trip(make_tag_message(ControlType::kCompleted, {7, 1})).in_transit.empty());
  EXPECT_FALSE(decoded.next.has_value());
}

TEST(ControlMessage, CompletedMayCarryTheNextTagWithOrWithoutMessagesInTransit) {
  ControlMessage ltc = make_tag_message(ControlType::kCompleted, {7, 1});
  ltc.next = WireTag{9, 0};
  ControlMessage decoded = round_trip(ltc);
  EXPECT_EQ(decoded.tag, (WireTag{7, 1}));
  EXPECT_TRUE(decoded.in_transit.empty());
  EXPECT_EQ(decoded.next, (WireTag{9, 0}));
  ltc.in_transit = {{"b", {8, 0}}};
  ltc.next = transport::kForever;
  decoded = round_trip(ltc);
  EXPECT_EQ(decoded.in_transit, ltc.in_transit);
  EXPECT_EQ(decoded.next, transport::kForever);
}

// PROTOCOL.md §3.9: NET, and an LTC with a next tag, say how the federate reports its waits; a
// frame without the field says kEveryWait. REPORT_REQUEST has no fields.
TEST(ControlMessage, NetAndLtcSayHowTheFederateReportsAndAReportRequestIsItsTypeAlone) {
  ControlMessage net = make_tag_message(ControlType::kNextEvent, {5, 0});
  EXPECT_EQ(encode_control(net).size(), 5U);  // [4, [5, 0]]: no field for kEveryWait
  EXPECT_EQ(round_trip(net).reporting, Reporting::kEveryWait);
  for (const Reporting reporting : {Reporting::kEveryWaitByNotices, Reporting::kMayDefer}) {
    net.reporting = reporting;
    EXPECT_EQ(round_trip(net).reporting, reporting);
    EXPECT_EQ(round_trip(net).tag, (WireTag{5, 0}));
  }
  ControlMessage ltc = make_tag_message(ControlType::kCompleted, {7, 1});
  ltc.in_transit = {{"b", {8, 0}}};
  ltc.next = WireTag{8, 0};
  EXPECT_EQ(round_trip(ltc).reporting, Reporting::kEveryWait);
  ltc.reporting = Reporting::kMayDefer;
  const ControlMessage decoded = round_trip(ltc);
  EXPECT_EQ(decoded.reporting, Reporting::kMayDefer);
  EXPECT_EQ(decoded.next, (WireTag{8, 0}));
  EXPECT_EQ(decoded.in_transit, ltc.in_transit);
  ltc.next.reset();  // without a next tag there is no wait to speak of
  EXPECT_EQ(round_trip(ltc).reporting, Reporting::kEveryWait);
  ControlMessage request;
  request.type = ControlType::kReportRequest;
  EXPECT_EQ(encode_control(request), "\x91\x13");
  EXPECT_EQ(round_trip(request).type, ControlType::kReportRequest);
  EXPECT_STREQ(control_type_name(ControlType::kReportRequest), "REPORT_REQUEST");
  // A reporting that is no number from 0 to 2 is refused, naming the layout.
  for (const std::string& field : {std::string("\x03"), std::string("\xc3")}) {
    const std::string bad_net = std::string("\x93\x04\x92\x05\x00", 5) + field;
    const ControlDecodeResult bad = decode_control_explained(bad_net.data(), bad_net.size());
    EXPECT_FALSE(bad.message);
    EXPECT_NE(bad.error.find("reporting (0..2)"), std::string::npos) << bad.error;
  }
}

TEST(ControlMessage, EveryTypeRoundTrips) {
  for (int t = 1; t <= kLastControlType; ++t) {
    ControlMessage message = make_tag_message(static_cast<ControlType>(t), {-3, 1});
    message.federate = "f";
    message.text = "why";
    const ControlMessage decoded = round_trip(message);
    EXPECT_EQ(decoded.type, message.type);
    // Whatever the type's layout carries (its tag, id or text) comes back: encoded again, the
    // decoded message is the same frame, byte for byte.
    EXPECT_EQ(encode_control(decoded), encode_control(message)) << control_type_name(message.type);
  }
}

TEST(ControlMessage, FloorIsItsTypeAndOneTagAsPROTOCOLSaysByteForByte) {
  // [25, [7, 0]]: fixarray 2, fixint 25, fixarray 2, fixint 7, fixint 0 (PROTOCOL.md §1, §5.1).
  const std::string frame = encode_control(make_tag_message(ControlType::kFloor, {7, 0}));
  EXPECT_EQ(frame, std::string("\x92\x19\x92\x07\x00", 5));
  const std::optional<ControlMessage> decoded = decode_control(frame.data(), frame.size());
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->type, ControlType::kFloor);
  EXPECT_EQ(decoded->tag, WireTag(7, 0));
  const std::string without_tag("\x91\x19", 2);
  const ControlDecodeResult bad = decode_control_explained(without_tag.data(), without_tag.size());
  EXPECT_FALSE(bad.message.has_value());
  EXPECT_NE(bad.error.find("FLOOR"), std::string::npos) << bad.error;
}

TEST(ControlMessage, TracePartsAndClocksCarryTheirFields) {
  ControlMessage part;
  part.type = ControlType::kTracePart;
  part.process = "sampler-0.trace.json";
  part.offset = 49152;
  part.total = 1'000'000;
  part.text = std::string(48 * 1024, '\x7f');
  const std::string frame = encode_control(part);
  EXPECT_LE(frame.size(), 64U * 1024U);
  const ControlMessage decoded = round_trip(part);
  EXPECT_EQ(decoded.type, ControlType::kTracePart);
  EXPECT_EQ(decoded.process, part.process);
  EXPECT_EQ(decoded.offset, 49152U);
  EXPECT_EQ(decoded.total, 1'000'000U);
  EXPECT_EQ(decoded.text, part.text);
  ControlMessage stored;
  stored.type = ControlType::kTraceStored;
  stored.process = "sampler-0.trace.json";
  stored.offset = 98304;
  EXPECT_EQ(round_trip(stored).offset, 98304U);
  ControlMessage clock;
  clock.type = ControlType::kClock;
  clock.clock_ns = -1'700'000'000'123'456'789;
  EXPECT_EQ(round_trip(clock).clock_ns, clock.clock_ns);
  EXPECT_EQ(encode_control(make_tag_message(ControlType::kClockRequest, {})),
            std::string("\x91\x17", 2));
  EXPECT_STREQ(control_type_name(ControlType::kTracePart), "TRACE_PART");
  // A part whose bytes are text, not binary, names the layout.
  const std::string bad = std::string("\x95\x15\xa1x\x00\x01\xa1y", 8);
  const ControlDecodeResult result = decode_control_explained(bad.data(), bad.size());
  EXPECT_FALSE(result.message);
  EXPECT_NE(result.error.find("[21, file name, offset, total size, bytes as binary]"),
            std::string::npos)
      << result.error;
}

TEST(ControlMessage, AResultCarriesItsProcessAndAJsonLongerThanAStringMayBe) {
  ControlMessage result;
  result.type = ControlType::kResult;
  result.process = "sampler-0";
  result.text = "{\"returns\": [" + std::string(4000, '1') + "]}";
  const ControlMessage decoded = round_trip(result);
  EXPECT_EQ(decoded.type, ControlType::kResult);
  EXPECT_EQ(decoded.process, "sampler-0");
  EXPECT_EQ(decoded.text, result.text);
  ControlMessage stored;
  stored.type = ControlType::kResultStored;
  stored.process = "sampler-0";
  stored.text = "/runs/x/summary.json";
  EXPECT_EQ(round_trip(stored).text, stored.text);
  EXPECT_STREQ(control_type_name(ControlType::kResultStored), "RESULT_STORED");
}

TEST(ControlMessage, CheckpointWrittenCarriesTheTagAndThePartsSizeAndChecksum) {
  ControlMessage written = make_tag_message(ControlType::kCheckpointWritten, {200000000, 0});
  written.part_bytes = 94385;
  written.part_checksum = 0x6898a5f68c6d5210ULL;
  const ControlMessage decoded = round_trip(written);
  EXPECT_EQ(decoded.type, ControlType::kCheckpointWritten);
  EXPECT_EQ(decoded.tag, (WireTag{200000000, 0}));
  EXPECT_EQ(decoded.part_bytes, 94385U);
  EXPECT_EQ(decoded.part_checksum, 0x6898a5f68c6d5210ULL);
  EXPECT_STREQ(control_type_name(ControlType::kCheckpointWritten), "CHECKPOINT_WRITTEN");
}

TEST(ControlMessage, GarbageTruncationsAndUnknownTypesAreRejected) {
  const std::string frame = encode_control(make_tag_message(ControlType::kNextEvent, {5, 0}));
  for (std::size_t n = 0; n < frame.size(); ++n) {
    EXPECT_FALSE(decode_control(frame.data(), n).has_value()) << n;
  }
  std::string wrong_type = frame;
  wrong_type[1] = 99;
  EXPECT_FALSE(decode_control(wrong_type.data(), wrong_type.size()).has_value());
  const std::string big(100'000, '\x92');
  EXPECT_FALSE(decode_control(big.data(), big.size()).has_value());
  const std::string claims_huge_array = "\xdd\xff\xff\xff\xff";
  EXPECT_FALSE(decode_control(claims_huge_array.data(), claims_huge_array.size()).has_value());
}

/// A JOIN frame written by hand, as a client in another language might: [1, 2, id, [["up",
/// DELAY]], [], "tcp://x"], DELAY being the packed bytes given (and without the endpoint when
/// `drop_endpoint`).
std::string join_frame(const std::string& id, const std::string& delay_field,
                       bool drop_endpoint = false) {
  std::string frame;
  frame += static_cast<char>(drop_endpoint ? 0x95 : 0x96);
  frame += '\x01';
  frame += '\x02';
  const auto str = [&frame](const std::string& text) {
    if (text.size() < 32) {
      frame += static_cast<char>(0xa0 | text.size());
    } else {
      frame += '\xda';  // str 16: a big-endian length
      frame += static_cast<char>(text.size() >> 8);
      frame += static_cast<char>(text.size() & 0xff);
    }
    frame += text;
  };
  str(id);
  frame += '\x91';
  frame += '\x92';
  str("up");
  frame += delay_field;
  frame += '\x90';
  if (!drop_endpoint) str("tcp://x");
  return frame;
}

TEST(ControlMessage, AMalformedJoinIsExplainedNamingTheField) {
  const std::string ok = join_frame("sink", "\x05");
  const ControlDecodeResult good = decode_control_explained(ok.data(), ok.size());
  ASSERT_TRUE(good.message) << good.error;
  EXPECT_EQ(good.message->upstreams.front().delay, 5);

  const std::string delay_as_text = join_frame("sink",
                                               "\xa2"
                                               "5s");
  ControlDecodeResult bad = decode_control_explained(delay_as_text.data(), delay_as_text.size());
  EXPECT_FALSE(bad.message);
  EXPECT_EQ(bad.type, ControlType::kJoin);
  EXPECT_EQ(bad.error, "JOIN: upstreams is not a list of [id, delay in integer ns >= 0 or nil]");

  const std::string missing = join_frame("sink", "\x05", true);
  bad = decode_control_explained(missing.data(), missing.size());
  EXPECT_EQ(bad.type, ControlType::kJoin);
  EXPECT_NE(bad.error.find("expected 6 elements"), std::string::npos) << bad.error;

  const std::string long_id = join_frame(std::string(200, 'x') + std::string(100, 'y'), "\x05");
  bad = decode_control_explained(long_id.data(), long_id.size());
  EXPECT_FALSE(bad.message);
  EXPECT_EQ(bad.type, ControlType::kJoin);
  EXPECT_NE(bad.error.find("strings up to 256 bytes"), std::string::npos) << bad.error;
}

TEST(ControlMessage, OtherMalformedFramesAreExplainedWithTheExpectedFields) {
  const std::string net_without_tag = "\x91\x04";
  ControlDecodeResult bad =
      decode_control_explained(net_without_tag.data(), net_without_tag.size());
  EXPECT_EQ(bad.type, ControlType::kNextEvent);
  EXPECT_NE(bad.error.find("NET: expected [4, tag]"), std::string::npos) << bad.error;
  // Every type's layout names its own number, as the table of PROTOCOL.md §1 does.
  for (const auto& [frame, expected] : std::vector<std::pair<std::string, std::string>>{
           {std::string("\x92\x0d\x01", 3), "HEARTBEAT: expected [13]"},
           {std::string("\x92\x0c\x01", 3), "RESIGN: expected [12]"},
           {std::string("\x91\x06", 2), "TAG: expected [6, tag, [[upstream, count]...]]"},
           {std::string("\x91\x07", 2), "PTAG: expected [7, tag, [[upstream, count]...]]"},
           {std::string("\x91\x0a", 2), "STOP_REPLY: expected [10, tag] with tag = "},
           {std::string("\x91\x19", 2), "FLOOR: expected [25, tag] with tag = "}}) {
    bad = decode_control_explained(frame.data(), frame.size());
    EXPECT_EQ(bad.error.rfind(expected, 0), 0U) << bad.error;
  }
  const std::string no_type = "\x91\x63";
  bad = decode_control_explained(no_type.data(), no_type.size());
  EXPECT_FALSE(bad.type);
  EXPECT_FALSE(bad.error.empty());
  bad = decode_control_explained("", 0);
  EXPECT_EQ(bad.error, "empty frame");
}

}  // namespace
}  // namespace tagflow::coordinator
