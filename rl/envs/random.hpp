// Draws used by the environments, defined here (not by std:: distributions, whose algorithms
// differ between standard libraries) so that a seed gives the same episodes everywhere.
#pragma once

#include <cstdint>
#include <random>

namespace tagflow::envs {

/// Uniform in [0, 1) with 53 random bits.
inline double uniform01(std::mt19937_64& rng) noexcept {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

/// Uniform in [low, high).
inline double uniform(std::mt19937_64& rng, double low, double high) noexcept {
  return low + (high - low) * uniform01(rng);
}

/// Uniform integer in [0, n), n > 0 (Lemire's multiply-shift; bias below 2^-32 for small n).
inline std::int64_t uniform_index(std::mt19937_64& rng, std::int64_t n) noexcept {
  const auto r = static_cast<std::uint32_t>(rng() >> 32);
  return static_cast<std::int64_t>(
      (static_cast<std::uint64_t>(r) * static_cast<std::uint64_t>(n)) >> 32);
}

}  // namespace tagflow::envs
