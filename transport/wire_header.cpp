#include "transport/wire_header.hpp"

#include <cstring>

namespace tagflow::transport {
namespace {

// The header is a MessagePack map (WIRE.md §2), written and read here byte by byte: no object
// zone, no exceptions, one walk over the bytes, nothing allocated but the header's own fields.
// Writing takes the smallest encoding of every number, as MessagePack's C++ packer does, so the
// bytes are the same; reading accepts exactly what `msgpack::unpack` with the limits below
// accepted, and gives the same verdict (both checked against that library in
// tests/transport/wire_header_reference_test.cpp).

constexpr std::uint32_t kFieldCount = 6;
constexpr std::uint32_t kMaxFieldCount = 7;  // with `done` (version 3)
constexpr unsigned kMaxDepth = 3;            // the map, an array in it, an array in that

/// Writes into a buffer sized for the largest encoding of the header.
class Writer {
 public:
  explicit Writer(char* at) : at_(at) {}
  [[nodiscard]] char* end() const { return at_; }
  void byte(unsigned v) { *at_++ = static_cast<char>(v); }
  void raw(const char* data, std::size_t n) {
    std::memcpy(at_, data, n);
    at_ += n;
  }
  void big_endian(unsigned type, std::uint64_t v, int bytes) {
    byte(type);
    for (int b = bytes - 1; b >= 0; --b) byte(static_cast<unsigned>((v >> (8 * b)) & 0xFFU));
  }
  void array(std::size_t n) {
    if (n < 16) {
      byte(0x90U | static_cast<unsigned>(n));
    } else if (n < 0x10000) {
      big_endian(0xdc, n, 2);
    } else {
      big_endian(0xdd, n, 4);
    }
  }
  void str(const char* data, std::size_t n) {
    if (n < 32) {
      byte(0xa0U | static_cast<unsigned>(n));
    } else if (n < 0x100) {
      big_endian(0xd9, n, 1);
    } else if (n < 0x10000) {
      big_endian(0xda, n, 2);
    } else {
      big_endian(0xdb, n, 4);
    }
    raw(data, n);
  }
  void unsigned_int(std::uint64_t v) {
    if (v < 0x80) {
      byte(static_cast<unsigned>(v));
    } else if (v < 0x100) {
      big_endian(0xcc, v, 1);
    } else if (v < 0x10000) {
      big_endian(0xcd, v, 2);
    } else if (v < 0x100000000ULL) {
      big_endian(0xce, v, 4);
    } else {
      big_endian(0xcf, v, 8);
    }
  }
  void signed_int(std::int64_t v) {
    const auto bits = static_cast<std::uint64_t>(v);
    if (v >= 0) {
      unsigned_int(bits);
    } else if (v >= -32) {
      byte(static_cast<unsigned>(bits & 0xFFU));  // negative fixint
    } else if (v >= -0x80) {
      big_endian(0xd0, bits, 1);
    } else if (v >= -0x8000) {
      big_endian(0xd1, bits, 2);
    } else if (v >= -0x80000000LL) {
      big_endian(0xd2, bits, 4);
    } else {
      big_endian(0xd3, bits, 8);
    }
  }
  void tag(const WireTag& t) {
    array(2);
    signed_int(t.time_ns());
    unsigned_int(t.microstep());
  }

 private:
  char* at_;
};

/// A key as it goes on the wire: a fixstr.
template <std::size_t N>
void key(Writer& out, const char (&name)[N]) {
  out.byte(0xa0U | static_cast<unsigned>(N - 1));
  out.raw(name, N - 1);
}

/// One MessagePack object as the header's fields read it.
struct Object {
  enum class Type { kPositive, kNegative, kStr, kArray, kMap, kOther };
  Type type = Type::kOther;
  std::uint64_t u64 = 0;      // kPositive
  std::int64_t i64 = 0;       // kNegative
  const char* str = nullptr;  // kStr
  std::uint64_t size = 0;     // kStr: bytes; kArray: elements; kMap: pairs
  std::size_t body = 0;       // kArray, kMap: offset of the first element
};

/// Reads MessagePack as `msgpack::unpack` does with the header's limits: arrays of at most
/// max_payload_frames + 2 elements, maps of at most 7 pairs, str of at most
/// max_federate_id_chars bytes, no bin or ext bytes, containers nested at most 3 deep (its stack
/// of objects, the root's slot included, at most 3 when a container starts).
class Reader {
 public:
  Reader(const void* data, std::size_t size, const HeaderLimits& limits)
      : p_(static_cast<const unsigned char*>(data)), n_(size), limits_(limits) {}

