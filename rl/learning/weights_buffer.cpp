#include "rl/learning/weights_buffer.hpp"

#include <cstring>
#include <utility>

#include "common/fnv1a.hpp"

namespace tagflow::learning {
namespace {

template <class T>
void put(std::uint8_t* at, T value) {
  std::memcpy(at, &value, sizeof(T));
}

template <class T>
T get(const std::uint8_t* at) {
  T value;
  std::memcpy(&value, at, sizeof(T));
  return value;
}

}  // namespace

std::uint64_t weights_checksum(const float* values, std::size_t count) {
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(values);
  const std::size_t size = count * sizeof(float);
  // FNV-1a's constants over 64-bit words (8× fewer multiplies than bytes; weights are large),
  // then common/fnv1a.hpp over the tail bytes.
  std::uint64_t hash = kFnv1aOffset;
  std::size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    hash ^= get<std::uint64_t>(bytes + i);
    hash *= kFnv1aPrime;
    hash ^= hash >> 29;
  }
  hash = fnv1a64(bytes + i, size - i, hash);
  return hash ^ static_cast<std::uint64_t>(count);
}

std::string checksum_hex(std::uint64_t checksum) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text(16, '0');
  for (int i = 15; i >= 0; --i) {
    text[static_cast<std::size_t>(i)] = kDigits[checksum & 0xF];
    checksum >>= 4;
  }
  return text;
}

std::uint64_t WeightsBuffer::checksum() const {
  return weights_checksum(values.data(), values.size());
}

std::string WeightsBuffer::digest() const { return checksum_hex(checksum()); }

const char* to_string(WeightsError error) {
  switch (error) {
    case WeightsError::kNone:
      return "ok";
    case WeightsError::kTooShort:
      return "weights buffer too short";
    case WeightsError::kBadMagic:
      return "not a weights buffer (bad magic)";
    case WeightsError::kBadFormat:
      return "unknown weights buffer format";
    case WeightsError::kSizeMismatch:
      return "weights buffer has the wrong number of floats";
    case WeightsError::kBadChecksum:
      return "weights buffer checksum mismatch";
  }
  return "unknown weights error";
}

std::vector<std::uint8_t> encode_weights_header(const WeightsBuffer& weights) {
  std::vector<std::uint8_t> header(kWeightsHeaderSize);
  put<std::uint32_t>(header.data(), kWeightsMagic);
  put<std::uint32_t>(header.data() + 4, kWeightsFormat);
  put<std::uint64_t>(header.data() + 8, weights.version);
  put<std::uint64_t>(header.data() + 16, weights.values.size());
  put<std::uint64_t>(header.data() + 24, weights.checksum());
  return header;
}

std::vector<std::uint8_t> encode_weights(const WeightsBuffer& weights) {
  std::vector<std::uint8_t> bytes = encode_weights_header(weights);
  const std::size_t float_bytes = weights.values.size() * sizeof(float);
  bytes.resize(kWeightsHeaderSize + float_bytes);
  if (float_bytes > 0) {
    std::memcpy(bytes.data() + kWeightsHeaderSize, weights.values.data(), float_bytes);
  }
  return bytes;
}

WeightsError decode_weights_header(const std::uint8_t* bytes, std::size_t size,
                                   WeightsHeader* header) {
  if (bytes == nullptr || size < kWeightsHeaderSize) return WeightsError::kTooShort;
  if (get<std::uint32_t>(bytes) != kWeightsMagic) return WeightsError::kBadMagic;
  if (get<std::uint32_t>(bytes + 4) != kWeightsFormat) return WeightsError::kBadFormat;
  header->version = get<std::uint64_t>(bytes + 8);
  header->count = get<std::uint64_t>(bytes + 16);
  header->checksum = get<std::uint64_t>(bytes + 24);
  return WeightsError::kNone;
}

WeightsError decode_weights(const std::uint8_t* header_bytes, std::size_t header_size,
                            const std::uint8_t* floats, std::size_t floats_size,
                            std::int64_t expected_count, WeightsBuffer* out) {
  WeightsHeader header;
  const WeightsError error = decode_weights_header(header_bytes, header_size, &header);
  if (error != WeightsError::kNone) return error;
  if (expected_count >= 0 && header.count != static_cast<std::uint64_t>(expected_count)) {
    return WeightsError::kSizeMismatch;
  }
  if (header.count > floats_size / sizeof(float)) return WeightsError::kTooShort;
  if (floats_size != header.count * sizeof(float)) return WeightsError::kSizeMismatch;
  std::vector<float> values(header.count);
  if (floats_size > 0) std::memcpy(values.data(), floats, floats_size);
  if (weights_checksum(values.data(), values.size()) != header.checksum) {
    return WeightsError::kBadChecksum;
  }
  out->version = header.version;
  out->values = std::move(values);
  return WeightsError::kNone;
}

WeightsError decode_weights(const std::uint8_t* bytes, std::size_t size,
                            std::int64_t expected_count, WeightsBuffer* out) {
  if (bytes == nullptr || size < kWeightsHeaderSize) return WeightsError::kTooShort;
  return decode_weights(bytes, kWeightsHeaderSize, bytes + kWeightsHeaderSize,
                        size - kWeightsHeaderSize, expected_count, out);
}

}  // namespace tagflow::learning
