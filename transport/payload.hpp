// Payload: immutable bytes with shared ownership — what a data message carries (WIRE.md §4).
//
// `owner` keeps `data` alive; copying a Payload copies the pointer (one atomic increment), never
// the bytes, so one encoded value can go to several downstreams, sit in a port and feed a digest
// at once. Whoever made it must not change the bytes afterwards. A Payload is either made from a
// buffer the sender owns (owning(), copy_of()) or is a frame ZeroMQ received (adopt_frames(),
// wire_socket.hpp); send_wire_message hands its bytes to ZeroMQ without copying them.
// Thread-safety: as std::shared_ptr<const T>: any number of threads may read one at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>

namespace tagflow::transport {

struct Payload {
  std::shared_ptr<const void> owner;
  const void* data = nullptr;
  std::size_t size = 0;

  /// A payload that owns a copy of `bytes` (for small values and tests).
  static Payload copy_of(const void* bytes, std::size_t size);
  /// A payload that owns `buffer` (a std::string or std::vector of bytes), moved, not copied.
  template <class Buffer>
  static Payload owning(Buffer buffer) {
    static_assert(sizeof(*buffer.data()) == 1, "a payload is made of bytes");
    auto held = std::make_shared<const Buffer>(std::move(buffer));
    Payload payload;
    payload.data = held->data();
    payload.size = held->size();
    payload.owner = std::move(held);
    return payload;
  }

  [[nodiscard]] const std::uint8_t* bytes() const { return static_cast<const std::uint8_t*>(data); }
  [[nodiscard]] std::string_view view() const { return {static_cast<const char*>(data), size}; }
};

}  // namespace tagflow::transport