  /// Checks the object at `at` and everything in it, describes it in `o`, and moves `at` past
  /// it; false when the bytes are not what `msgpack::unpack` accepts there. `stack` counts the
  /// containers around it, plus one.
  bool next(std::size_t& at, unsigned stack, Object& o) const {
    o = Object{};
    if (at >= n_) return false;
    const unsigned type = p_[at++];
    if (type <= 0x7f) return positive(o, type);
    if (type >= 0xe0) return negative(o, static_cast<std::int8_t>(type));
    switch (type >> 4) {
      case 0x8:
        return container(at, stack, Object::Type::kMap, type & 0x0fU, o);
      case 0x9:
        return container(at, stack, Object::Type::kArray, type & 0x0fU, o);
      case 0xa:
      case 0xb:
        return string(at, type & 0x1fU, o);
      default:
        break;
    }
    std::uint64_t v = 0;
    switch (type) {
      case 0xc0:  // nil
      case 0xc2:  // false
      case 0xc3:  // true
        return true;
      case 0xca:
        return skip(at, 4);  // float 32
      case 0xcb:
        return skip(at, 8);  // float 64
      case 0xcc:
        return load(at, 1, v) && positive(o, v);
      case 0xcd:
        return load(at, 2, v) && positive(o, v);
      case 0xce:
        return load(at, 4, v) && positive(o, v);
      case 0xcf:
        return load(at, 8, v) && positive(o, v);
      // The int formats: a value ≥ 0 reads as a positive integer, as the C++ library reads it.
      case 0xd0:
        return load(at, 1, v) && signed_value(o, static_cast<std::int8_t>(v));
      case 0xd1:
        return load(at, 2, v) && signed_value(o, static_cast<std::int16_t>(v));
      case 0xd2:
        return load(at, 4, v) && signed_value(o, static_cast<std::int32_t>(v));
      case 0xd3:
        return load(at, 8, v) && signed_value(o, static_cast<std::int64_t>(v));
      case 0xd9:
        return load(at, 1, v) && string(at, v, o);
      case 0xda:
        return load(at, 2, v) && string(at, v, o);
      case 0xdb:
        return load(at, 4, v) && string(at, v, o);
      case 0xdc:
        return load(at, 2, v) && container(at, stack, Object::Type::kArray, v, o);
      case 0xdd:
        return load(at, 4, v) && container(at, stack, Object::Type::kArray, v, o);
      case 0xde:
        return load(at, 2, v) && container(at, stack, Object::Type::kMap, v, o);
      case 0xdf:
        return load(at, 4, v) && container(at, stack, Object::Type::kMap, v, o);
      case 0xc4:
        return load(at, 1, v) && v == 0;  // bin: not a byte allowed
      case 0xc5:
        return load(at, 2, v) && v == 0;
      case 0xc6:
        return load(at, 4, v) && v == 0;
      default:
        return false;  // ext (its type byte alone is over the limit of 0), and 0xc1
    }
  }

 private:
  static bool positive(Object& o, std::uint64_t v) {
    o.type = Object::Type::kPositive;
    o.u64 = v;
    return true;
  }
  static bool negative(Object& o, std::int64_t v) {
    o.type = Object::Type::kNegative;
    o.i64 = v;
    return true;
  }
  static bool signed_value(Object& o, std::int64_t v) {
    return v >= 0 ? positive(o, static_cast<std::uint64_t>(v)) : negative(o, v);
  }
  bool load(std::size_t& at, std::size_t bytes, std::uint64_t& v) const {
    if (bytes > n_ - at) return false;
    for (std::size_t b = 0; b < bytes; ++b) v = (v << 8) | p_[at + b];
    at += bytes;
    return true;
  }
  bool skip(std::size_t& at, std::uint64_t bytes) const {
    if (bytes > n_ - at) return false;
    at += static_cast<std::size_t>(bytes);
    return true;
  }
  bool string(std::size_t& at, std::uint64_t size, Object& o) const {
    if (size > limits_.max_federate_id_chars) return false;
    o.type = Object::Type::kStr;
    o.str = reinterpret_cast<const char*>(p_ + at);
    o.size = size;
    return skip(at, size);
  }
  bool container(std::size_t& at, unsigned stack, Object::Type type, std::uint64_t count,
                 Object& o) const {
    const bool map = type == Object::Type::kMap;
    if (count > (map ? kMaxFieldCount : limits_.max_payload_frames + 2) || stack > kMaxDepth) {
      return false;
    }
    o.type = type;
    o.size = count;
    o.body = at;
    Object inner;
    for (std::uint64_t i = 0; i < (map ? 2 * count : count); ++i) {
      if (!next(at, stack + 1, inner)) return false;
    }
    return true;
  }

