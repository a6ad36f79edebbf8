// FNV-1a, 64 bits: the one hash of the tree — run digests (ARCHITECTURE §8), checkpoint and
// weights checksums. Not cryptographic: it detects changes and corruption, not tampering.
//
// fnv1a64(data, size, hash) continues a running hash, so a digest over several pieces is the
// hash of their concatenation: fnv1a64(b, fnv1a64(a)) == fnv1a64(a + b). Header-only, pure,
// thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tagflow {

/// The FNV-1a 64 offset basis: the hash of no bytes.
inline constexpr std::uint64_t kFnv1aOffset = 14695981039346656037ULL;
inline constexpr std::uint64_t kFnv1aPrime = 1099511628211ULL;

/// FNV-1a 64 of `size` bytes at `data`, continuing from `hash`.
[[nodiscard]] inline std::uint64_t fnv1a64(const void* data, std::size_t size,
                                           std::uint64_t hash = kFnv1aOffset) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < size; ++i) {
    hash ^= bytes[i];
    hash *= kFnv1aPrime;
  }
  return hash;
}

/// FNV-1a 64 of a contiguous container of bytes (std::string, std::vector<std::uint8_t>, ...).
template <class Bytes>
[[nodiscard]] std::uint64_t fnv1a64(const Bytes& bytes, std::uint64_t hash = kFnv1aOffset) {
  static_assert(sizeof(*bytes.data()) == 1, "fnv1a64 hashes containers of bytes");
  return fnv1a64(bytes.data(), bytes.size(), hash);
}

/// `value` as its 8 little-endian bytes, hashed (digests fold counts and hashes this way).
[[nodiscard]] inline std::uint64_t fnv1a64_u64(std::uint64_t value,
                                               std::uint64_t hash = kFnv1aOffset) {
  unsigned char bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<unsigned char>(value >> (8 * i));
  return fnv1a64(bytes, sizeof bytes, hash);
}

}  // namespace tagflow
