#include "transport/wire_socket.hpp"

#include "transport/connection_guard.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace tagflow::transport {
namespace {

/// Called by ZeroMQ (possibly on its I/O thread) when it no longer needs a payload's bytes.
void release_payload(void* /*data*/, void* hint) {
  delete static_cast<std::shared_ptr<const void>*>(
      hint);  // NOLINT(cppcoreguidelines-owning-memory)
}

/// ZeroMQ names a TCP peer by its numeric address (Peer-Address, getnameinfo NI_NUMERICHOST);
/// a Unix-socket peer as "localhost:UID:GID:PID" (SO_PEERCRED), which is no address: told by its
/// start without parsing it. Without the property it says nothing: counted as TCP, so that the
/// guard still sees the message.
bool came_over_tcp(const zmq::message_t& frame) {
  const char* property = zmq_msg_gets(frame.handle(), "Peer-Address");
  if (property == nullptr) return true;
  constexpr std::string_view kUnixPeer = "localhost:";
  if (std::strncmp(property, kUnixPeer.data(), kUnixPeer.size()) == 0) return false;
  const std::size_t length = std::strcspn(property, "%");  // without an IPv6 scope: fe80::1%2
  char address[INET6_ADDRSTRLEN] = {};
  if (length >= sizeof address) return false;  // longer than any numeric address
  std::memcpy(address, property, length);
  in6_addr any{};
  return inet_pton(AF_INET, address, &any) == 1 || inet_pton(AF_INET6, address, &any) == 1;
}

/// The bytes after the map of version-4 frame `frame`, kept in it (no copy).
Payload inline_payloads(zmq::message_t frame, std::size_t map_bytes) {
  if (frame.size() == map_bytes) return {};
  auto kept = std::make_shared<const zmq::message_t>(std::move(frame));
  Payload payload;
  payload.data = static_cast<const char*>(kept->data()) + map_bytes;
  payload.size = kept->size() - map_bytes;
  payload.owner = std::move(kept);
  return payload;
}

/// Reads and discards the remaining frames of a multipart message; adds their wire bytes.
void drain(zmq::socket_t& socket, std::size_t& wire_bytes) {
  zmq::message_t frame;
  while (socket.get(zmq::sockopt::rcvmore) != 0) {
    if (!socket.recv(frame, zmq::recv_flags::none)) return;
    wire_bytes += zmtp_frame_bytes(frame.size());
  }
}

}  // namespace

zmq::message_t frame_of(const Payload& payload) {
  auto* keep_alive = new std::shared_ptr<const void>(payload.owner);  // freed by release_payload
  return zmq::message_t(const_cast<void*>(payload.data), payload.size, release_payload, keep_alive);
}

Payload take_payload(ReceivedMessage& message) {
  if (message.header.version >= kFirstInlineHeaderVersion)
    return std::move(message.inline_payloads);
  return adopt_frames(std::move(message.payloads));
}

Payload adopt_frames(std::vector<zmq::message_t> frames) {
  if (frames.size() == 1) {
    auto frame = std::make_shared<const zmq::message_t>(std::move(frames.front()));
    Payload payload;
    payload.data = frame->data();
    payload.size = frame->size();
    payload.owner = std::move(frame);
    return payload;
  }
  std::string joined;
  for (const zmq::message_t& frame : frames) {
    joined.append(static_cast<const char*>(frame.data()), frame.size());
  }
  return Payload::owning(std::move(joined));
}

bool send_wire_message(zmq::socket_t& socket, WireHeader header,
                       const std::vector<Payload>& payloads, zmq::send_flags flags) {
  return send_wire_message(socket, header, payloads.data(), payloads.size(), flags);
}

bool send_wire_message(zmq::socket_t& socket, WireHeader& header, const Payload* payloads,
                       std::size_t count, zmq::send_flags flags) {
  header.sizes.resize(count);
  std::size_t total = 0;
  for (std::size_t i = 0; i < count; ++i) {
    header.sizes[i] = payloads[i].size;
    total += payloads[i].size;
  }
  if (header.version >= kFirstInlineHeaderVersion) {
    // One frame: the map, then the payloads' bytes (WIRE.md §2, version 4).
    char map[512];
    std::string spill;  // a header over 512 bytes (an id longer than any federate's)
    char* at = map;
    if (header_bound(header) > sizeof map) {
      spill.resize(header_bound(header));
      at = spill.data();
    }
    const std::size_t map_bytes = encode_header_into(header, at);
    zmq::message_t frame(map_bytes + total);
    auto* out = static_cast<char*>(frame.data());
    std::memcpy(out, at, map_bytes);
    out += map_bytes;
    for (std::size_t i = 0; i < count; ++i) {
      if (payloads[i].size != 0) std::memcpy(out, payloads[i].data, payloads[i].size);
      out += payloads[i].size;
    }
    return socket.send(frame, flags).has_value();
  }
  const std::string encoded = encode_header(header);
  const zmq::send_flags more = flags | zmq::send_flags::sndmore;
  if (!socket.send(zmq::buffer(encoded), count == 0 ? flags : more)) return false;
  // Once the first frame is queued the remaining frames of the message are accepted at once
  // (ZeroMQ queues multipart messages atomically), so only the first send can report EAGAIN.
  for (std::size_t i = 0; i < count; ++i) {
    zmq::message_t frame = frame_of(payloads[i]);
    socket.send(frame, i + 1 == count ? zmq::send_flags::none : zmq::send_flags::sndmore);
  }
  return true;
}

