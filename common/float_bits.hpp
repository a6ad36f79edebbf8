// The bit patterns of a block of floats, for scans that skip the zeros of a mostly-zero array
// (one-hot observations: the sparse AgentObservations encoding, the stacked policies' first
// layer): one mask per block of kFloatBlock floats, then one step per set bit instead of a test
// per float.
// Header-only. SSE2 (every x86-64) when the compiler has it, plain loops otherwise: the same masks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tagflow {

/// Floats per block.
inline constexpr std::size_t kFloatBlock = 16;

/// Bit k is set when the k-th of the kFloatBlock floats at `x` has a bit set outside `ignored`
/// (0: every non-zero pattern, -0.0 included; 0x80000000: every float that is not ±0.0).
inline std::uint32_t float_block_mask(const float* x, std::uint32_t ignored = 0) {
#if defined(__SSE2__)
  const __m128i keep = _mm_set1_epi32(static_cast<int>(~ignored));
  const __m128i zero = _mm_setzero_si128();
  std::uint32_t mask = 0;
  for (int q = 0; q < 4; ++q) {
    const __m128i v = _mm_and_si128(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + static_cast<std::ptrdiff_t>(4 * q))),
        keep);
    const int zeros = _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(v, zero)));
    mask |= static_cast<std::uint32_t>(~zeros & 0xF) << (4 * q);
  }
  return mask;
#else
  std::uint32_t bits[kFloatBlock];
  std::memcpy(bits, x, sizeof bits);
  std::uint32_t mask = 0;
  for (std::size_t k = 0; k < kFloatBlock; ++k) {
    mask |= static_cast<std::uint32_t>((bits[k] & ~ignored) != 0) << k;
  }
  return mask;
#endif
}

/// float_block_mask of the `n` (at most kFloatBlock) floats at `x`: the bits past n are 0.
inline std::uint32_t float_mask(const float* x, std::size_t n, std::uint32_t ignored = 0) {
  if (n == kFloatBlock) return float_block_mask(x, ignored);
  float block[kFloatBlock] = {};
  std::memcpy(block, x, n * sizeof(float));
  return float_block_mask(block, ignored);
}

/// The position of the lowest set bit of a non-zero mask.
inline int lowest_bit(std::uint32_t mask) { return __builtin_ctz(mask); }

}  // namespace tagflow
