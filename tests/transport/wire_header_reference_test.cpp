// The header's reader and writer (transport/wire_header.cpp) against MessagePack's C++ library,
// which read and wrote it before: the same bytes for every header written, and the same verdict
// (and fields) for every frame read — valid headers, random MessagePack of every type and
// encoding, and valid headers mutated byte by byte. The reference below is the earlier
// implementation, kept here as the oracle, with version 4's one rule added (WIRE.md §2–§3): the
// bytes after a map that is a valid version-4 header, within the header's cap, are its payloads.
#include <algorithm>
#include <cstring>
#include <exception>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <msgpack.hpp>

#include "transport/wire_header.hpp"

namespace tagflow::transport {
namespace {

constexpr std::uint32_t kFieldCount = 6;
constexpr std::uint32_t kMaxFieldCount = 7;

void pack_key(msgpack::packer<msgpack::sbuffer>& packer, const char* key) {
  const auto length = static_cast<std::uint32_t>(std::strlen(key));
  packer.pack_str(length);
  packer.pack_str_body(key, length);
}

bool key_is(const msgpack::object& key, const char* name) {
  const std::size_t length = std::strlen(name);
  return key.type == msgpack::type::STR && key.via.str.size == length &&
         std::memcmp(key.via.str.ptr, name, length) == 0;
}

bool read_unsigned(const msgpack::object& object, std::uint64_t max, std::uint64_t& out) {
  if (object.type != msgpack::type::POSITIVE_INTEGER || object.via.u64 > max) return false;
  out = object.via.u64;
  return true;
}

bool read_tag(const msgpack::object& object, WireTag& out) {
  if (object.type != msgpack::type::ARRAY || object.via.array.size != 2) return false;
  const msgpack::object& time = object.via.array.ptr[0];
  std::int64_t time_ns = 0;
  if (time.type == msgpack::type::POSITIVE_INTEGER) {
    if (time.via.u64 > static_cast<std::uint64_t>(kForever.time_ns())) return false;
    time_ns = static_cast<std::int64_t>(time.via.u64);
  } else if (time.type == msgpack::type::NEGATIVE_INTEGER) {
    time_ns = time.via.i64;
  } else {
    return false;
  }
  std::uint64_t microstep = 0;
  if (!read_unsigned(object.via.array.ptr[1], kForever.microstep(), microstep)) return false;
  out = WireTag(time_ns, static_cast<std::uint32_t>(microstep));
  return true;
}

/// Fills `header` from the fields of `map`; returns the first problem found.
DropReason read_fields(const msgpack::object_map& map, const HeaderLimits& limits,
                       WireHeader& header) {
  unsigned seen = 0;  // one bit per field, so duplicates are refused
  for (std::uint32_t i = 0; i < map.size; ++i) {
    const msgpack::object& key = map.ptr[i].key;
    const msgpack::object& value = map.ptr[i].val;
    std::uint64_t number = 0;
    unsigned bit = 0;
    if (key_is(key, "v")) {
      bit = 1U;
      if (!read_unsigned(value, 0xFFFFFFFFU, number)) return DropReason::kMalformedHeader;
      if (number < kOldestWireVersion || number > kWireVersion) return DropReason::kBadVersion;
      header.version = static_cast<std::uint32_t>(number);
    } else if (key_is(key, "tag")) {
      bit = 2U;
      if (!read_tag(value, header.tag)) return DropReason::kMalformedHeader;
    } else if (key_is(key, "from")) {
      bit = 4U;
      if (value.type != msgpack::type::STR || value.via.str.size == 0 ||
          value.via.str.size > limits.max_federate_id_chars) {
        return DropReason::kMalformedHeader;
      }
      header.from.assign(value.via.str.ptr, value.via.str.size);
    } else if (key_is(key, "port")) {
      bit = 8U;
      if (!read_unsigned(value, 0xFFFFFFFFU, number)) return DropReason::kMalformedHeader;
      header.port = static_cast<std::uint32_t>(number);
    } else if (key_is(key, "kind")) {
      bit = 16U;
      if (!read_unsigned(value, 0xFF, number)) return DropReason::kMalformedHeader;
      if (number != static_cast<std::uint64_t>(MessageKind::kPortValue) &&
          number != static_cast<std::uint64_t>(MessageKind::kPortAbsent) &&
          number != static_cast<std::uint64_t>(MessageKind::kCompleted)) {
        return DropReason::kUnknownKind;
      }
      header.kind = static_cast<MessageKind>(number);
    } else if (key_is(key, "sizes")) {
      bit = 32U;
      if (value.type != msgpack::type::ARRAY) return DropReason::kMalformedHeader;
      if (value.via.array.size > limits.max_payload_frames) return DropReason::kTooManyFrames;
      header.sizes.resize(value.via.array.size);
      for (std::uint32_t s = 0; s < value.via.array.size; ++s) {
        if (!read_unsigned(value.via.array.ptr[s], ~std::uint64_t{0}, header.sizes[s])) {
          return DropReason::kMalformedHeader;
        }
      }
    } else if (key_is(key, "done")) {
      bit = 64U;
      WireTag done;
      if (!read_tag(value, done)) return DropReason::kMalformedHeader;
      header.done = done;
    } else {
      return DropReason::kMalformedHeader;
    }
    if ((seen & bit) != 0) return DropReason::kMalformedHeader;
    seen |= bit;
  }
  if ((seen & 63U) != 63U) return DropReason::kMalformedHeader;
  // `done` came with version 3, and only on a value or an ABSENT (a notice is its own `done`).
  if (header.done &&
      (header.version < kFirstDoneHeaderVersion || header.kind == MessageKind::kCompleted)) {
    return DropReason::kMalformedHeader;
  }
  return DropReason::kNone;
}

/// What a refused header keeps: after a refused version or frame count (WIRE.md §3 step 4) the
/// first well-formed `tag`, `from`, `port` and `kind` of its map, so that the receiver can name
/// the message; after any other fault nothing.
WireHeader reference_named(const msgpack::object_map& map, const HeaderLimits& limits,
                           DropReason fault) {
  WireHeader named;
  if (fault != DropReason::kBadVersion && fault != DropReason::kTooManyFrames) return named;
  unsigned seen = 0;
  for (std::uint32_t i = 0; i < map.size; ++i) {
    const msgpack::object& key = map.ptr[i].key;
    const msgpack::object& value = map.ptr[i].val;
    std::uint64_t number = 0;
    if (key_is(key, "tag") && (seen & 2U) == 0 && read_tag(value, named.tag)) {
      seen |= 2U;
    } else if (key_is(key, "from") && (seen & 4U) == 0 && value.type == msgpack::type::STR &&
               value.via.str.size != 0 && value.via.str.size <= limits.max_federate_id_chars) {
      named.from.assign(value.via.str.ptr, value.via.str.size);
      seen |= 4U;
    } else if (key_is(key, "port") && (seen & 8U) == 0 &&
               read_unsigned(value, 0xFFFFFFFFU, number)) {
      named.port = static_cast<std::uint32_t>(number);
      seen |= 8U;
    } else if (key_is(key, "kind") && (seen & 16U) == 0 && read_unsigned(value, 0xFF, number) &&
               number <= static_cast<std::uint64_t>(MessageKind::kCompleted) &&
               number >= static_cast<std::uint64_t>(MessageKind::kPortValue)) {
      named.kind = static_cast<MessageKind>(number);
      seen |= 16U;
    }
  }
  return named;
}

std::string reference_encode(const WireHeader& header) {
  msgpack::sbuffer buffer(64 + header.from.size() + 9 * header.sizes.size());
  msgpack::packer<msgpack::sbuffer> packer(buffer);
  packer.pack_map(header.done ? kMaxFieldCount : kFieldCount);
  pack_key(packer, "v");
  packer.pack_uint32(header.version);
  pack_key(packer, "tag");
  packer.pack_array(2);
  packer.pack_int64(header.tag.time_ns());
  packer.pack_uint32(header.tag.microstep());
  pack_key(packer, "from");
  packer.pack_str(static_cast<std::uint32_t>(header.from.size()));
  packer.pack_str_body(header.from.data(), static_cast<std::uint32_t>(header.from.size()));
  pack_key(packer, "port");
  packer.pack_uint32(header.port);
  pack_key(packer, "kind");
  packer.pack_uint8(static_cast<std::uint8_t>(header.kind));
  pack_key(packer, "sizes");
  packer.pack_array(static_cast<std::uint32_t>(header.sizes.size()));
  for (std::uint64_t size : header.sizes) packer.pack_uint64(size);
  if (header.done) {
    pack_key(packer, "done");
    packer.pack_array(2);
    packer.pack_int64(header.done->time_ns());
    packer.pack_uint32(header.done->microstep());
  }
  return std::string(buffer.data(), buffer.size());
}

DecodedHeader reference_decode(const void* data, std::size_t size, const HeaderLimits& limits);

/// The earlier reader, on the map alone; `map_bytes` is where its first object ends.
DecodedHeader reference_map(const void* data, std::size_t size, const HeaderLimits& limits,
                            std::size_t& map_bytes);

DecodedHeader reference_decode(const void* data, std::size_t size, const HeaderLimits& limits) {
  DecodedHeader result;
  if (size > limits.max_header_bytes + limits.max_inline_bytes) {
    result.error = DropReason::kHeaderTooLarge;
    return result;
  }
  std::size_t map_bytes = 0;
  result = reference_map(data, size, limits, map_bytes);
  if (map_bytes != size) {
    // Trailing bytes: payloads behind a valid version-4 map, else the frame is malformed.
    result = reference_map(data, map_bytes, limits, map_bytes);
    if (result.error != DropReason::kNone || result.header.version < kFirstInlineHeaderVersion) {
      result.error = DropReason::kMalformedHeader;
    }
  }
  if (size > limits.max_header_bytes &&
      (result.error != DropReason::kNone || map_bytes > limits.max_header_bytes)) {
    result.error = DropReason::kHeaderTooLarge;
  }
  if (result.error != DropReason::kNone) {
    // reference_map left what names a refused version or frame count; nothing else is kept.
    if (result.error != DropReason::kBadVersion && result.error != DropReason::kTooManyFrames) {
      result.header = WireHeader{};
    }
    map_bytes = 0;
  }
  result.map_bytes = map_bytes;
  return result;
}

DecodedHeader reference_map(const void* data, std::size_t size, const HeaderLimits& limits,
                            std::size_t& map_bytes) {
  DecodedHeader result;
  map_bytes = size;
  if (size == 0 || data == nullptr) {
    result.error = DropReason::kMalformedHeader;
    return result;
  }
  // Every container is bounded before MessagePack allocates for it.
  const msgpack::unpack_limit unpack_limits(
      /*array=*/limits.max_payload_frames + 2, /*map=*/kMaxFieldCount,
      /*str=*/limits.max_federate_id_chars, /*bin=*/0, /*ext=*/0, /*depth=*/3);
  try {
    std::size_t offset = 0;
    const msgpack::object_handle handle = msgpack::unpack(static_cast<const char*>(data), size,
                                                          offset, nullptr, nullptr, unpack_limits);
    map_bytes = offset;
    if (offset != size) return result;  // the caller decides what the rest is
    if (handle.get().type != msgpack::type::MAP) {
      result.error = DropReason::kMalformedHeader;
      return result;
    }
    result.error = read_fields(handle.get().via.map, limits, result.header);
    if (result.error != DropReason::kNone) {
      result.header = reference_named(handle.get().via.map, limits, result.error);
    }
  } catch (const std::exception&) {
    result.error = DropReason::kMalformedHeader;
    result.header = WireHeader{};
  }
  return result;
}

/// How often each verdict came: the frames must reach every one, or the comparison says little.
std::map<DropReason, int> verdicts;

void expect_same(const std::string& frame, const HeaderLimits& limits = {}) {
  const DecodedHeader got = decode_header(frame.data(), frame.size(), limits);
  ++verdicts[got.error];
  const DecodedHeader want = reference_decode(frame.data(), frame.size(), limits);
  ASSERT_EQ(static_cast<int>(got.error), static_cast<int>(want.error))
      << "frame of " << frame.size() << " bytes: "
      << testing::PrintToString(std::vector<unsigned char>(frame.begin(), frame.end()));
  EXPECT_EQ(got.header.version, want.header.version);
  EXPECT_EQ(got.header.tag, want.header.tag);
  EXPECT_EQ(got.header.from, want.header.from);
  EXPECT_EQ(got.header.port, want.header.port);
  EXPECT_EQ(got.header.kind, want.header.kind);
  EXPECT_EQ(got.header.sizes, want.header.sizes);
  EXPECT_EQ(got.header.done, want.header.done);
  EXPECT_EQ(got.map_bytes, want.map_bytes);
}

/// Headers over every encoding boundary of their numbers and strings.
std::vector<WireHeader> boundary_headers() {
  const std::vector<std::int64_t> times = {0,
                                           1,
                                           127,
                                           128,
                                           255,
                                           256,
                                           65535,
                                           65536,
                                           -1,
                                           -32,
                                           -33,
                                           -128,
                                           -129,
                                           -32768,
                                           -32769,
                                           -2147483648LL,
                                           -2147483649LL,
                                           4294967295LL,
                                           4294967296LL,
                                           kForever.time_ns(),
                                           kNever.time_ns()};
  const std::vector<std::uint32_t> small = {0, 1, 127, 128, 255, 256, 65535, 65536, 0xFFFFFFFFU};
  std::vector<WireHeader> out;
  for (const std::int64_t t : times) {
    for (const std::uint32_t m : small) {
      WireHeader h;
      h.tag = WireTag(t, m);
      h.from = std::string(1 + (static_cast<std::size_t>(m) % 64), 'a');
      h.port = m;
      h.kind = static_cast<MessageKind>(1 + (m % 3));
      h.sizes.assign(m % 17, std::uint64_t{m} * 4294967311ULL);
      if (h.kind != MessageKind::kCompleted) h.done = WireTag(t, m / 2);
      out.push_back(h);
    }
  }
  for (std::size_t n = 1; n <= 64; ++n) {
    WireHeader h;
    h.from = std::string(n, 'x');
    h.sizes = {0, 127, 128, 255, 256, 65535, 65536, 4294967295ULL, 4294967296ULL, ~0ULL};
    out.push_back(h);
  }
  return out;
}

TEST(WireHeaderReference, WritesTheBytesMessagePackWrote) {
  for (const WireHeader& h : boundary_headers()) {
    ASSERT_EQ(encode_header(h), reference_encode(h)) << h.from << " " << h.port;
  }
  WireHeader many;
  many.sizes.assign(70'000, 1);  // an array over 65,535 elements
  EXPECT_EQ(encode_header(many), reference_encode(many));
}

TEST(WireHeaderReference, ReadsValidHeadersAsBefore) {
  for (const WireHeader& h : boundary_headers()) expect_same(encode_header(h));
}

// A field's error (here the version 9) counts only when every byte of the frame is well formed.
TEST(WireHeaderReference, ChecksEveryByteBehindAFieldsError) {
  const std::string bad_version = std::string("\x82\xa1v\x09\xa1x", 6);
  const std::vector<std::pair<std::string, DropReason>> cases = {
      {std::string("\xc4\x00", 2), DropReason::kBadVersion},               // bin, empty
      {std::string("\xc4\x01z", 3), DropReason::kMalformedHeader},         // bin with a byte
      {std::string("\xc7\x00\x01", 3), DropReason::kMalformedHeader},      // ext, empty
      {std::string("\xd4\x01z", 3), DropReason::kMalformedHeader},         // fixext 1
      {std::string("\xc1", 1), DropReason::kMalformedHeader},              // never used
      {std::string("\x91\x91\x01", 3), DropReason::kBadVersion},           // map > array > array
      {std::string("\x91\x91\x91\x01", 4), DropReason::kMalformedHeader},  // one deeper
      {std::string("\x91\x80", 2), DropReason::kBadVersion},               // an empty map, 3 deep
      {std::string("\x91\x91\x80", 3), DropReason::kMalformedHeader},
      {"\xbf" + std::string(31, 's'), DropReason::kBadVersion},
      {"\xd9\x41" + std::string(65, 's'), DropReason::kMalformedHeader},  // over 64 bytes
      {std::string("\xdc\x00\x12", 3) + std::string(18, '\x01'), DropReason::kBadVersion},
      {std::string("\xdc\x00\x13", 3) + std::string(19, '\x01'), DropReason::kMalformedHeader},
      {std::string("\xcb\x00\x00", 3), DropReason::kMalformedHeader},  // a double cut short
      {std::string("\xc3", 1), DropReason::kBadVersion},
  };
  for (const auto& [value, verdict] : cases) {
    const std::string frame = bad_version + value;
    EXPECT_EQ(static_cast<int>(decode_header(frame.data(), frame.size()).error),
              static_cast<int>(verdict))
        << testing::PrintToString(std::vector<unsigned char>(frame.begin(), frame.end()));
    expect_same(frame);
  }
}

/// Random MessagePack: every type byte, in every encoding, nested a few deep; maps mostly keyed by
/// the header's own field names, so that field errors behind syntax errors get exercised.
class RandomFrames {
 public:
  explicit RandomFrames(std::uint32_t seed) : rng_(seed) {}

  std::string frame() {
    std::string out;
    if (pick(2) == 0) {
      near_valid(out);
    } else if (pick(10) == 0) {
      object(out, 0);
    } else {
      map(out, 0, pick(9));
    }
    // Now and then bytes behind the map, as a version-4 frame's payloads, and now and then
    // enough of them to pass the header's own cap.
    if (pick(4) == 0) out.append(pick(8) == 0 ? 1000 + pick(2000) : pick(40), 'p');
    return out;
  }

 private:
  std::uint32_t pick(std::uint32_t n) { return static_cast<std::uint32_t>(rng_() % n); }
  static void big_endian(std::string& out, std::uint64_t v, int bytes) {
    for (int b = bytes - 1; b >= 0; --b) out.push_back(static_cast<char>((v >> (8 * b)) & 0xFF));
  }
  void str(std::string& out, const std::string& s) {
    switch (pick(4)) {
      case 0:
        if (s.size() < 32) {
          out.push_back(static_cast<char>(0xa0 | s.size()));
          break;
        }
        [[fallthrough]];
      case 1:
        out.push_back(static_cast<char>(0xd9));
        big_endian(out, s.size(), 1);
        break;
      case 2:
        out.push_back(static_cast<char>(0xda));
        big_endian(out, s.size(), 2);
        break;
      default:
        out.push_back(static_cast<char>(0xdb));
        big_endian(out, s.size(), 4);
        break;
    }
    out += s;
  }
  void integer(std::string& out) {
    const std::uint64_t magnitudes[] = {0,
                                        1,
                                        2,
                                        3,
                                        31,
                                        32,
                                        127,
                                        128,
                                        255,
                                        256,
                                        65535,
                                        65536,
                                        0xFFFFFFFFULL,
                                        0x100000000ULL,
                                        static_cast<std::uint64_t>(kForever.time_ns()),
                                        static_cast<std::uint64_t>(kForever.time_ns()) + 1,
                                        ~0ULL};
    const std::uint64_t v = magnitudes[pick(17)] - (pick(4) == 0 ? 1 : 0);
    const std::uint32_t type = pick(10);
    if (type == 0 && v < 0x80) {
      out.push_back(static_cast<char>(v));
    } else if (type == 1) {
      out.push_back(static_cast<char>(0xe0 | (v & 0x1f)));  // negative fixint
    } else {
      static const unsigned char formats[] = {0xcc, 0xcd, 0xce, 0xcf, 0xd0, 0xd1, 0xd2, 0xd3};
      const unsigned char f = formats[pick(8)];
      out.push_back(static_cast<char>(f));
      big_endian(out, v, 1 << (f & 3));
    }
  }
  void array(std::string& out, int depth, std::uint32_t n) {
    if (n < 16 && pick(3) != 0) {
      out.push_back(static_cast<char>(0x90 | n));
    } else {
      out.push_back(static_cast<char>(pick(2) == 0 ? 0xdc : 0xdd));
      big_endian(out, n, static_cast<unsigned char>(out.back()) == 0xdc ? 2 : 4);
    }
    for (std::uint32_t i = 0; i < n; ++i) object(out, depth + 1);
  }
  void map(std::string& out, int depth, std::uint32_t n) {
    static const char* keys[] = {"v", "tag", "from", "port", "kind", "sizes", "done", "x", "V"};
    if (n < 16 && pick(3) != 0) {
      out.push_back(static_cast<char>(0x80 | n));
    } else {
      out.push_back(static_cast<char>(pick(2) == 0 ? 0xde : 0xdf));
      big_endian(out, n, static_cast<unsigned char>(out.back()) == 0xde ? 2 : 4);
    }
    for (std::uint32_t i = 0; i < n; ++i) {
      if (pick(8) == 0) {
        object(out, depth + 1);
      } else {
        str(out, keys[pick(9)]);
      }
      value(out, depth + 1);
    }
  }
  /// The fields of a header in any order and encoding, each mostly of its type and range, now and
  /// then one left out, doubled, or of another type.
  void near_valid(std::string& out) {
    std::vector<int> fields = {0, 1, 2, 3, 4, 5};
    if (pick(2) == 0) fields.push_back(6);
    if (pick(8) == 0)
      fields.erase(fields.begin() + pick(static_cast<std::uint32_t>(fields.size())));
    if (pick(8) == 0) fields.push_back(static_cast<int>(pick(7)));
    std::shuffle(fields.begin(), fields.end(), rng_);
    // Now and then a last field of any type, behind what may already be a field's error: its
    // bytes must still be checked.
    const bool junk_last = fields.size() < 7 && pick(3) == 0;
    if (junk_last) fields.push_back(-1);
    out.push_back(static_cast<char>(0x80 | fields.size()));
    static const char* keys[] = {"v", "tag", "from", "port", "kind", "sizes", "done"};
    for (const int f : fields) {
      if (f < 0) {
        str(out, keys[pick(7)]);
        object(out, 1);
        continue;
      }
      str(out, keys[f]);
      if (pick(16) == 0) {
        object(out, 1);
        continue;
      }
      switch (f) {
        case 0:
          unsigned_value(out, pick(4) == 0 ? pick(6) : 2 + pick(3));
          break;
        case 1:
        case 6:
          out.push_back(static_cast<char>(0x92));
          if (pick(4) == 0) {
            integer(out);
          } else {
            unsigned_value(out, rng_());
          }
          unsigned_value(out, pick(4) == 0 ? rng_() : pick(3));
          break;
        case 2:
          str(out, std::string(pick(8) == 0 ? 0 : 1 + pick(70), 'w'));
          break;
        case 3:
          unsigned_value(out, rng_() % 70000);
          break;
        case 4:
          unsigned_value(out, pick(5));
          break;
        default: {
          const std::uint32_t n = pick(4) == 0 ? 15 + pick(5) : pick(4);
          out.push_back(static_cast<char>(0xdc));
          big_endian(out, n, 2);
          for (std::uint32_t i = 0; i < n; ++i) unsigned_value(out, rng_());
          break;
        }
      }
    }
  }
  /// `v` in any of the encodings that read as a positive integer.
  void unsigned_value(std::string& out, std::uint64_t v) {
    const std::uint32_t type = pick(6);
    if (type == 0 && v < 0x80) {
      out.push_back(static_cast<char>(v));
    } else if (type == 1 && v < 0x80) {
      out.push_back(static_cast<char>(0xd0));  // int8, not negative
      out.push_back(static_cast<char>(v));
    } else if (type == 2 && v < 0x100) {
      out.push_back(static_cast<char>(0xcc));
      out.push_back(static_cast<char>(v));
    } else if (type == 3 && v <= 0x7fffffff) {
      out.push_back(static_cast<char>(0xd2));
      big_endian(out, v, 4);
    } else if (v <= 0xffffffff && pick(2) == 0) {
      out.push_back(static_cast<char>(0xce));
      big_endian(out, v, 4);
    } else {
      out.push_back(static_cast<char>(0xcf));
      big_endian(out, v, 8);
    }
  }
  /// A value a header field might take, or anything.
  void value(std::string& out, int depth) {
    switch (pick(6)) {
      case 0:
        integer(out);
        break;
      case 1:
        array(out, depth, 2);
        break;
      case 2: {
        out.push_back(static_cast<char>(0x92));
        integer(out);
        integer(out);
        break;
      }
      default:
        object(out, depth);
        break;
    }
  }
  void object(std::string& out, int depth) {
    const std::uint32_t what = depth > 4 ? pick(9) : pick(12);
    switch (what) {
      case 0:
      case 1:
      case 2:
        integer(out);
        break;
      case 3:
        out.push_back(static_cast<char>(0xc0 + 2 * pick(2) + (pick(2) == 0 ? 0 : 1)));
        break;
      case 4: {
        const std::size_t n = pick(3) == 0 ? 60 + pick(10) : pick(12);
        str(out, std::string(n, static_cast<char>('a' + pick(26))));
        break;
      }
      case 5:
        out.push_back(static_cast<char>(0xca));
        big_endian(out, rng_(), 4);
        break;
      case 6:
        out.push_back(static_cast<char>(0xcb));
        big_endian(out, rng_(), 8);
        break;
      case 7: {  // bin, mostly empty
        out.push_back(static_cast<char>(0xc4 + pick(3)));
        const std::uint32_t n = pick(3) == 0 ? 1 : 0;
        big_endian(out, n, 1 << (static_cast<unsigned char>(out.back()) - 0xc4));
        out.append(n, 'b');
        break;
      }
      case 8: {  // ext and fixext, and the unused 0xc1
        static const unsigned char types[] = {0xc7, 0xc8, 0xc9, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xc1};
        const unsigned char t = types[pick(9)];
        out.push_back(static_cast<char>(t));
        if (t >= 0xc7 && t <= 0xc9) big_endian(out, 0, 1 << (t - 0xc7));
        out.push_back('\x01');
        if (t >= 0xd4 && t <= 0xd8) out.append(std::size_t{1} << (t - 0xd4), 'e');
        break;
      }
      case 9:
        array(out, depth, pick(3) == 0 ? 15 + pick(6) : pick(4));
        break;
      default:
        map(out, depth, pick(9));
        break;
    }
  }
  std::mt19937 rng_;
};

TEST(WireHeaderReference, ReadsRandomMessagePackAsBefore) {
  verdicts.clear();
  RandomFrames frames(20261201);
  HeaderLimits tight;
  tight.max_payload_frames = 3;
  tight.max_federate_id_chars = 8;
  for (int i = 0; i < 60'000; ++i) {
    const std::string frame = frames.frame();
    expect_same(frame);
    if (i % 4 == 0) expect_same(frame, tight);
    if (HasFatalFailure()) return;
  }
  for (const DropReason reason :
       {DropReason::kNone, DropReason::kMalformedHeader, DropReason::kBadVersion,
        DropReason::kUnknownKind, DropReason::kTooManyFrames, DropReason::kHeaderTooLarge}) {
    EXPECT_GE(verdicts[reason], 50) << "verdict " << static_cast<int>(reason) << " too rare";
  }
}

TEST(WireHeaderReference, ReadsMutatedHeadersAsBefore) {
  verdicts.clear();
  std::mt19937 rng(7);
  const std::vector<WireHeader> headers = boundary_headers();
  for (int i = 0; i < 60'000; ++i) {
    std::string frame = encode_header(headers[rng() % headers.size()]);
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits && !frame.empty(); ++e) {
      const std::size_t at = rng() % frame.size();
      switch (rng() % 5) {
        case 0:
          frame[at] = static_cast<char>(rng());
          break;
        case 1:
          frame[at] = static_cast<char>(frame[at] ^ (1 << (rng() % 8)));
          break;
        case 2:
          frame.resize(at);
          break;
        case 3:
          frame.insert(at, 1, static_cast<char>(rng()));
          break;
        default:
          frame.erase(at, 1);
          break;
      }
    }
    expect_same(frame);
    if (HasFatalFailure()) return;
  }
  EXPECT_GE(verdicts[DropReason::kNone], 1000);
  EXPECT_GE(verdicts[DropReason::kMalformedHeader], 1000);
}

}  // namespace
}  // namespace tagflow::transport