void configure_receiver(zmq::socket_t& socket, const ValidationPolicy& policy) {
  // A version-4 frame holds the map and up to max_inline_bytes of payloads (no more than a
  // message may hold).
  const HeaderLimits& limits = policy.header_limits;
  const std::size_t biggest_frame = std::max(
      policy.max_message_bytes,
      limits.max_header_bytes + std::min(limits.max_inline_bytes, policy.max_message_bytes));
  socket.set(zmq::sockopt::maxmsgsize, static_cast<std::int64_t>(biggest_frame));
}

ReceiveResult receive_wire_message(zmq::socket_t& router, const MessageValidator& validator,
                                   PeerDropCounters& drops, zmq::recv_flags flags,
                                   ReceiveNeeds needs) {
  ReceiveResult result;
  zmq::message_t identity;
  if (!router.recv(identity, flags)) return result;
  result.received = true;
  result.message.peer = identity.to_string();
  const ValidationPolicy& policy = validator.policy();

  // Each frame says whether another follows (zmq_msg_more): no socket option to ask.
  if (!identity.more()) {
    result.error = DropReason::kNoFrames;
    drops.record(result.message.peer, result.error);
    return result;
  }
  zmq::message_t header_frame;
  (void)router.recv(header_frame, zmq::recv_flags::none);
  result.wire_bytes = zmtp_frame_bytes(header_frame.size());
  if (needs.connection) {
    result.over_tcp = came_over_tcp(header_frame);
    if (result.over_tcp) {  // only a TCP connection is watched
      if (const char* fd = zmq_msg_gets(header_frame.handle(), "__fd")) {
        result.source_fd = std::atoi(fd);  // what ZMQ_SRCFD reads
      }
    }
  }
  if (needs.user_id) {
    if (const char* user = zmq_msg_gets(header_frame.handle(), "User-Id")) {
      result.message.user_id = user;
    }
  }
  DecodedHeader decoded =
      decode_header(header_frame.data(), header_frame.size(), policy.header_limits);
  if (decoded.error != DropReason::kNone) {
    drain(router, result.wire_bytes);
    result.error = decoded.error;
    drops.record(result.message.peer, result.error);
    result.message.header = std::move(decoded.header);  // what still names it, if anything
    return result;
  }
  // A message refused once its header decoded keeps the header (to name the port), no payload.
  const auto refuse = [&](DropReason reason) {
    result.error = reason;
    drops.record(result.message.peer, reason);
    result.message.payloads.clear();
    result.message.header = std::move(decoded.header);
  };
  // The payloads' sizes for the validator: the frames' own (versions 2 and 3), or the header's
  // list once the bytes after the map proved to hold exactly those (version 4, nothing copied).
  static_assert(std::is_same_v<std::size_t, std::uint64_t>, "sizes are read as 64-bit");
  std::vector<std::size_t> frame_sizes;
  const std::vector<std::size_t>* sizes = &frame_sizes;
  bool more = header_frame.more();
  const bool payloads_inline = decoded.header.version >= kFirstInlineHeaderVersion;
  if (payloads_inline) {
    // The payloads came in the header's frame (WIRE.md §2): no frame may follow, and the bytes
    // after the map must be exactly what `sizes` lists (§3 step 5, after the version of step 4).
    if (more) drain(router, result.wire_bytes);
    if (!validator.reads_version(decoded.header.version)) {
      refuse(DropReason::kBadVersion);
      return result;
    }
    if (more) {
      refuse(DropReason::kFrameCountMismatch);
      return result;
    }
    const std::size_t carried = header_frame.size() - decoded.map_bytes;
    std::size_t listed = 0;
    bool fits = true;
    for (const std::uint64_t size : decoded.header.sizes) {
      fits = size <= carried - listed;
      if (!fits) break;
      listed += static_cast<std::size_t>(size);
    }
    if (!fits || listed != carried) {
      refuse(DropReason::kSizeMismatch);
      return result;
    }
    sizes = &decoded.header.sizes;
  }
  while (more) {
    if (result.message.payloads.size() >= policy.header_limits.max_payload_frames) {
      drain(router, result.wire_bytes);
      refuse(DropReason::kTooManyFrames);
      return result;
    }
    zmq::message_t frame;
    (void)router.recv(frame, zmq::recv_flags::none);
    more = frame.more();
    result.wire_bytes += zmtp_frame_bytes(frame.size());
    frame_sizes.push_back(frame.size());
    result.message.payloads.push_back(std::move(frame));
  }
  if (const DropReason reason = validator.validate(result.message.peer, decoded.header, *sizes);
      reason != DropReason::kNone) {
    refuse(reason);
    return result;
  }
  result.message.header = std::move(decoded.header);
  if (payloads_inline) {
    result.message.inline_payloads = inline_payloads(std::move(header_frame), decoded.map_bytes);
  }
  return result;
}

}  // namespace tagflow::transport
