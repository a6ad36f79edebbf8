#include "transport/wire_header.hpp"

#include <string>

#include <gtest/gtest.h>
#include <msgpack.hpp>

namespace tagflow::transport {
namespace {

WireHeader sample_header() {
  WireHeader header;
  header.tag = {1'500'000, 3};
  header.from = "sampler-0";
  header.port = 7;
  header.kind = MessageKind::kPortValue;
  header.sizes = {16, 28224};
  return header;
}

template <class Fill>
std::string packed(Fill fill) {
  msgpack::sbuffer buffer;
  msgpack::packer<msgpack::sbuffer> packer(buffer);
  fill(packer);
  return std::string(buffer.data(), buffer.size());
}

TEST(WireHeader, EncodedHeaderDecodesToTheSameFields) {
  const WireHeader header = sample_header();
  const std::string frame = encode_header(header);
  const DecodedHeader decoded = decode_header(frame.data(), frame.size());
  ASSERT_EQ(decoded.error, DropReason::kNone);
  EXPECT_EQ(decoded.header.version, kWireVersion);
  EXPECT_EQ(decoded.header.tag, header.tag);
  EXPECT_EQ(decoded.header.from, "sampler-0");
  EXPECT_EQ(decoded.header.port, 7U);
  EXPECT_EQ(decoded.header.kind, MessageKind::kPortValue);
  EXPECT_EQ(decoded.header.sizes, header.sizes);
}

TEST(WireHeader, NegativeTimesAndForeverRoundTrip) {
  WireHeader header = sample_header();
  header.tag = {-5, 0};
  std::string frame = encode_header(header);
  EXPECT_EQ(decode_header(frame.data(), frame.size()).header.tag, header.tag);
  header.tag = kForever;
  frame = encode_header(header);
  EXPECT_EQ(decode_header(frame.data(), frame.size()).header.tag, kForever);
}

TEST(WireHeader, EveryTruncationOfAValidFrameIsRefused) {
  const std::string frame = encode_header(sample_header());
  for (std::size_t length = 0; length < frame.size(); ++length) {
    EXPECT_NE(decode_header(frame.data(), length).error, DropReason::kNone) << length;
  }
}

TEST(WireHeader, TrailingBytesAreRefusedBeforeVersion4) {
  for (const std::uint32_t version : {kOldestWireVersion, kFirstDoneHeaderVersion}) {
    WireHeader header = sample_header();
    header.version = version;
    std::string frame = encode_header(header);
    frame.push_back('\0');
    EXPECT_EQ(decode_header(frame.data(), frame.size()).error, DropReason::kMalformedHeader)
        << version;
  }
}

TEST(WireHeader, Version4CarriesItsPayloadsAfterTheMap) {
  WireHeader header = sample_header();
  header.version = kFirstInlineHeaderVersion;
  const std::string map = encode_header(header);
  const std::string frame = map + std::string(3000, 'p');  // over the map's own cap of 1 KiB
  const DecodedHeader decoded = decode_header(frame.data(), frame.size());
  ASSERT_EQ(decoded.error, DropReason::kNone);
  EXPECT_EQ(decoded.map_bytes, map.size());
  EXPECT_EQ(decoded.header.from, header.from);
  EXPECT_EQ(decode_header(map.data(), map.size()).map_bytes, map.size());  // none behind it
}

TEST(WireHeader, Version4FramesKeepTheirCaps) {
  WireHeader header = sample_header();
  header.version = kFirstInlineHeaderVersion;
  const std::string map = encode_header(header);
  const HeaderLimits limits;
  // The frame's cap, before anything is read: the map's cap plus the inline cap.
  std::string frame =
      map + std::string(limits.max_header_bytes + limits.max_inline_bytes - map.size() + 1, 'p');
  EXPECT_EQ(decode_header(frame.data(), frame.size()).error, DropReason::kHeaderTooLarge);
  frame.pop_back();
  EXPECT_EQ(decode_header(frame.data(), frame.size()).error, DropReason::kNone);
  // Over 1 KiB, anything but a valid version-4 map within 1 KiB stays too large.
  header.version = kFirstDoneHeaderVersion;
  frame = encode_header(header) + std::string(2000, 'p');
  EXPECT_EQ(decode_header(frame.data(), frame.size()).error, DropReason::kHeaderTooLarge);
  header.version = kFirstInlineHeaderVersion;
  header.kind = static_cast<MessageKind>(9);
  frame = encode_header(header) + std::string(2000, 'p');
  EXPECT_EQ(decode_header(frame.data(), frame.size()).error, DropReason::kHeaderTooLarge);
  // Within 1 KiB, a fault in front of payload bytes makes the frame malformed, whatever it is.
  frame = encode_header(header) + "pp";
  EXPECT_EQ(decode_header(frame.data(), frame.size()).error, DropReason::kMalformedHeader);
  frame = encode_header(header);
  EXPECT_EQ(decode_header(frame.data(), frame.size()).error, DropReason::kUnknownKind);
}

TEST(WireHeader, OtherVersionIsRefusedAsBadVersion) {
  WireHeader header = sample_header();
  header.version = kWireVersion + 1;
  const std::string frame = encode_header(header);
  EXPECT_EQ(decode_header(frame.data(), frame.size()).error, DropReason::kBadVersion);
}

// WIRE.md §2: version 3 adds `done` to a value or an ABSENT; version 2 (no `done`) still reads.
TEST(WireHeader, AValuesDoneRoundTripsInVersionThreeAndVersionTwoStillReads) {
  WireHeader header = sample_header();
  header.done = WireTag(1'500'000, 2);
  std::string frame = encode_header(header);
  DecodedHeader decoded = decode_header(frame.data(), frame.size());
  ASSERT_EQ(decoded.error, DropReason::kNone);
  ASSERT_TRUE(decoded.header.done.has_value());
  EXPECT_EQ(*decoded.header.done, WireTag(1'500'000, 2));
  EXPECT_EQ(decoded.header.sizes, header.sizes);
  header.kind = MessageKind::kPortAbsent;
  header.sizes.clear();
  frame = encode_header(header);
  EXPECT_EQ(decode_header(frame.data(), frame.size()).error, DropReason::kNone);

  WireHeader old = sample_header();
  old.version = kOldestWireVersion;
  frame = encode_header(old);
  decoded = decode_header(frame.data(), frame.size());
  ASSERT_EQ(decoded.error, DropReason::kNone);
  EXPECT_EQ(decoded.header.version, 2U);
  EXPECT_FALSE(decoded.header.done.has_value());
  old.version = kOldestWireVersion - 1;
  frame = encode_header(old);
  EXPECT_EQ(decode_header(frame.data(), frame.size()).error, DropReason::kBadVersion);
}

TEST(WireHeader, DoneInAVersionTwoHeaderOrOnACompletedNoticeIsMalformed) {
  WireHeader header = sample_header();
  header.done = WireTag(7, 0);
  header.version = 2;
  std::string frame = encode_header(header);
  EXPECT_EQ(decode_header(frame.data(), frame.size()).error, DropReason::kMalformedHeader);
  header.version = kWireVersion;
  header.kind = MessageKind::kCompleted;
  header.port = 0;
  header.sizes.clear();
  frame = encode_header(header);
  EXPECT_EQ(decode_header(frame.data(), frame.size()).error, DropReason::kMalformedHeader);
  // A `done` that is not a tag.
  header = sample_header();
  header.done = WireTag(7, 0);
  frame = encode_header(header);
  const std::size_t at = frame.find("done") + 4;
  ASSERT_LT(at, frame.size());
  frame[at] = static_cast<char>(0xc0);  // nil in place of the [time, microstep] array
  frame.resize(at + 1);
  EXPECT_EQ(decode_header(frame.data(), frame.size()).error, DropReason::kMalformedHeader);
}

TEST(WireHeader, FrameAboveTheHeaderCapIsRefusedBeforeParsing) {
  const std::string frame(2048, 'x');
  EXPECT_EQ(decode_header(frame.data(), frame.size()).error, DropReason::kHeaderTooLarge);
}

TEST(WireHeader, ClaimedHugeArrayIsRefusedWithoutAllocating) {
  // A map whose "sizes" claims 2^32-1 entries in 20 bytes: must fail on the limit, not allocate.
  const std::string frame = packed([](auto& p) {
    p.pack_map(1);
    p.pack_str(5);
    p.pack_str_body("sizes", 5);
    p.pack_array(0xFFFFFFFFU);
  });
  EXPECT_NE(decode_header(frame.data(), frame.size()).error, DropReason::kNone);
}

TEST(WireHeader, TooManyPayloadSizesAreRefused) {
  WireHeader header = sample_header();
  header.sizes.assign(17, 1);
  const std::string frame = encode_header(header);
  EXPECT_NE(decode_header(frame.data(), frame.size()).error, DropReason::kNone);
}

TEST(WireHeader, MissingDuplicatedOrUnknownFieldsAreRefused) {
  const std::string missing = packed([](auto& p) {
    p.pack_map(1);
    p.pack_str(1);
    p.pack_str_body("v", 1);
    p.pack_uint32(kWireVersion);
  });
  EXPECT_EQ(decode_header(missing.data(), missing.size()).error, DropReason::kMalformedHeader);
  const std::string duplicated = packed([](auto& p) {
    p.pack_map(2);
    for (int i = 0; i < 2; ++i) {
      p.pack_str(1);
      p.pack_str_body("v", 1);
      p.pack_uint32(kWireVersion);
    }
  });
  EXPECT_EQ(decode_header(duplicated.data(), duplicated.size()).error,
            DropReason::kMalformedHeader);
  const std::string not_a_map = packed([](auto& p) { p.pack_array(0); });
  EXPECT_EQ(decode_header(not_a_map.data(), not_a_map.size()).error, DropReason::kMalformedHeader);
}

TEST(WireHeader, UnknownKindIsRefused) {
  std::string frame = encode_header(sample_header());
  // The kind is packed as a positive fixint right after the key "kind".
  const std::size_t at = frame.find("kind") + 4;
  ASSERT_LT(at, frame.size());
  frame[at] = 9;
  EXPECT_EQ(decode_header(frame.data(), frame.size()).error, DropReason::kUnknownKind);
}

TEST(WireTag, DelaysFollowTheConnectionRules) {
  const WireTag tag{100, 2};
  EXPECT_EQ(delayed(tag, std::nullopt), tag);
  EXPECT_EQ(delayed(tag, 0), (WireTag{100, 3}));
  EXPECT_EQ(delayed(tag, 50), (WireTag{150, 0}));
  EXPECT_EQ(delayed(kForever, 50), kForever);
  EXPECT_EQ(delayed(kForever, 0), kForever);
  EXPECT_EQ(delayed(kNever, 0), kNever);
  EXPECT_EQ(delayed(kNever, 50), kNever);
  EXPECT_EQ(delayed(WireTag(std::numeric_limits<std::int64_t>::max() - 10, 0), 50), kForever);
}

}  // namespace
}  // namespace tagflow::transport