  const unsigned char* p_;
  std::size_t n_;
  const HeaderLimits& limits_;
};

/// The field a key names, as a bit of `seen`; 0 for none.
unsigned field_of(const Object& key) {
  if (key.type != Object::Type::kStr) return 0;
  const auto is = [&key](const char* name) { return std::memcmp(key.str, name, key.size) == 0; };
  switch (key.size) {
    case 1:
      return is("v") ? 1U : 0U;
    case 3:
      return is("tag") ? 2U : 0U;
    case 4:
      if (is("from")) return 4U;
      if (is("port")) return 8U;
      if (is("kind")) return 16U;
      return is("done") ? 64U : 0U;
    case 5:
      return is("sizes") ? 32U : 0U;
    default:
      return 0;
  }
}

/// A `kind` WIRE.md §2 defines: a value, an ABSENT or a COMPLETED.
bool known_kind(std::uint64_t kind) {
  return kind == static_cast<std::uint64_t>(MessageKind::kPortValue) ||
         kind == static_cast<std::uint64_t>(MessageKind::kPortAbsent) ||
         kind == static_cast<std::uint64_t>(MessageKind::kCompleted);
}

bool read_unsigned(const Object& object, std::uint64_t max, std::uint64_t& out) {
  if (object.type != Object::Type::kPositive || object.u64 > max) return false;
  out = object.u64;
  return true;
}

bool read_tag(const Reader& reader, const Object& object, WireTag& out) {
  if (object.type != Object::Type::kArray || object.size != 2) return false;
  std::size_t at = object.body;
  Object time;
  Object micro;
  (void)reader.next(at, kMaxDepth, time);  // checked with the array
  (void)reader.next(at, kMaxDepth, micro);
  std::int64_t time_ns = 0;
  if (time.type == Object::Type::kPositive) {
    if (time.u64 > static_cast<std::uint64_t>(kForever.time_ns())) return false;
    time_ns = static_cast<std::int64_t>(time.u64);
  } else if (time.type == Object::Type::kNegative) {
    time_ns = time.i64;
  } else {
    return false;
  }
  std::uint64_t microstep = 0;
  if (!read_unsigned(micro, kForever.microstep(), microstep)) return false;
  out = WireTag(time_ns, static_cast<std::uint32_t>(microstep));
  return true;
}

/// Takes field `bit` from `value` into `header`; returns its problem, if any.
DropReason read_field(const Reader& reader, unsigned bit, const Object& value,
                      const HeaderLimits& limits, WireHeader& header) {
  std::uint64_t number = 0;
  switch (bit) {
    case 1U:
      if (!read_unsigned(value, 0xFFFFFFFFU, number)) return DropReason::kMalformedHeader;
      if (number < kOldestWireVersion || number > kWireVersion) return DropReason::kBadVersion;
      header.version = static_cast<std::uint32_t>(number);
      return DropReason::kNone;
    case 2U:
      return read_tag(reader, value, header.tag) ? DropReason::kNone : DropReason::kMalformedHeader;
    case 4U:
      if (value.type != Object::Type::kStr || value.size == 0 ||
          value.size > limits.max_federate_id_chars) {
        return DropReason::kMalformedHeader;
      }
      header.from.assign(value.str, value.size);
      return DropReason::kNone;
    case 8U:
      if (!read_unsigned(value, 0xFFFFFFFFU, number)) return DropReason::kMalformedHeader;
      header.port = static_cast<std::uint32_t>(number);
      return DropReason::kNone;
    case 16U:
      if (!read_unsigned(value, 0xFF, number)) return DropReason::kMalformedHeader;
      if (!known_kind(number)) return DropReason::kUnknownKind;
      header.kind = static_cast<MessageKind>(number);
      return DropReason::kNone;
    case 32U: {
      if (value.type != Object::Type::kArray) return DropReason::kMalformedHeader;
      if (value.size > limits.max_payload_frames) return DropReason::kTooManyFrames;
      header.sizes.resize(static_cast<std::size_t>(value.size));
      std::size_t at = value.body;
      Object element;
      for (std::uint64_t& size : header.sizes) {
        (void)reader.next(at, kMaxDepth, element);  // checked with the array
        if (!read_unsigned(element, ~std::uint64_t{0}, size)) return DropReason::kMalformedHeader;
      }
      return DropReason::kNone;
    }
    default: {  // 64U
      WireTag done;
      if (!read_tag(reader, value, done)) return DropReason::kMalformedHeader;
      header.done = done;
      return DropReason::kNone;
    }
  }
}

/// The header faults of WIRE.md §3 step 4 after which the sender is still named: a value or an
/// ABSENT in a version or with a frame count the receiver refuses, which the grants may count.
bool names_sender(DropReason fault) {
  return fault == DropReason::kBadVersion || fault == DropReason::kTooManyFrames;
}

/// The fields that name a message and its sender: tag, from, port and kind.
constexpr unsigned kNamingFields = 2U | 4U | 8U | 16U;

/// The header exactly as encode_header_into() writes it (its field order, numbers that are not
/// negative, the `from` id a fixstr or str 8), read in one pass with no second look at any field:
/// nearly every frame a federate receives. True when the frame is such a header that
/// read_header() below would take without a fault; `header` and `map_bytes` are then what it
/// would give. False for anything else (a fault, another order, another encoding), which
/// read_header() then reads from the start and judges.
class CanonicalReader {
 public:
  CanonicalReader(const void* data, std::size_t size)
      : p_(static_cast<const unsigned char*>(data)), n_(size) {}

