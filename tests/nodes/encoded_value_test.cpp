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

TEST(EncodedRecycler, TakesBackTheStorageOfAValueNobodyHoldsAndNeverOneSomebodyDoes) {
  EncodedRecycler<WeightsMessage> recycler;
  EXPECT_TRUE(recycler.take().values.empty());  // nothing made yet
  Encoded<WeightsMessage> first = recycler.make(weights());
  const float* first_storage = first->value().values.data();
  const transport::Payload first_bytes = first->bytes();  // a link still sending them
  Encoded<WeightsMessage> second = recycler.make(weights());
  // Both still read (the port holds the newest, a reader the one before): nothing to take.
  WeightsMessage fresh = recycler.take();
  EXPECT_TRUE(fresh.values.empty());
  EXPECT_EQ(first->value().values, weights().values);
  EXPECT_EQ(second->value().values, weights().values);
  first.reset();  // its last reader is done
  WeightsMessage reused = recycler.take();
  EXPECT_EQ(reused.values.data(), first_storage);  // the same vector, its old contents kept
  EXPECT_EQ(reused.values, weights().values);
  EXPECT_EQ(second->value().values, weights().values);  // the newest is untouched
  // The bytes are never taken back: the link's copy still holds the encoding.
  const Bytes expected = encode(weights());
  EXPECT_EQ(Bytes(first_bytes.bytes(), first_bytes.bytes() + first_bytes.size), expected);
  EXPECT_TRUE(recycler.take().values.empty());  // taken once only
}

TEST(EncodedRecycler, AValueIsEncodedFromWhatTheWriterFilledIn) {
  EncodedRecycler<WeightsMessage> recycler;
  (void)recycler.make(weights());
  WeightsMessage next = recycler.take();  // nobody kept the value: its storage comes back
  next.version = 5;
  next.values.assign({3.0F});
  const Encoded<WeightsMessage> made = recycler.make(std::move(next));
  EXPECT_EQ(made->value().version, 5U);
  EXPECT_EQ(made->value().values, (std::vector<float>{3.0F}));
  WeightsMessage expected;
  expected.version = 5;
  expected.values = {3.0F};
  const Bytes bytes = encode(expected);
  EXPECT_EQ(Bytes(made->bytes().bytes(), made->bytes().bytes() + made->bytes().size), bytes);
}

}  // namespace
}  // namespace tagflow::nodes
