// RequestScan: what a request frame of the inference service shows before it is decoded
// (nodes/gateway/PROTOCOL.md §2.1): its `id` and `op` when they can be read, and the first limit it
// breaks. One pass over the bytes with MessagePack's visitor parser, which allocates nothing for
// the values it meets, so an oversized request still has its `id` and `op` read and can be
// answered with them (too_large) instead of with defaults.
// Thread-safe (pure functions).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace tagflow::gateway {

/// The numeric limits of one request (PROTOCOL.md §2.1). decode_request() keeps exactly these.
struct RequestLimits {
  std::size_t max_string_chars = 64;   // any string: keys, `op`, an agent key
  std::size_t max_map_entries = 16;    // any map: max(16, the env's agents)
  std::size_t max_array_entries = 16;  // any array: max(16, max_rows × observation_size)
  std::size_t max_bin_bytes = 0;       // any bin: max_rows × observation_size × 4
  std::size_t max_depth = 4;           // containers inside each other, the request map included
};

/// How a field of the request map was found.
enum class FieldState { absent, read, unreadable };

struct RequestScan {
  bool parsed = false;  // one complete MessagePack value, nothing after it
  bool is_map = false;  // ... and a map
  FieldState id_state = FieldState::absent;
  std::uint64_t id = 0;  // id_state == read
  FieldState op_state = FieldState::absent;
  std::string op;          // op_state == read: the string as sent
  std::string id_problem;  // id_state == unreadable: why ("id is a string", ...)
  std::string too_large;   // the first limit the frame breaks, as a sentence; empty: none
};

/// Scans `size` bytes of one request frame against `limits`. Reads the whole first value even
/// past a broken limit, so that `id` and `op` are found wherever they are in the map; then any
/// values after it, for the limits only, up to the first it breaks.
[[nodiscard]] RequestScan scan_request(const void* data, std::size_t size,
                                       const RequestLimits& limits);

}  // namespace tagflow::gateway