  bool read(const HeaderLimits& limits, WireHeader& header, std::size_t& map_bytes) {
    if (n_ == 0 || (p_[0] != (0x80U | kFieldCount) && p_[0] != (0x80U | kMaxFieldCount))) {
      return false;
    }
    const bool with_done = p_[0] == (0x80U | kMaxFieldCount);
    at_ = 1;
    std::uint64_t version = 0;
    if (!key("v") || !unsigned_int(version) || version < kOldestWireVersion ||
        version > kWireVersion) {
      return false;
    }
    if (!key("tag") || !tag(header.tag) || !key("from") || !id(limits, header.from)) {
      return false;
    }
    std::uint64_t port = 0;
    std::uint64_t kind = 0;
    if (!key("port") || !unsigned_int(port) || port > 0xFFFFFFFFU || !key("kind") ||
        !unsigned_int(kind) || !known_kind(kind)) {
      return false;
    }
    std::uint64_t frames = 0;
    if (!key("sizes") || !array_head(frames) || frames > limits.max_payload_frames) return false;
    header.sizes.resize(static_cast<std::size_t>(frames));
    for (std::uint64_t& size : header.sizes) {
      if (!unsigned_int(size)) return false;
    }
    if (with_done) {
      // `done` came with version 3, and only on a value or an ABSENT.
      WireTag done;
      if (!key("done") || !tag(done) || version < kFirstDoneHeaderVersion ||
          kind == static_cast<std::uint64_t>(MessageKind::kCompleted)) {
        return false;
      }
      header.done = done;
    }
    // Payloads after the map: version 4 and later only.
    if (at_ != n_ && version < kFirstInlineHeaderVersion) return false;
    header.version = static_cast<std::uint32_t>(version);
    header.port = static_cast<std::uint32_t>(port);
    header.kind = static_cast<MessageKind>(kind);
    map_bytes = at_;
    return true;
  }

