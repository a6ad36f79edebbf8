// Sending and receiving data messages over ZeroMQ (WIRE.md §1–§3).
//
// A data message is multipart: [header][payload 0]...[payload n-1] in header versions 2 and 3,
// one frame [header map + payload bytes] in version 4. For the former send_wire_message hands
// each payload to ZeroMQ without copying it (zmq_msg_init_data): the Payload's owner is kept
// alive until ZeroMQ has finished with the bytes, on whichever I/O thread that happens; for the
// latter it copies the payloads behind the map, one frame instead of n + 1 (small payloads:
// ZeroMQ's per-frame work costs more than the copy). Receivers use a ROUTER socket; senders a
// DEALER whose routing id is their federate id (the peer name used for drop counting).
// receive_wire_message reads one whole multipart message, decodes and validates it, and returns
// either the message or the reason it was dropped (already counted); it never throws on bad
// bytes. take_payload turns the payloads of a received message into one Payload that keeps the
// frame ZeroMQ received (no copy when there is one frame, as every tagflow sender sends, or the
// payloads came inline). Sockets are not thread-safe: call these from the socket's own thread.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "transport/message_validator.hpp"
#include "transport/payload.hpp"
#include "transport/peer_drop_counters.hpp"
#include "transport/wire_header.hpp"

namespace tagflow::transport {

/// A frame holding `payload`'s bytes without a copy: the payload is kept alive until ZeroMQ has
/// sent it.
zmq::message_t frame_of(const Payload& payload);

/// Sends header + payloads as one multipart message; header.sizes is filled from `payloads`. A
/// version-4 header takes the payloads into its own frame (copied after the map; the caller
/// keeps them within HeaderLimits::max_inline_bytes); earlier versions send each payload as a
/// frame of its own, without a copy. Returns false when the socket would block (with
/// zmq::send_flags::dontwait) and nothing was sent. Throws zmq::error_t on socket errors.
bool send_wire_message(zmq::socket_t& socket, WireHeader header,
                       const std::vector<Payload>& payloads,
                       zmq::send_flags flags = zmq::send_flags::none);
/// The same for `count` payloads at `payloads` (none: nullptr, 0), with the caller's header,
/// whose sizes it overwrites: a sender that keeps one header for its messages allocates nothing
/// here once the header's sizes have room.
bool send_wire_message(zmq::socket_t& socket, WireHeader& header, const Payload* payloads,
                       std::size_t count, zmq::send_flags flags = zmq::send_flags::none);

/// Sets the options a receiving socket needs: ZMQ_MAXMSGSIZE from the policy, so ZeroMQ drops
/// the connection of a peer that sends a larger frame instead of allocating for it.
void configure_receiver(zmq::socket_t& socket, const ValidationPolicy& policy);

struct ReceivedMessage {
  std::string peer;     ///< the sender's routing id
  std::string user_id;  ///< with CURVE + ZAP: the connection's User-Id (the client's public key)
  WireHeader header;
  /// Header versions 2 and 3: the payload frames.
  std::vector<zmq::message_t> payloads;
  /// Header version 4: the payloads' bytes, one after the other, kept in the frame that brought
  /// them with the header.
  Payload inline_payloads;
};

/// The payloads of a received message as one Payload, whichever header version brought them
/// (adopt_frames for frames); moves them out of `message`.
[[nodiscard]] Payload take_payload(ReceivedMessage& message);

struct ReceiveResult {
  bool received = false;  ///< false: nothing was waiting (dontwait) or the call was interrupted
  DropReason error = DropReason::kNone;
  /// The TCP connection the message came from (ZMQ_SRCFD; -1 over a Unix socket, which no guard
  /// watches, or when ZeroMQ does not say) and the bytes its frames took on the wire (ZMTP 3
  /// framing), for the ConnectionGuard.
  int source_fd = -1;
  std::size_t wire_bytes = 0;
  /// False when the message came over a Unix socket (a twin, WIRE.md §1.1): its Peer-Address
  /// property is then no IP address. True over TCP, and when ZeroMQ gives no Peer-Address. The
  /// connection guard watches only TCP connections.
  bool over_tcp = false;
  /// Valid when received && error == kNone. When a decoded header failed validation (WIRE.md §3
  /// steps 4–8), `header` holds it (to name the port) and `payloads` is empty.
  ReceivedMessage message;
};

/// The payload frames of a received message as one Payload: a single frame is kept as it is (the
/// Payload owns the zmq::message_t, the bytes are not copied); several frames are joined into one
/// new buffer (a copy); none give an empty Payload.
[[nodiscard]] Payload adopt_frames(std::vector<zmq::message_t> frames);

/// What a receiver reads of a message's connection, each a lookup in ZeroMQ's metadata (with the
/// address parsed and the descriptor's digits read): `connection` fills over_tcp and, over TCP,
/// source_fd (for a ConnectionGuard), `user_id` the User-Id (with CURVE). A field not asked for
/// keeps its default (-1, false, empty).
struct ReceiveNeeds {
  bool connection = true;
  bool user_id = true;
};

/// Receives one message from a ROUTER socket (identity frame first), validates it and counts a
/// drop in `drops` when it fails.
ReceiveResult receive_wire_message(zmq::socket_t& router, const MessageValidator& validator,
                                   PeerDropCounters& drops,
                                   zmq::recv_flags flags = zmq::recv_flags::none,
                                   ReceiveNeeds needs = {});

}  // namespace tagflow::transport
