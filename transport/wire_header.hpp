// WireHeader: the first frame of every data message between federates (transport/WIRE.md).
//
// encode_header packs a header as a MessagePack map; decode_header parses untrusted bytes. The
// decoder never throws and never allocates on a size the peer merely claims: the frame is refused
// above HeaderLimits::max_header_bytes (plus max_inline_bytes: a version-4 frame carries its
// payloads after the map) before parsing, hard limits bound every array, map and string, and the
// payload sizes are checked against the caps later, by MessageValidator, before any payload is
// touched.
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "transport/drop_reason.hpp"
#include "transport/wire_tag.hpp"

namespace tagflow::transport {

/// The newest header version this build sends and reads (WIRE.md §2).
inline constexpr std::uint32_t kWireVersion = 4;
/// The oldest header version this build reads: 2, the same without `done`.
inline constexpr std::uint32_t kOldestWireVersion = 2;
/// The first header version with the optional `done` key (a COMPLETED carried by a value).
inline constexpr std::uint32_t kFirstDoneHeaderVersion = 3;
/// The first header version whose frame carries the payloads too, right after the map.
inline constexpr std::uint32_t kFirstInlineHeaderVersion = 4;

/// What a data message carries. Values are part of the wire format: never renumber.
enum class MessageKind : std::uint8_t {
  kPortValue = 1,   ///< a value written to an output port, delivered at `tag`
  kPortAbsent = 2,  ///< the port has no value at `tag` (no payload frames)
  /// The sender completed `tag`: nothing more comes from it sent at `tag` or before (port 0, no
  /// payload frames; not a data message for the grants' counts, WIRE.md §2).
  kCompleted = 3,
};

struct WireHeader {
  std::uint32_t version = kWireVersion;
  WireTag tag;
  std::string from;  ///< sending federate id
  std::uint32_t port = 0;
  MessageKind kind = MessageKind::kPortValue;
  std::vector<std::uint64_t> sizes;  ///< byte size of each payload frame, in order
  /// Version 3 and later, kinds 1 and 2 only: the sender completed this tag right after the
  /// message, as if a COMPLETED notice of it followed (WIRE.md §2).
  std::optional<WireTag> done;
};

struct HeaderLimits {
  /// The MessagePack map's bytes, at most.
  std::size_t max_header_bytes = 1024;
  std::size_t max_payload_frames = 16;
  std::size_t max_federate_id_chars = 64;
  /// Version 4: the payload bytes that may follow the map in the header's frame, at most. A
  /// sender puts a message's payloads there only when they total this or less.
  std::size_t max_inline_bytes = 16384;
};

/// The most bytes encode_header() writes for `header`.
[[nodiscard]] std::size_t header_bound(const WireHeader& header);
/// Writes `header`'s MessagePack map at `out`, which has room for header_bound(header) bytes;
/// returns the bytes written.
std::size_t encode_header_into(const WireHeader& header, char* out);
/// Packs `header` into its MessagePack map.
[[nodiscard]] std::string encode_header(const WireHeader& header);

struct DecodedHeader {
  DropReason error = DropReason::kNone;  ///< kNone when `header` is valid
  WireHeader header;
  /// The map's bytes: where, in a version-4 frame, the payloads start (the frame's size
  /// otherwise).
  std::size_t map_bytes = 0;
};

/// Parses one header frame. Returns an error (kHeaderTooLarge, kMalformedHeader,
/// kBadVersion, ...) for anything that is not a well-formed header of a known version. Bytes
/// after the map are refused (kMalformedHeader) unless the map is a valid version-4 header: they
/// are then its payloads (decode_header does not check them against `sizes`: the receiver does,
/// WIRE.md §3 step 5). A refused header keeps nothing, except after kBadVersion or
/// kTooManyFrames: then its tag, `from`, port and kind, each where it was well formed, so that
/// the receiver can name the message (the rest stays default).
[[nodiscard]] DecodedHeader decode_header(const void* data, std::size_t size,
                                          const HeaderLimits& limits = {});

}  // namespace tagflow::transport
