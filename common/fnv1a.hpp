// FNV-1a, 64 bits: the one hash of the tree — run digests (docs/ARCHITECTURE.md), checkpoint and
// weights checksums. Not cryptographic: it detects changes and corruption, not tampering.
//
// fnv1a64(data, size, hash) continues a running hash, so a digest over several pieces is the
// hash of their concatenation: fnv1a64(b, fnv1a64(a)) == fnv1a64(a + b). Header-only, pure,
// thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

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

/// The low N (at most 8) bytes of `value`, little-endian, hashed: fnv1a64 of those bytes
/// without storing them first (N fixed, so the loop unrolls).
template <int N>
[[nodiscard]] std::uint64_t fnv1a64_le(std::uint64_t value, std::uint64_t hash = kFnv1aOffset) {
  static_assert(N >= 0 && N <= 8, "a 64-bit value has 8 bytes");
  for (int i = 0; i < N; ++i) {
    hash ^= (value >> (8 * i)) & 0xFFU;
    hash *= kFnv1aPrime;
  }
  return hash;
}

/// `value` as its 8 little-endian bytes, hashed (digests fold counts and hashes this way).
[[nodiscard]] inline std::uint64_t fnv1a64_u64(std::uint64_t value,
                                               std::uint64_t hash = kFnv1aOffset) {
  return fnv1a64_le<8>(value, hash);
}

namespace fnv1a_detail {

/// The four lanes of fnv1a64_wide before any block: lane k starts at hash ^ (k + 1) * prime.
inline void start_lanes(std::uint64_t (&lanes)[4], std::uint64_t hash) {
  for (std::uint64_t k = 0; k < 4; ++k) lanes[k] = hash ^ ((k + 1) * kFnv1aPrime);
}

/// The little-endian 64-bit word at `at`.
[[nodiscard]] inline std::uint64_t load_le64(const unsigned char* at) {
  std::uint64_t word = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  std::memcpy(&word, at, sizeof word);  // one load, not eight
#else
  for (std::size_t i = 0; i < 8; ++i) word |= static_cast<std::uint64_t>(at[i]) << (8 * i);
#endif
  return word;
}

/// `blocks` whole 32-byte blocks at `bytes` mixed into the lanes: word k of a block, read
/// little-endian, into lane k. The lanes are held in locals while it runs: kept in the array, a
/// store to them could alias the bytes (unsigned char may alias anything), so every word's
/// multiply waited for the lane to go through memory (2.7 times slower on large inputs).
inline void mix_blocks(std::uint64_t (&lanes)[4], const unsigned char* bytes, std::size_t blocks) {
  std::uint64_t l0 = lanes[0], l1 = lanes[1], l2 = lanes[2], l3 = lanes[3];
  for (std::size_t b = 0; b < blocks; ++b, bytes += 32) {
    l0 = (l0 ^ load_le64(bytes)) * kFnv1aPrime;
    l1 = (l1 ^ load_le64(bytes + 8)) * kFnv1aPrime;
    l2 = (l2 ^ load_le64(bytes + 16)) * kFnv1aPrime;
    l3 = (l3 ^ load_le64(bytes + 24)) * kFnv1aPrime;
  }
  lanes[0] = l0;
  lanes[1] = l1;
  lanes[2] = l2;
  lanes[3] = l3;
}

/// The result: fnv1a64 over the lanes as 32 little-endian bytes, then over the tail.
[[nodiscard]] inline std::uint64_t finish(const std::uint64_t (&lanes)[4],
                                          const unsigned char* tail, std::size_t tail_size,
                                          std::uint64_t hash) {
  for (const std::uint64_t lane : lanes) hash = fnv1a64_u64(lane, hash);
  return fnv1a64(tail, tail_size, hash);
}

}  // namespace fnv1a_detail

/// FNV-1a over 64-bit words, four independent lanes: for large payloads (the run digest hashes
/// every value sent on a connection, up to megabytes per tag), about ten times faster than
/// fnv1a64() — whose byte chain costs a multiply per byte — with the same use: detecting a
/// change, not an attacker. Defined exactly, so any implementation can reproduce it:
///   - lane k (k = 0..3) starts at hash ^ (k + 1) * kFnv1aPrime;
///   - the bytes are read as little-endian 64-bit words; word j goes to lane j mod 4:
///     lane = (lane ^ word) * kFnv1aPrime, over every whole 32-byte block;
///   - the result is fnv1a64 over the four lanes as 32 little-endian bytes (lane 0 first), then
///     over the remaining size mod 32 bytes, continuing from `hash`.
/// Not a continuation of itself (pieces hash differently from their concatenation).
[[nodiscard]] inline std::uint64_t fnv1a64_wide(const void* data, std::size_t size,
                                                std::uint64_t hash = kFnv1aOffset) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  std::uint64_t lanes[4];
  fnv1a_detail::start_lanes(lanes, hash);
  const std::size_t blocks = size / 32;
  fnv1a_detail::mix_blocks(lanes, bytes, blocks);
  return fnv1a_detail::finish(lanes, bytes + blocks * 32, size - blocks * 32, hash);
}

/// fnv1a64_wide over bytes that come in pieces (a file read back in chunks): add() every piece
/// in order, then value() equals fnv1a64_wide of their concatenation. Not thread-safe.
class Fnv1aWide {
 public:
  explicit Fnv1aWide(std::uint64_t hash = kFnv1aOffset) : hash_(hash) {
    fnv1a_detail::start_lanes(lanes_, hash);
  }
  void add(const void* data, std::size_t size) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    if (held_ > 0) {  // complete the block a previous piece began
      const std::size_t take = size < 32 - held_ ? size : 32 - held_;
      std::memcpy(block_ + held_, bytes, take);
      held_ += take;
      bytes += take;
      size -= take;
      if (held_ < 32) return;
      fnv1a_detail::mix_blocks(lanes_, block_, 1);
      held_ = 0;
    }
    const std::size_t blocks = size / 32;
    fnv1a_detail::mix_blocks(lanes_, bytes, blocks);
    held_ = size - blocks * 32;
    std::memcpy(block_, bytes + blocks * 32, held_);
  }
  /// The hash of everything added so far.
  [[nodiscard]] std::uint64_t value() const {
    return fnv1a_detail::finish(lanes_, block_, held_, hash_);
  }

 private:
  std::uint64_t hash_;
  std::uint64_t lanes_[4];
  unsigned char block_[32] = {};
  std::size_t held_ = 0;  // bytes of an unfinished block in block_
};

}  // namespace tagflow
