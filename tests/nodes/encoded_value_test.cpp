#include "nodes/encoded_value.hpp"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

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

TEST(EncodedRecycler, ValuesReleasedOnAnotherThreadAreTakenBackOnlyAfterItsLastRead) {
  // A reader thread holds each value a while, reads all of it, then lets it go; the writer
  // refills whatever storage comes back. A reuse before the reader's last read would show as a
  // wrong sum here (and as a data race under ThreadSanitizer).
  constexpr int kValues = 2000;
  EncodedRecycler<WeightsMessage> recycler;
  std::mutex mutex;
  std::condition_variable handed, drained;
  std::deque<Encoded<WeightsMessage>> queue;
  bool done = false;
  std::atomic<int> wrong{0};
  std::thread reader([&] {
    for (;;) {
      Encoded<WeightsMessage> value;
      {
        std::unique_lock<std::mutex> lock(mutex);
        handed.wait(lock, [&] { return done || !queue.empty(); });
        if (queue.empty()) return;
        value = std::move(queue.front());
        queue.pop_front();
      }
      drained.notify_one();
      float sum = 0.0F;
      for (const float v : value->value().values) sum += v;
      if (sum != static_cast<float>(value->value().version) * 64.0F) wrong.fetch_add(1);
    }
  });
  int reused = 0;
  for (int i = 1; i <= kValues; ++i) {
    WeightsMessage next = recycler.take();
    if (next.values.capacity() > 0) ++reused;
    next.version = static_cast<std::uint64_t>(i);
    next.values.assign(64, static_cast<float>(i));
    const Encoded<WeightsMessage> made = recycler.make(std::move(next));
    {
      std::lock_guard<std::mutex> lock(mutex);
      queue.push_back(made);
    }
    handed.notify_one();
    if (i % 4 == 0) {  // now and then the reader catches up: the value before is then free
      std::unique_lock<std::mutex> lock(mutex);
      drained.wait(lock, [&] { return queue.empty(); });
    }
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    done = true;
  }
  handed.notify_one();
  reader.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GE(reused, kValues / 4 - 1);  // at least once after each catch-up
}

}  // namespace
}  // namespace tagflow::nodes