 private:
  /// The key `name` as key() above writes it: a fixstr head, then the name (a constant size:
  /// the compare is inlined).
  template <std::size_t N>
  bool key(const char (&name)[N]) {
    constexpr std::size_t n = N - 1;
    if (n >= n_ - at_ || p_[at_] != (0xa0U | n) || std::memcmp(p_ + at_ + 1, name, n) != 0) {
      return false;
    }
    at_ += 1 + n;
    return true;
  }
  /// A positive fixint or uint 8, 16, 32 or 64.
  bool unsigned_int(std::uint64_t& v) {
    if (at_ >= n_) return false;
    const unsigned type = p_[at_];
    if (type <= 0x7fU) {
      v = type;
      ++at_;
      return true;
    }
    if (type < 0xccU || type > 0xcfU) return false;
    const std::size_t bytes = std::size_t{1} << (type - 0xccU);
    if (bytes >= n_ - at_) return false;
    v = 0;
    for (std::size_t b = 1; b <= bytes; ++b) v = (v << 8) | p_[at_ + b];
    at_ += 1 + bytes;
    return true;
  }
  bool array_head(std::uint64_t& count) {
    if (at_ >= n_) return false;
    const unsigned type = p_[at_];
    if ((type & 0xf0U) == 0x90U) {
      count = type & 0x0fU;
      ++at_;
      return true;
    }
    if (type != 0xdcU || 2 >= n_ - at_) return false;
    count = (std::uint64_t{p_[at_ + 1]} << 8) | p_[at_ + 2];
    at_ += 3;
    return true;
  }
  bool tag(WireTag& out) {
    std::uint64_t time = 0;
    std::uint64_t microstep = 0;
    if (at_ >= n_ || p_[at_] != 0x92U) return false;
    ++at_;
    if (!unsigned_int(time) || time > static_cast<std::uint64_t>(kForever.time_ns()) ||
        !unsigned_int(microstep) || microstep > kForever.microstep()) {
      return false;
    }
    out = WireTag(static_cast<std::int64_t>(time), static_cast<std::uint32_t>(microstep));
    return true;
  }
  bool id(const HeaderLimits& limits, std::string& out) {
    if (at_ >= n_) return false;
    const unsigned type = p_[at_];
    std::size_t size = 0;
    std::size_t head = 1;
    if ((type & 0xe0U) == 0xa0U) {
      size = type & 0x1fU;
    } else if (type == 0xd9U && 1 < n_ - at_) {
      size = p_[at_ + 1];
      head = 2;
    } else {
      return false;
    }
    if (size == 0 || size > limits.max_federate_id_chars || size > n_ - at_ - head) return false;
    out.assign(reinterpret_cast<const char*>(p_ + at_ + head), size);
    at_ += head + size;
    return true;
  }

