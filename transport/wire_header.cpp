#include "transport/wire_header.hpp"

#include <cstring>
#include <exception>

#include <msgpack.hpp>

namespace tagflow::transport {
namespace {

constexpr std::uint32_t kFieldCount = 6;
constexpr std::uint32_t kMaxFieldCount = 7;  // with `done` (version 3)

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

}  // namespace

std::string encode_header(const WireHeader& header) {
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

DecodedHeader decode_header(const void* data, std::size_t size, const HeaderLimits& limits) {
  DecodedHeader result;
  if (size > limits.max_header_bytes) {
    result.error = DropReason::kHeaderTooLarge;
    return result;
  }
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
    if (offset != size || handle.get().type != msgpack::type::MAP) {
      result.error = DropReason::kMalformedHeader;
      return result;
    }
    result.error = read_fields(handle.get().via.map, limits, result.header);
  } catch (const std::exception&) {
    result.error = DropReason::kMalformedHeader;
  }
  if (result.error != DropReason::kNone) result.header = WireHeader{};
  return result;
}

}  // namespace tagflow::transport
