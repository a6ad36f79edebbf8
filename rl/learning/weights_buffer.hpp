// Weights on the wire: a network's parameters as one contiguous float32 buffer (the MlpSpec
// layout) plus a 32-byte header carrying a version number and a checksum.
//
// Encoded form (little-endian, as the host stores it):
//   offset 0  u32 magic 'TFWB'      offset 4  u32 format (1)
//   offset 8  u64 version           offset 16 u64 float count
//   offset 24 u64 checksum (weights_checksum of the float bytes)
//   offset 32 float32 × count
// The header and the floats may travel as two frames (the floats zero-copy) or as one buffer.
// Nothing is packed per tensor: both sides memcpy the float block into and out of the model.
//
// Errors are values: decode_* return a WeightsError and never throw on bad bytes.
// A value type; not synchronized.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tagflow::learning {

inline constexpr std::uint32_t kWeightsMagic = 0x42574654;  // "TFWB" in memory order
inline constexpr std::uint32_t kWeightsFormat = 1;
inline constexpr std::size_t kWeightsHeaderSize = 32;

/// 64-bit checksum of `count` floats (FNV-1a over 64-bit words, then the tail bytes). Also the
/// digest of a set of weights: bit-identical weights ⇔ equal checksum (with overwhelming odds).
[[nodiscard]] std::uint64_t weights_checksum(const float* values, std::size_t count);

/// The checksum as 16 lower-case hex digits.
[[nodiscard]] std::string checksum_hex(std::uint64_t checksum);

struct WeightsBuffer {
  std::uint64_t version = 0;
  std::vector<float> values;

  [[nodiscard]] std::uint64_t checksum() const;
  /// checksum_hex(checksum()).
  [[nodiscard]] std::string digest() const;
};

enum class WeightsError {
  kNone,
  kTooShort,      // fewer bytes than the header, or than the header's count announces
  kBadMagic,      // not a weights buffer
  kBadFormat,     // a format this build does not read
  kSizeMismatch,  // the float count differs from what the receiver expects
  kBadChecksum,   // the floats do not match the header's checksum
};

[[nodiscard]] const char* to_string(WeightsError error);

struct WeightsHeader {
  std::uint64_t version = 0;
  std::uint64_t count = 0;
  std::uint64_t checksum = 0;
};

/// The 32 header bytes for `weights`.
[[nodiscard]] std::vector<std::uint8_t> encode_weights_header(const WeightsBuffer& weights);
/// Header followed by the floats, in one buffer.
[[nodiscard]] std::vector<std::uint8_t> encode_weights(const WeightsBuffer& weights);

/// Parses and checks the magic and format of a 32-byte header.
[[nodiscard]] WeightsError decode_weights_header(const std::uint8_t* bytes, std::size_t size,
                                                 WeightsHeader* header);

/// Decodes a header plus its float block (given separately, as two frames deliver them) into
/// `out`, checking the count (when `expected_count` ≥ 0) and the checksum. `out` is untouched
/// on error.
[[nodiscard]] WeightsError decode_weights(const std::uint8_t* header_bytes, std::size_t header_size,
                                          const std::uint8_t* floats, std::size_t floats_size,
                                          std::int64_t expected_count, WeightsBuffer* out);

/// Decodes one buffer made by encode_weights.
[[nodiscard]] WeightsError decode_weights(const std::uint8_t* bytes, std::size_t size,
                                          std::int64_t expected_count, WeightsBuffer* out);

}  // namespace tagflow::learning
