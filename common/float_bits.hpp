// The bit patterns of a block of floats, for scans that skip the all-zero runs of a mostly-zero
// array (one-hot observations: the sparse AgentObservations encoding, the stacked policies' first
// layer) with one OR per block instead of a test per float.
// Header-only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace tagflow {

/// Floats per block.
inline constexpr std::size_t kFloatBlock = 16;

/// Copies the bit patterns of the `n` (at most kFloatBlock) floats at `x` into `bits` (the rest
/// zero) and returns their OR: 0 when every float is +0.0; `& 0x7fffffff` ignores the sign.
inline std::uint32_t load_float_bits(const float* x, std::size_t n,
                                     std::uint32_t (&bits)[kFloatBlock]) {
  if (n == kFloatBlock) {
    std::memcpy(bits, x, sizeof bits);  // a fixed size: vectorized
  } else {
    std::memset(bits, 0, sizeof bits);
    std::memcpy(bits, x, n * sizeof(float));
  }
  std::uint32_t any = 0;
  for (const std::uint32_t b : bits) any |= b;
  return any;
}

}  // namespace tagflow
