// SparseFloats: the non-zero floats of a long, mostly-zero float array, read where they lie (the
// sparse AgentObservations frame keeps them so, nodes/messages.hpp): `count` positions (u32,
// strictly ascending, into the array) and their values (f32), both in the machine's byte order and
// unaligned. A consumer that only needs the non-zero floats (the stacked policies' first layer,
// rl/learning/stacked_mlp.hpp) reads them here instead of scanning the whole array again.
// Header-only; the arrays belong to whoever made the view.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace tagflow {

struct SparseFloats {
  const std::uint8_t* positions = nullptr;  // count × u32
  const std::uint8_t* values = nullptr;     // count × f32
  std::size_t count = 0;

  [[nodiscard]] std::uint32_t position(std::size_t i) const {
    std::uint32_t p = 0;
    std::memcpy(&p, positions + i * sizeof p, sizeof p);
    return p;
  }
  [[nodiscard]] float value(std::size_t i) const {
    float v = 0;
    std::memcpy(&v, values + i * sizeof v, sizeof v);
    return v;
  }
  /// The index of the first position ≥ `at` (count when there is none).
  [[nodiscard]] std::size_t first_at_or_after(std::uint32_t at) const {
    std::size_t lo = 0, hi = count;
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo) / 2;
      if (position(mid) < at) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }
};

}  // namespace tagflow
