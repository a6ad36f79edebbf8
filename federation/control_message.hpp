// ControlMessage: one message of the coordinator protocol (federation/PROTOCOL.md).
//
// Every control message is a single ZeroMQ frame holding a MessagePack array whose first element
// is the ControlType. Only the fields a type uses are encoded (PROTOCOL.md lists them per type).
// decode_control never throws: malformed or oversized input yields std::nullopt (and
// decode_control_explained the reason), and every container is bounded before MessagePack
// allocates for it.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "transport/wire_tag.hpp"

namespace tagflow::coordinator {

using transport::ConnectionDelay;
using transport::WireTag;

/// The version this side speaks (PROTOCOL.md §2.5). The coordinator also accepts the ones before,
/// down to kOldestProtocolVersion: a version-3 federate gets START without the federates'
/// versions, and reads and sends data header 2 only (transport/WIRE.md §2); a federate before
/// kFirstFloorVersion gets no FLOOR; one before kFirstInlineVersion reads no data header 4; one
/// before kFirstFinishedVersion gets no FINISHED after its RESIGN; one before
/// kFirstFileDigestVersion gets no file digest in START.
inline constexpr std::uint32_t kProtocolVersion = 8;
inline constexpr std::uint32_t kOldestProtocolVersion = 3;
/// The first version whose START lists every federate's version and whose federates read data
/// header 3 (a value's `done`).
inline constexpr std::uint32_t kFirstDoneVersion = 4;
/// The first version the coordinator sends FLOOR (PROTOCOL.md §5.1).
inline constexpr std::uint32_t kFirstFloorVersion = 5;
/// The first version whose federates read data header 4 (payloads in the header's frame).
inline constexpr std::uint32_t kFirstInlineVersion = 6;
/// The first version the coordinator answers RESIGN with FINISHED (PROTOCOL.md §5 rule 6).
inline constexpr std::uint32_t kFirstFinishedVersion = 7;
/// The first version whose START carries the coordinator's cluster-file digest (PROTOCOL.md §2.3).
inline constexpr std::uint32_t kFirstFileDigestVersion = 8;
/// In-transit reports one LTC may carry (so that an LTC frame stays far below the frame limit).
inline constexpr std::size_t kMaxInTransitPerLtc = 128;

/// Values are part of the protocol: never renumber.
enum class ControlType : std::uint8_t {
  kJoin = 1,         ///< F→C: version, federate, upstreams, downstreams, data endpoint
  kRefused = 2,      ///< C→F: text (why the join was refused)
  kStart = 3,        ///< C→F: tag (start tag), endpoints of every federate, versions, file digest
  kNextEvent = 4,    ///< F→C: tag (NET), optionally reporting
  kCompleted = 5,    ///< F→C: tag (LTC), optionally in transit, the next tag and reporting
  kGrant = 6,        ///< C→F: tag (TAG), counts
  kProvisional = 7,  ///< C→F: tag (PTAG), counts
  kInTransit = 8,    ///< F→C: federate (destination), tag
  kStopRequest = 9,  ///< F→C proposes tag; C→F asks for a proposal at least tag
  kStopReply = 10,   ///< F→C: tag (its proposal)
  kStopGranted = 11,   ///< C→F: tag (the stop tag), proposal (the earliest proposal)
  kResign = 12,        ///< F→C: leaving cleanly after its last tag
  kHeartbeat = 13,     ///< both ways, on the heartbeat connection
  kFailed = 14,        ///< C→F: federate (who failed), text (why); the run is over
  kFinished = 15,      ///< C→F (version 7 on): RESIGN read; the last message to that federate
  kResult = 16,        ///< L→C: process (name), text (its result JSON, a binary field)
  kResultStored = 17,  ///< C→L: process (name), text (where the cluster's summary is written)
  kCheckpointWritten = 18,  ///< F→C: tag (the checkpoint's), part size, part checksum
  kReportRequest = 19,      ///< C→F: send your deferred LTC and next tag now (§3.9)
  kResumed = 20,  ///< F→C: tag (the resume tag): its part loaded, its messages in transit reported
  kTracePart = 21,  ///< L→C: process (file name), offset, total, text (the bytes, binary) (§8.4)
  kTraceStored = 22,   ///< C→L: process (file name), offset (bytes stored so far)
  kClockRequest = 23,  ///< L→C: what is your clock? (§8.4)
  kClock = 24,         ///< C→L: clock_ns (the coordinator's CLOCK_REALTIME in ns)
  kFloor = 25,         ///< C→F: tag: every stop proposal from now on is after it (§5.1)
};

/// The last type number a decoder accepts.
inline constexpr std::uint8_t kLastControlType = 25;

/// How a federate reports its waits from a NET or LTC on (PROTOCOL.md §3.9). Values are part of
/// the protocol.
enum class Reporting : std::uint8_t {
  kEveryWait = 0,           ///< reports every wait, and its waits may need the coordinator's grant
  kEveryWaitByNotices = 1,  ///< reports every wait; its upstreams' notices will end it
  kMayDefer = 2,            ///< may leave waits unreported: ask with REPORT_REQUEST
};

struct UpstreamLink {
  std::string federate;
  ConnectionDelay delay;  ///< minimum delay of the connections from `federate`
  friend bool operator==(const UpstreamLink& a, const UpstreamLink& b) {
    return a.federate == b.federate && a.delay == b.delay;
  }
};

struct ControlMessage {
  ControlType type = ControlType::kHeartbeat;
  WireTag tag;
  /// kStopGranted: the earliest stop tag proposed in the negotiation (the digest cutoff).
  WireTag proposal;
  std::string federate;
  std::string text;
  /// kResult, kResultStored: the name of the process (cluster file) whose result it is.
  std::string process;
  std::uint32_t version = kProtocolVersion;
  std::vector<UpstreamLink> upstreams;
  std::vector<std::string> downstreams;
  /// kJoin: one entry, this federate's data endpoint; kStart: every federate's.
  std::vector<std::pair<std::string, std::string>> endpoints;
  /// kStart to a version-4 federate: every federate's protocol version (empty: not sent).
  std::vector<std::pair<std::string, std::uint64_t>> versions;
  /// kStart to a version-8 federate: the coordinator's cluster-file digest (empty: not sent;
  /// sent only with `versions`).
  std::string file_digest;
  /// kCompleted: (destination, arrival tag) of every data message sent since the previous LTC
  /// and not reported by IN_TRANSIT (applied before the completed tag). At most
  /// kMaxInTransitPerLtc entries.
  std::vector<std::pair<std::string, WireTag>> in_transit;
  /// kCompleted: the federate's next tag as of this LTC (a NET sent with it, PROTOCOL.md §3.2).
  std::optional<WireTag> next;
  /// kNextEvent, kCompleted with a next tag: how the federate reports its waits from now on
  /// (PROTOCOL.md §3.9); a frame without the field says kEveryWait.
  Reporting reporting = Reporting::kEveryWait;
  /// kCheckpointWritten: the size in bytes and the checksum of the part the federate wrote.
  std::uint64_t part_bytes = 0;
  std::uint64_t part_checksum = 0;
  /// kTracePart: where the bytes in `text` go in the file and the file's whole size;
  /// kTraceStored: `offset` is how many bytes of the file are stored.
  std::uint64_t offset = 0;
  std::uint64_t total = 0;
  /// kClock: the coordinator's CLOCK_REALTIME when it answered, in ns.
  std::int64_t clock_ns = 0;
  /// kGrant/kProvisional: per upstream, how many data messages with a tag <= `tag` it has sent
  /// to this federate since the start.
  std::vector<std::pair<std::string, std::uint64_t>> counts;
};

struct ControlLimits {
  std::size_t max_frame_bytes = 64 * 1024;
  std::size_t max_federates = 1024;
  std::size_t max_string_chars = 256;
};

/// A decoded frame, or why it is not one: `type` is the type the frame names when it names one
/// (also for a frame whose fields are wrong, so that the coordinator can answer a malformed JOIN
/// with REFUSED); `error` is a short reason naming the field ("JOIN: upstreams is not a list of
/// [id, delay in integer ns >= 0 or nil]"). It may hold text of the frame: escape it for logs.
struct ControlDecodeResult {
  std::optional<ControlMessage> message;
  std::optional<ControlType> type;
  std::string error;  ///< empty when `message` is set
};

[[nodiscard]] std::string encode_control(const ControlMessage& message);
[[nodiscard]] ControlDecodeResult decode_control_explained(const void* data, std::size_t size,
                                                           const ControlLimits& limits = {});
[[nodiscard]] std::optional<ControlMessage> decode_control(const void* data, std::size_t size,
                                                           const ControlLimits& limits = {});

/// Short upper-case name ("NET", "TAG", ...) for logs.
[[nodiscard]] const char* control_type_name(ControlType type);
/// The tag a message carries (NET, LTC, TAG, PTAG, START, ...), or NEVER for one without a tag
/// (JOIN, HEARTBEAT, RESIGN, FAILED, ...): what a trace records with it.
[[nodiscard]] WireTag carried_tag(const ControlMessage& message);

// Shorthands for the messages built most often.
ControlMessage make_tag_message(ControlType type, const WireTag& tag);

}  // namespace tagflow::coordinator
