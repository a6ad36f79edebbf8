#include "rl/learning/weights_buffer.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace tagflow::learning {
namespace {

WeightsBuffer sample_weights() {
  WeightsBuffer weights;
  weights.version = 42;
  for (int i = 0; i < 1001; ++i) weights.values.push_back(static_cast<float>(i) * 0.5F - 3.0F);
  return weights;
}

TEST(WeightsBuffer, RoundTripsThroughOneBuffer) {
  const WeightsBuffer weights = sample_weights();
  const std::vector<std::uint8_t> bytes = encode_weights(weights);
  EXPECT_EQ(bytes.size(), kWeightsHeaderSize + weights.values.size() * sizeof(float));
  WeightsBuffer decoded;
  ASSERT_EQ(decode_weights(bytes.data(), bytes.size(), 1001, &decoded), WeightsError::kNone);
  EXPECT_EQ(decoded.version, 42U);
  EXPECT_EQ(decoded.values, weights.values);
  EXPECT_EQ(decoded.digest(), weights.digest());
}

TEST(WeightsBuffer, RoundTripsAsHeaderFramePlusFloatFrame) {
  const WeightsBuffer weights = sample_weights();
  const std::vector<std::uint8_t> header = encode_weights_header(weights);
  WeightsBuffer decoded;
  ASSERT_EQ(decode_weights(header.data(), header.size(),
                           reinterpret_cast<const std::uint8_t*>(weights.values.data()),
                           weights.values.size() * sizeof(float), -1, &decoded),
            WeightsError::kNone);
  EXPECT_EQ(decoded.values, weights.values);
}

TEST(WeightsBuffer, DetectsAFlippedBit) {
  std::vector<std::uint8_t> bytes = encode_weights(sample_weights());
  bytes[kWeightsHeaderSize + 777] ^= 0x10;
  WeightsBuffer decoded;
  decoded.version = 9;
  EXPECT_EQ(decode_weights(bytes.data(), bytes.size(), -1, &decoded), WeightsError::kBadChecksum);
  EXPECT_EQ(decoded.version, 9U) << "the output must be left untouched on error";
}

TEST(WeightsBuffer, RejectsWrongMagicFormatSizeAndTruncation) {
  const std::vector<std::uint8_t> good = encode_weights(sample_weights());
  WeightsBuffer out;
  std::vector<std::uint8_t> bad_magic = good;
  bad_magic[0] ^= 1;
  EXPECT_EQ(decode_weights(bad_magic.data(), bad_magic.size(), -1, &out), WeightsError::kBadMagic);
  std::vector<std::uint8_t> bad_format = good;
  bad_format[4] = 99;
  EXPECT_EQ(decode_weights(bad_format.data(), bad_format.size(), -1, &out),
            WeightsError::kBadFormat);
  EXPECT_EQ(decode_weights(good.data(), good.size(), 1000, &out), WeightsError::kSizeMismatch);
  EXPECT_EQ(decode_weights(good.data(), good.size() - 4, -1, &out), WeightsError::kTooShort);
  EXPECT_EQ(decode_weights(good.data(), 10, -1, &out), WeightsError::kTooShort);
  EXPECT_EQ(decode_weights(nullptr, 0, -1, &out), WeightsError::kTooShort);
}

TEST(WeightsBuffer, ChecksumDistinguishesNearlyEqualWeights) {
  WeightsBuffer a = sample_weights();
  WeightsBuffer b = a;
  b.values[500] = std::nextafter(b.values[500], 1e9F);
  EXPECT_NE(a.checksum(), b.checksum());
  EXPECT_EQ(a.digest().size(), 16U);
  EXPECT_EQ(checksum_hex(0x1234abcdULL), "000000001234abcd");
}

}  // namespace
}  // namespace tagflow::learning
