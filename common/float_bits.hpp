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
/// The plain-loop form, which float_block_mask is where SSE2 is missing.
inline std::uint32_t float_block_mask_portable(const float* x, std::uint32_t ignored = 0) {
  std::uint32_t bits[kFloatBlock];
  std::memcpy(bits, x, sizeof bits);
  std::uint32_t mask = 0;
  for (std::size_t k = 0; k < kFloatBlock; ++k) {
    mask |= static_cast<std::uint32_t>((bits[k] & ~ignored) != 0) << k;
  }
  return mask;
}

/// float_block_mask_portable's mask, with four 128-bit compares where the compiler has SSE2.
inline std::uint32_t float_block_mask(const float* x, std::uint32_t ignored = 0) {
#if defined(__SSE2__)
  const __m128i keep = _mm_set1_epi32(static_cast<int>(~ignored));
  const __m128i zero = _mm_setzero_si128();
  const auto load = [&](int q) {
    return _mm_and_si128(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + static_cast<std::ptrdiff_t>(4 * q))),
        keep);
  };
  const __m128i q0 = load(0), q1 = load(1), q2 = load(2), q3 = load(3);
  const __m128i any = _mm_or_si128(_mm_or_si128(q0, q1), _mm_or_si128(q2, q3));
  if (_mm_movemask_epi8(_mm_cmpeq_epi32(any, zero)) == 0xFFFF) return 0;  // the common case
  const auto set = [&](__m128i v) {
    return static_cast<std::uint32_t>(~_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(v, zero))) &
                                      0xF);
  };
  return set(q0) | set(q1) << 4 | set(q2) << 8 | set(q3) << 12;
#else
  return float_block_mask_portable(x, ignored);
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

/// Writes `at + k` for each set bit k of `mask`, lowest first, to `positions` (room for up to
/// kFloatBlock) and returns how many it wrote: a block's mask as the positions of its floats.
inline std::size_t list_set_bits(std::size_t at, std::uint32_t mask, std::uint32_t* positions) {
  std::size_t count = 0;
  for (; mask != 0; mask &= mask - 1) {
    positions[count++] =
        static_cast<std::uint32_t>(at + static_cast<std::size_t>(lowest_bit(mask)));
  }
  return count;
}

}  // namespace tagflow
