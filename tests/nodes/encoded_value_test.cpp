#include "nodes/encoded_value.hpp"

#include <gtest/gtest.h>

namespace tagflow::nodes {
namespace {

WeightsMessage weights() {
  WeightsMessage w;
  w.version = 4;
  w.values = {0.5F, -1.0F, 2.0F};
  return w;
}

TEST(EncodedValue, MakeEncodedEncodesTheValueOnce) {
  const Encoded<WeightsMessage> value = make_encoded(weights());
  EXPECT_EQ(value->value().values, weights().values);
  const Bytes expected = encode(weights());
  ASSERT_EQ(value->bytes().size, expected.size());
  EXPECT_EQ(Bytes(value->bytes().bytes(), value->bytes().bytes() + value->bytes().size), expected);
}

TEST(EncodedValue, SharingTheValueSharesItsBytes) {
  const Encoded<WeightsMessage> value = make_encoded(weights());
  const Encoded<WeightsMessage> downstream = value;  // what a port hands each reader
  const transport::Payload on_the_wire = downstream->bytes();
  EXPECT_EQ(on_the_wire.data, value->bytes().data);
}

TEST(EncodedValue, DecodeEncodedKeepsTheBytesItDecodedFrom) {
  const transport::Payload received = transport::Payload::owning(encode(weights()));
  std::string error;
  const Encoded<WeightsMessage> value = decode_encoded<WeightsMessage>(received, &error);
  ASSERT_TRUE(value) << error;
  EXPECT_EQ(value->value().version, 4U);
  EXPECT_EQ(value->bytes().data, received.data);
}

TEST(EncodedValue, BytesThatDoNotDecodeGiveNoValueAndAReason) {
  const transport::Payload garbage = transport::Payload::owning(std::string("nonsense"));
  std::string error;
  EXPECT_FALSE(decode_encoded<WeightsMessage>(garbage, &error));
  EXPECT_FALSE(error.empty());
}

TEST(EncodedValue, ABatchListEncodesAsItsBatches) {
  const Encoded<SampleBatchList> empty = make_encoded(SampleBatchList{});
  EXPECT_EQ(empty->bytes().size, 0U);
  std::string error;
  const Encoded<SampleBatchList> back = decode_encoded<SampleBatchList>(empty->bytes(), &error);
  ASSERT_TRUE(back) << error;
  EXPECT_TRUE(back->value().empty());
}

}  // namespace
}  // namespace tagflow::nodes
