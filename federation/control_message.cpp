#include "federation/control_message.hpp"

#include <exception>

#include <msgpack.hpp>

namespace tagflow::coordinator {
namespace {

using Packer = msgpack::packer<msgpack::sbuffer>;

void pack_string(Packer& packer, const std::string& text) {
  packer.pack_str(static_cast<std::uint32_t>(text.size()));
  packer.pack_str_body(text.data(), static_cast<std::uint32_t>(text.size()));
}

/// A reason for a person (REFUSED, FAILED, RESULT_STORED): cut to what a receiver reads, a string
/// of at most ControlLimits::max_string_chars bytes (PROTOCOL.md §1), so that a long one (a
/// refusal listing every federate) still arrives, ending in kCutMark.
void pack_text(Packer& packer, const std::string& text) {
  constexpr std::size_t kMax = ControlLimits{}.max_string_chars;
  static const std::string kCutMark = "...(cut)";
  if (text.size() <= kMax) {
    pack_string(packer, text);
    return;
  }
  pack_string(packer, text.substr(0, kMax - kCutMark.size()) + kCutMark);
}

void pack_tag(Packer& packer, const WireTag& tag) {
  packer.pack_array(2);
  packer.pack_int64(tag.time_ns());
  packer.pack_uint32(tag.microstep());
}

/// [[name, second]...], each second packed by `pack_second` (what read_pairs() reads).
template <class Pairs, class PackSecond>
void pack_pairs(Packer& packer, const Pairs& pairs, PackSecond pack_second) {
  packer.pack_array(static_cast<std::uint32_t>(pairs.size()));
  for (const auto& [name, second] : pairs) {
    packer.pack_array(2);
    pack_string(packer, name);
    pack_second(second);
  }
}

/// The array of `fields` elements a message is, and its first element: the type.
void pack_head(Packer& packer, std::uint32_t fields, ControlType type) {
  packer.pack_array(fields);
  packer.pack_uint8(static_cast<std::uint8_t>(type));
}

/// [JOIN, version, federate, [[upstream, delay | nil]...], [downstream...], endpoint]
void pack_join(Packer& packer, const ControlMessage& m) {
  pack_head(packer, 6, m.type);
  packer.pack_uint32(m.version);
  pack_string(packer, m.federate);
  packer.pack_array(static_cast<std::uint32_t>(m.upstreams.size()));
  for (const UpstreamLink& link : m.upstreams) {
    packer.pack_array(2);
    pack_string(packer, link.federate);
    if (link.delay.has_value()) {
      packer.pack_int64(*link.delay);
    } else {
      packer.pack_nil();
    }
  }
  packer.pack_array(static_cast<std::uint32_t>(m.downstreams.size()));
  for (const std::string& id : m.downstreams) pack_string(packer, id);
  pack_string(packer, m.endpoints.empty() ? std::string() : m.endpoints.front().second);
}

/// [START, tag, [[federate, endpoint]...]]
/// [START, tag, endpoints] or [START, tag, endpoints, versions] (versions only when there are)
/// or [START, tag, endpoints, versions, file digest] (the digest only with versions).
void pack_start(Packer& packer, const ControlMessage& m) {
  const bool digest = !m.versions.empty() && !m.file_digest.empty();
  pack_head(packer, m.versions.empty() ? 3 : digest ? 5 : 4, m.type);
  pack_tag(packer, m.tag);
  pack_pairs(packer, m.endpoints,
             [&](const std::string& endpoint) { pack_string(packer, endpoint); });
  if (!m.versions.empty()) {
    pack_pairs(packer, m.versions, [&](std::uint64_t version) { packer.pack_uint64(version); });
  }
  if (digest) pack_string(packer, m.file_digest);
}

/// [LTC, tag] or [LTC, tag, in_transit] or [LTC, tag, in_transit, next] or
/// [LTC, tag, in_transit, next, reporting] (reporting only when it is not kEveryWait).
void pack_completed(Packer& packer, const ControlMessage& m) {
  const bool reports_field = m.reporting != Reporting::kEveryWait;
  pack_head(packer, m.next ? (reports_field ? 5 : 4) : m.in_transit.empty() ? 2 : 3, m.type);
  pack_tag(packer, m.tag);
  if (!m.in_transit.empty() || m.next) {
    pack_pairs(packer, m.in_transit, [&](const WireTag& tag) { pack_tag(packer, tag); });
  }
  if (m.next) pack_tag(packer, *m.next);
  if (m.next && reports_field) packer.pack_uint8(static_cast<std::uint8_t>(m.reporting));
}

/// [TAG or PTAG, tag, [[federate, count]...]]
void pack_grant(Packer& packer, const ControlMessage& m) {
  pack_head(packer, 3, m.type);
  pack_tag(packer, m.tag);
  pack_pairs(packer, m.counts, [&](std::uint64_t count) { packer.pack_uint64(count); });
}

bool read_string(const msgpack::object& object, std::string& out) {
  if (object.type != msgpack::type::STR) return false;
  out.assign(object.via.str.ptr, object.via.str.size);
  return true;
}

/// A binary field (RESULT's JSON: larger than a string may be, bounded by the frame).
bool read_binary(const msgpack::object& object, std::string& out) {
  if (object.type != msgpack::type::BIN) return false;
  out.assign(object.via.bin.ptr, object.via.bin.size);
  return true;
}

bool read_u64(const msgpack::object& object, std::uint64_t& out) {
  if (object.type != msgpack::type::POSITIVE_INTEGER) return false;
  out = object.via.u64;
  return true;
}

bool read_i64(const msgpack::object& object, std::int64_t& out) {
  if (object.type == msgpack::type::NEGATIVE_INTEGER) {
    out = object.via.i64;
    return true;
  }
  if (object.type != msgpack::type::POSITIVE_INTEGER || object.via.u64 > INT64_MAX) return false;
  out = static_cast<std::int64_t>(object.via.u64);
  return true;
}

bool read_reporting(const msgpack::object& object, Reporting& out) {
  if (object.type != msgpack::type::POSITIVE_INTEGER ||
      object.via.u64 > static_cast<std::uint64_t>(Reporting::kMayDefer)) {
    return false;
  }
  out = static_cast<Reporting>(object.via.u64);
  return true;
}

bool read_tag(const msgpack::object& object, WireTag& out) {
  if (object.type != msgpack::type::ARRAY || object.via.array.size != 2) return false;
  std::int64_t time_ns = 0;
  std::uint64_t microstep = 0;
  if (!read_i64(object.via.array.ptr[0], time_ns)) return false;
  if (!read_u64(object.via.array.ptr[1], microstep) || microstep > UINT32_MAX) return false;
  out = WireTag(time_ns, static_cast<std::uint32_t>(microstep));
  return true;
}

/// Reads an array of 2-element arrays [string, second] with `read_second`.
template <class Second, class Read>
bool read_pairs(const msgpack::object& object, std::vector<std::pair<std::string, Second>>& out,
                Read read_second) {
  if (object.type != msgpack::type::ARRAY) return false;
  for (std::uint32_t i = 0; i < object.via.array.size; ++i) {
    const msgpack::object& item = object.via.array.ptr[i];
    if (item.type != msgpack::type::ARRAY || item.via.array.size != 2) return false;
    std::pair<std::string, Second> pair;
    if (!read_string(item.via.array.ptr[0], pair.first)) return false;
    if (!read_second(item.via.array.ptr[1], pair.second)) return false;
    out.push_back(std::move(pair));
  }
  return true;
}

bool read_delay(const msgpack::object& object, ConnectionDelay& out) {
  if (object.type == msgpack::type::NIL) {
    out = std::nullopt;
    return true;
  }
  std::int64_t delay = 0;
  if (!read_i64(object, delay) || delay < 0) return false;
  out = delay;
  return true;
}

/// Reads JOIN's fields; on a problem, returns false with `error` naming the field.
bool read_join(const msgpack::object* field, std::uint32_t count, ControlMessage& m,
               std::string& error) {
  if (count != 6) {
    error = "expected 6 elements [1, version, id, upstreams, downstreams, endpoint], got " +
            std::to_string(count);
    return false;
  }
  std::uint64_t version = 0;
  if (!read_u64(field[1], version) || version > UINT32_MAX) {
    error = "version is not an unsigned 32-bit integer";
    return false;
  }
  m.version = static_cast<std::uint32_t>(version);
  if (!read_string(field[2], m.federate)) {
    error = "federate id is not a string";
    return false;
  }
  std::vector<std::pair<std::string, ConnectionDelay>> upstreams;
  if (!read_pairs(field[3], upstreams, read_delay)) {
    error = "upstreams is not a list of [id, delay in integer ns >= 0 or nil]";
    return false;
  }
  for (auto& [id, delay] : upstreams) m.upstreams.push_back({id, delay});
  bool downstreams_ok = field[4].type == msgpack::type::ARRAY;
  for (std::uint32_t i = 0; downstreams_ok && i < field[4].via.array.size; ++i) {
    std::string id;
    downstreams_ok = read_string(field[4].via.array.ptr[i], id);
    m.downstreams.push_back(std::move(id));
  }
  if (!downstreams_ok) {
    error = "downstreams is not a list of ids";
    return false;
  }
  std::string endpoint;
  if (!read_string(field[5], endpoint)) {
    error = "data endpoint is not a string";
    return false;
  }
  m.endpoints.emplace_back(m.federate, std::move(endpoint));
  return true;
}

/// The fields each type carries, for the reason of a refusal (PROTOCOL.md §1).
const char* field_layout(ControlType type) {
  switch (type) {
    case ControlType::kJoin:
      return "[1, version, id, upstreams, downstreams, endpoint]";
    case ControlType::kRefused:
      return "[2, text]";
    case ControlType::kStart:
      return "[3, tag, [[id, endpoint]...]] or [3, tag, [[id, endpoint]...], [[id, version]...]] "
             "or [3, tag, [[id, endpoint]...], [[id, version]...], file digest]";
    case ControlType::kCompleted:
      return "[5, tag] or [5, tag, [[destination, tag]...]] or [5, tag, [[destination, tag]...], "
             "next tag] or [5, tag, [[destination, tag]...], next tag, reporting (0..2)]";
    case ControlType::kNextEvent:
      return "[4, tag] or [4, tag, reporting (0..2)] with tag = [time_ns (int64), microstep "
             "(uint32)]";
    case ControlType::kGrant:
      return "[6, tag, [[upstream, count]...]]";
    case ControlType::kProvisional:
      return "[7, tag, [[upstream, count]...]]";
    case ControlType::kInTransit:
      return "[8, destination, tag]";
    case ControlType::kStopGranted:
      return "[11, tag] or [11, tag, tag]";
    case ControlType::kFailed:
      return "[14, id, text]";
    case ControlType::kResult:
      return "[16, process, result JSON as binary]";
    case ControlType::kResultStored:
      return "[17, process, text]";
    case ControlType::kCheckpointWritten:
      return "[18, tag, part bytes, part checksum]";
    case ControlType::kTracePart:
      return "[21, file name, offset, total size, bytes as binary]";
    case ControlType::kTraceStored:
      return "[22, file name, bytes stored]";
    case ControlType::kClockRequest:
      return "[23]";
    case ControlType::kClock:
      return "[24, time_ns (int64)]";
    case ControlType::kResign:
      return "[12]";
    case ControlType::kHeartbeat:
      return "[13]";
    case ControlType::kFinished:
      return "[15]";
    case ControlType::kReportRequest:
      return "[19]";
    case ControlType::kStopRequest:
      return "[9, tag] with tag = [time_ns (int64), microstep (uint32)]";
    case ControlType::kStopReply:
      return "[10, tag] with tag = [time_ns (int64), microstep (uint32)]";
    case ControlType::kResumed:
      return "[20, tag] with tag = [time_ns (int64), microstep (uint32)]";
    case ControlType::kFloor:
      return "[25, tag] with tag = [time_ns (int64), microstep (uint32)]";
  }
  return "[type, ...]";  // not reached: every type has its case
}

/// The type a frame announces in its first two bytes (a MessagePack array of up to 15 elements
/// whose first is a positive fixint 1..kLastControlType), for frames too malformed to unpack.
std::optional<ControlType> announced_type(const unsigned char* bytes, std::size_t size) {
  if (size < 2 || (bytes[0] & 0xf0) != 0x90 || bytes[1] < 1 || bytes[1] > kLastControlType) {
    return std::nullopt;
  }
  return static_cast<ControlType>(bytes[1]);
}

bool read_fields(const msgpack::object* field, std::uint32_t count, ControlMessage& m,
                 std::string& error) {
  switch (m.type) {
    case ControlType::kJoin:
      return read_join(field, count, m, error);
    case ControlType::kRefused:
      return count == 2 && read_string(field[1], m.text);
    case ControlType::kStart:
      return (count >= 3 && count <= 5) && read_tag(field[1], m.tag) &&
             read_pairs(field[2], m.endpoints, read_string) &&
             (count == 3 || (read_pairs(field[3], m.versions, read_u64) && !m.versions.empty())) &&
             (count < 5 || (read_string(field[4], m.file_digest) && !m.file_digest.empty()));
    case ControlType::kCompleted:
      if (count == 4 || count == 5) {
        m.next.emplace();
        return read_tag(field[1], m.tag) && read_pairs(field[2], m.in_transit, read_tag) &&
               read_tag(field[3], *m.next) && (count == 4 || read_reporting(field[4], m.reporting));
      }
      if (count == 3) {
        return read_tag(field[1], m.tag) && read_pairs(field[2], m.in_transit, read_tag);
      }
      return count == 2 && read_tag(field[1], m.tag);
    case ControlType::kNextEvent:
      return (count == 2 || count == 3) && read_tag(field[1], m.tag) &&
             (count == 2 || read_reporting(field[2], m.reporting));
    case ControlType::kStopRequest:
    case ControlType::kStopReply:
    case ControlType::kResumed:
    case ControlType::kFloor:
      return count == 2 && read_tag(field[1], m.tag);
    case ControlType::kStopGranted:
      if (count == 2 && read_tag(field[1], m.tag)) {
        m.proposal = m.tag;  // sent without the earliest proposal
        return true;
      }
      return count == 3 && read_tag(field[1], m.tag) && read_tag(field[2], m.proposal);
    case ControlType::kGrant:
    case ControlType::kProvisional:
      return count == 3 && read_tag(field[1], m.tag) && read_pairs(field[2], m.counts, read_u64);
    case ControlType::kInTransit:
      return count == 3 && read_string(field[1], m.federate) && read_tag(field[2], m.tag);
    case ControlType::kResign:
    case ControlType::kHeartbeat:
    case ControlType::kFinished:
    case ControlType::kReportRequest:
      return count == 1;
    case ControlType::kFailed:
      return count == 3 && read_string(field[1], m.federate) && read_string(field[2], m.text);
    case ControlType::kResult:
      return count == 3 && read_string(field[1], m.process) && read_binary(field[2], m.text);
    case ControlType::kResultStored:
      return count == 3 && read_string(field[1], m.process) && read_string(field[2], m.text);
    case ControlType::kCheckpointWritten:
      return count == 4 && read_tag(field[1], m.tag) && read_u64(field[2], m.part_bytes) &&
             read_u64(field[3], m.part_checksum);
    case ControlType::kTracePart:
      return count == 5 && read_string(field[1], m.process) && read_u64(field[2], m.offset) &&
             read_u64(field[3], m.total) && read_binary(field[4], m.text);
    case ControlType::kTraceStored:
      return count == 3 && read_string(field[1], m.process) && read_u64(field[2], m.offset);
    case ControlType::kClockRequest:
      return count == 1;
    case ControlType::kClock:
      return count == 2 && read_i64(field[1], m.clock_ns);
  }
  return false;
}

}  // namespace

std::string encode_control(const ControlMessage& m) {
  msgpack::sbuffer buffer(64);
  Packer packer(buffer);
  const ControlType type = m.type;
  const bool reports_field = m.reporting != Reporting::kEveryWait;  // absent: kEveryWait
  switch (type) {
    case ControlType::kJoin:
      pack_join(packer, m);
      break;
    case ControlType::kRefused:
      pack_head(packer, 2, type);
      pack_text(packer, m.text);
      break;
    case ControlType::kStart:
      pack_start(packer, m);
      break;
    case ControlType::kCompleted:
      pack_completed(packer, m);
      break;
    case ControlType::kNextEvent:
      pack_head(packer, reports_field ? 3 : 2, type);
      pack_tag(packer, m.tag);
      if (reports_field) packer.pack_uint8(static_cast<std::uint8_t>(m.reporting));
      break;
    case ControlType::kStopRequest:
    case ControlType::kStopReply:
    case ControlType::kResumed:
    case ControlType::kFloor:
      pack_head(packer, 2, type);
      pack_tag(packer, m.tag);
      break;
    case ControlType::kStopGranted:
      pack_head(packer, 3, type);
      pack_tag(packer, m.tag);
      pack_tag(packer, m.proposal);
      break;
    case ControlType::kGrant:
    case ControlType::kProvisional:
      pack_grant(packer, m);
      break;
    case ControlType::kInTransit:
      pack_head(packer, 3, type);
      pack_string(packer, m.federate);
      pack_tag(packer, m.tag);
      break;
    case ControlType::kResign:
    case ControlType::kHeartbeat:
    case ControlType::kFinished:
    case ControlType::kReportRequest:
      pack_head(packer, 1, type);
      break;
    case ControlType::kFailed:
      pack_head(packer, 3, type);
      pack_string(packer, m.federate);
      pack_text(packer, m.text);
      break;
    case ControlType::kResult:
      pack_head(packer, 3, type);
      pack_string(packer, m.process);
      packer.pack_bin(static_cast<std::uint32_t>(m.text.size()));
      packer.pack_bin_body(m.text.data(), static_cast<std::uint32_t>(m.text.size()));
      break;
    case ControlType::kResultStored:
      pack_head(packer, 3, type);
      pack_string(packer, m.process);
      pack_text(packer, m.text);
      break;
    case ControlType::kCheckpointWritten:
      pack_head(packer, 4, type);
      pack_tag(packer, m.tag);
      packer.pack_uint64(m.part_bytes);
      packer.pack_uint64(m.part_checksum);
      break;
    case ControlType::kTracePart:
      pack_head(packer, 5, type);
      pack_string(packer, m.process);
      packer.pack_uint64(m.offset);
      packer.pack_uint64(m.total);
      packer.pack_bin(static_cast<std::uint32_t>(m.text.size()));
      packer.pack_bin_body(m.text.data(), static_cast<std::uint32_t>(m.text.size()));
      break;
    case ControlType::kTraceStored:
      pack_head(packer, 3, type);
      pack_string(packer, m.process);
      packer.pack_uint64(m.offset);
      break;
    case ControlType::kClockRequest:
      pack_head(packer, 1, type);
      break;
    case ControlType::kClock:
      pack_head(packer, 2, type);
      packer.pack_int64(m.clock_ns);
      break;
  }
  return std::string(buffer.data(), buffer.size());
}

ControlDecodeResult decode_control_explained(const void* data, std::size_t size,
                                             const ControlLimits& limits) {
  ControlDecodeResult result;
  if (data == nullptr || size == 0) {
    result.error = "empty frame";
    return result;
  }
  const auto* bytes = static_cast<const unsigned char*>(data);
  result.type = announced_type(bytes, size);
  if (size > limits.max_frame_bytes) {
    result.error = "frame of " + std::to_string(size) + " bytes is over the limit of " +
                   std::to_string(limits.max_frame_bytes);
    return result;
  }
  // Binary fields (RESULT's JSON) are bounded by the frame limit alone.
  const msgpack::unpack_limit unpack_limits(limits.max_federates, 0, limits.max_string_chars,
                                            limits.max_frame_bytes, 0, 4);
  try {
    std::size_t offset = 0;
    const msgpack::object_handle handle = msgpack::unpack(static_cast<const char*>(data), size,
                                                          offset, nullptr, nullptr, unpack_limits);
    const msgpack::object& root = handle.get();
    if (root.type != msgpack::type::ARRAY || root.via.array.size == 0) {
      result.error = "not a MessagePack array [type, fields...]";
      return result;
    }
    if (offset != size) {
      result.error = std::to_string(size - offset) + " bytes after the message";
      return result;
    }
    std::uint64_t type = 0;
    if (!read_u64(root.via.array.ptr[0], type) || type < 1 || type > kLastControlType) {
      result.type.reset();
      result.error =
          "the first element is no message type (1.." + std::to_string(kLastControlType) + ")";
      return result;
    }
    ControlMessage message;
    message.type = static_cast<ControlType>(type);
    result.type = message.type;
    std::string detail;
    if (!read_fields(root.via.array.ptr, root.via.array.size, message, detail)) {
      result.error =
          std::string(control_type_name(message.type)) + ": " +
          (detail.empty() ? std::string("expected ") + field_layout(message.type) : detail);
      return result;
    }
    result.message = std::move(message);
  } catch (const std::exception& e) {
    // The unpacker's limits: an over-long string or list, too deep a nesting, or bad bytes.
    result.error = std::string(result.type ? control_type_name(*result.type) : "frame") +
                   ": not MessagePack within the limits (strings up to " +
                   std::to_string(limits.max_string_chars) + " bytes, lists up to " +
                   std::to_string(limits.max_federates) + " entries, nesting up to 4): " + e.what();
  }
  return result;
}

std::optional<ControlMessage> decode_control(const void* data, std::size_t size,
                                             const ControlLimits& limits) {
  return decode_control_explained(data, size, limits).message;
}

WireTag carried_tag(const ControlMessage& message) {
  switch (message.type) {
    case ControlType::kJoin:
    case ControlType::kRefused:
    case ControlType::kResign:
    case ControlType::kHeartbeat:
    case ControlType::kFailed:
    case ControlType::kFinished:
    case ControlType::kReportRequest:
    case ControlType::kResult:
    case ControlType::kResultStored:
    case ControlType::kTracePart:
    case ControlType::kTraceStored:
    case ControlType::kClockRequest:
    case ControlType::kClock:
      return transport::kNever;
    default:
      return message.tag;
  }
}

const char* control_type_name(ControlType type) {
  switch (type) {
    case ControlType::kJoin:
      return "JOIN";
    case ControlType::kRefused:
      return "REFUSED";
    case ControlType::kStart:
      return "START";
    case ControlType::kNextEvent:
      return "NET";
    case ControlType::kCompleted:
      return "LTC";
    case ControlType::kGrant:
      return "TAG";
    case ControlType::kProvisional:
      return "PTAG";
    case ControlType::kInTransit:
      return "IN_TRANSIT";
    case ControlType::kStopRequest:
      return "STOP_REQUEST";
    case ControlType::kStopReply:
      return "STOP_REPLY";
    case ControlType::kStopGranted:
      return "STOP_GRANTED";
    case ControlType::kResign:
      return "RESIGN";
    case ControlType::kHeartbeat:
      return "HEARTBEAT";
    case ControlType::kFailed:
      return "FAILED";
    case ControlType::kFinished:
      return "FINISHED";
    case ControlType::kResult:
      return "RESULT";
    case ControlType::kResultStored:
      return "RESULT_STORED";
    case ControlType::kCheckpointWritten:
      return "CHECKPOINT_WRITTEN";
    case ControlType::kReportRequest:
      return "REPORT_REQUEST";
    case ControlType::kResumed:
      return "RESUMED";
    case ControlType::kTracePart:
      return "TRACE_PART";
    case ControlType::kTraceStored:
      return "TRACE_STORED";
    case ControlType::kClockRequest:
      return "CLOCK_REQUEST";
    case ControlType::kClock:
      return "CLOCK";
    case ControlType::kFloor:
      return "FLOOR";
  }
  return "?";
}

ControlMessage make_tag_message(ControlType type, const WireTag& tag) {
  ControlMessage message;
  message.type = type;
  message.tag = tag;
  return message;
}

}  // namespace tagflow::coordinator
