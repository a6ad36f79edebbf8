// DropReason: why a received message was refused. Every value up to kTagInPast names one check of
// transport/WIRE.md §3; the next two are the coordinator's (federation/PROTOCOL.md §1): a control
// frame that does not decode, and a JOIN it refused; then a node's: a value whose content
// its logic refused (nodes/node_metrics.hpp); the next two are connections cut by the
// ConnectionGuard (WIRE.md §3.1), each counted as one drop; then actor mode's: a TLS
// connection whose handshake failed (actors/tls_peers.hpp); the last is a connection the guard
// cut because the process as a whole held too much (WIRE.md §3.1), then one it cut because its
// socket had more connections than it allows (the service gateway's `max_clients`). The names are
// used as the `reason` label of the drop counters.
#pragma once

#include <cstdint>

namespace tagflow::transport {

enum class DropReason : std::uint8_t {
  kNone = 0,
  kNoFrames,
  kHeaderTooLarge,
  kMalformedHeader,
  kBadVersion,
  kUnknownKind,
  kTooManyFrames,
  kFrameCountMismatch,
  kSizeMismatch,
  kMessageTooLarge,
  kUnknownPeer,
  kUnknownPort,
  kTagInPast,
  kMalformedControl,
  kRefusedJoin,
  kRejectedByNode,
  kIncompleteOverCap,
  kUndeliveredConnection,
  kRefusedHandshake,
  kOverProcessBudget,
  kTooManyConnections,
};

inline constexpr int kDropReasonCount = 21;

/// A short snake_case name, stable, for logs and metric labels.
inline const char* drop_reason_name(DropReason reason) {
  switch (reason) {
    case DropReason::kNone:
      return "none";
    case DropReason::kNoFrames:
      return "no_frames";
    case DropReason::kHeaderTooLarge:
      return "header_too_large";
    case DropReason::kMalformedHeader:
      return "malformed_header";
    case DropReason::kBadVersion:
      return "bad_version";
    case DropReason::kUnknownKind:
      return "unknown_kind";
    case DropReason::kTooManyFrames:
      return "too_many_frames";
    case DropReason::kFrameCountMismatch:
      return "frame_count_mismatch";
    case DropReason::kSizeMismatch:
      return "size_mismatch";
    case DropReason::kMessageTooLarge:
      return "message_too_large";
    case DropReason::kUnknownPeer:
      return "unknown_peer";
    case DropReason::kUnknownPort:
      return "unknown_port";
    case DropReason::kTagInPast:
      return "tag_in_past";
    case DropReason::kMalformedControl:
      return "malformed_control";
    case DropReason::kRefusedJoin:
      return "refused_join";
    case DropReason::kRejectedByNode:
      return "rejected_by_node";
    case DropReason::kIncompleteOverCap:
      return "incomplete_over_cap";
    case DropReason::kUndeliveredConnection:
      return "undelivered_connection";
    case DropReason::kRefusedHandshake:
      return "refused_handshake";
    case DropReason::kOverProcessBudget:
      return "over_process_budget";
    case DropReason::kTooManyConnections:
      return "too_many_connections";
  }
  return "unknown";
}

}  // namespace tagflow::transport