  const unsigned char* p_;
  std::size_t n_;
  std::size_t at_ = 0;
};

/// Reads the header's map, field after field: the first field's problem is the verdict, but
/// only once every byte of the frame proved well formed (a bad byte anywhere makes it malformed).
/// After a fault that names_sender(), the naming fields still well formed are read as well, so
/// that the receiver can name the message it refuses.
DropReason read_header(const void* data, std::size_t size, const HeaderLimits& limits,
                       WireHeader& header, std::size_t& map_bytes) {
  if (CanonicalReader(data, size).read(limits, header, map_bytes)) return DropReason::kNone;
  header = WireHeader{};  // nothing the fast reading took stays behind
  const Reader reader(data, size, limits);
  const unsigned char type = *static_cast<const unsigned char*>(data);
  std::size_t at = 1;
  std::uint64_t pairs = 0;
  if ((type & 0xf0U) == 0x80U) {
    pairs = type & 0x0fU;
  } else if (type == 0xde || type == 0xdf) {
    const std::size_t bytes = type == 0xde ? 2 : 4;
    if (size < 1 + bytes) return DropReason::kMalformedHeader;
    for (std::size_t b = 0; b < bytes; ++b) {
      pairs = (pairs << 8) | static_cast<const unsigned char*>(data)[1 + b];
    }
    at += bytes;
  } else {
    return DropReason::kMalformedHeader;  // not a map, whatever else it is
  }
  if (pairs > kMaxFieldCount) return DropReason::kMalformedHeader;
  DropReason first = DropReason::kNone;
  unsigned seen = 0;  // one bit per field, so duplicates are refused
  Object key;
  Object value;
  for (std::uint64_t i = 0; i < pairs; ++i) {
    if (!reader.next(at, 2, key) || !reader.next(at, 2, value)) {
      return DropReason::kMalformedHeader;
    }
    const unsigned bit = field_of(key);
    if (first != DropReason::kNone) {  // the rest is only checked, and names the sender
      if (names_sender(first) && (bit & kNamingFields) != 0 && (seen & bit) == 0 &&
          read_field(reader, bit, value, limits, header) == DropReason::kNone) {
        seen |= bit;
      }
      continue;
    }
    if (bit == 0) {
      first = DropReason::kMalformedHeader;
      continue;
    }
    first = read_field(reader, bit, value, limits, header);
    if (first == DropReason::kNone && (seen & bit) != 0) first = DropReason::kMalformedHeader;
    seen |= bit;
  }
  map_bytes = at;
  // Bytes after the map are a version-4 frame's payloads, and only behind a header with no
  // fault at all; anything else with them is malformed, whatever its fields say.
  const bool trailing = at != size;
  if (trailing && (first != DropReason::kNone || (seen & 63U) != 63U ||
                   header.version < kFirstInlineHeaderVersion)) {
    return DropReason::kMalformedHeader;
  }
  if (first != DropReason::kNone) return first;
  if ((seen & 63U) != 63U) return DropReason::kMalformedHeader;
  // `done` came with version 3, and only on a value or an ABSENT (a notice is its own `done`).
  if (header.done &&
      (header.version < kFirstDoneHeaderVersion || header.kind == MessageKind::kCompleted)) {
    return DropReason::kMalformedHeader;
  }
  return DropReason::kNone;
}

}  // namespace

std::size_t header_bound(const WireHeader& header) {
  // The largest encoding: 33 bytes of keys, v 5, two tags 2 × 15, port 5, kind 2, the map's and
  // the array's and the id's heads 1 + 5 + 5, every size 9.
  return 86 + header.from.size() + 9 * header.sizes.size();
}

std::string encode_header(const WireHeader& header) {
  std::string out(header_bound(header), '\0');
  out.resize(encode_header_into(header, out.data()));
  return out;
}

std::size_t encode_header_into(const WireHeader& header, char* out) {
  Writer w(out);
  w.byte(0x80U | (header.done ? kMaxFieldCount : kFieldCount));
  key(w, "v");
  w.unsigned_int(header.version);
  key(w, "tag");
  w.tag(header.tag);
  key(w, "from");
  w.str(header.from.data(), header.from.size());
  key(w, "port");
  w.unsigned_int(header.port);
  key(w, "kind");
  w.unsigned_int(static_cast<std::uint8_t>(header.kind));
  key(w, "sizes");
  w.array(header.sizes.size());
  for (std::uint64_t size : header.sizes) w.unsigned_int(size);
  if (header.done) {
    key(w, "done");
    w.tag(*header.done);
  }
  return static_cast<std::size_t>(w.end() - out);
}

DecodedHeader decode_header(const void* data, std::size_t size, const HeaderLimits& limits) {
  DecodedHeader result;
  if (size > limits.max_header_bytes + limits.max_inline_bytes) {
    result.error = DropReason::kHeaderTooLarge;
    return result;
  }
  if (size == 0 || data == nullptr) {
    result.error = DropReason::kMalformedHeader;
    return result;
  }
  result.error = read_header(data, size, limits, result.header, result.map_bytes);
  // Over the header's own cap, only a valid version-4 map within it, its payloads behind it, is
  // taken: any other such frame is too large, as before it was read.
  if (size > limits.max_header_bytes &&
      (result.error != DropReason::kNone || result.map_bytes > limits.max_header_bytes)) {
    result.error = DropReason::kHeaderTooLarge;
  }
  if (result.error != DropReason::kNone) {
    // Refused: only a refused version or frame count keeps what names the message (its sender,
    // port, tag and kind, where they were well formed); nothing else of it is taken.
    WireHeader named;
    if (names_sender(result.error)) {
      named.tag = result.header.tag;
      named.from = std::move(result.header.from);
      named.port = result.header.port;
      named.kind = result.header.kind;
    }
    result.header = std::move(named);
    result.map_bytes = 0;
  }
  return result;
}

}  // namespace tagflow::transport
