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

Bytes bytes_of(const transport::Payload& payload) {
  return Bytes(payload.bytes(), payload.bytes() + payload.size);
}

TEST(EncodedRecycler, FillsAgainTheStorageOfAValueNobodyHoldsAndNeverOneSomebodyDoes) {
  EncodedRecycler<WeightsMessage> recycler;
  EXPECT_TRUE(recycler.next().values.empty());  // nothing made yet
  recycler.next() = weights();
  Encoded<WeightsMessage> first = recycler.share();
  const float* first_storage = first->value().values.data();
  const transport::Payload first_bytes = first->bytes();  // a link still sending them
  // A reader (and the port) still hold the first value: a new message.
  EXPECT_TRUE(recycler.next().values.empty());
  recycler.next() = weights();
  Encoded<WeightsMessage> second = recycler.share();
  first.reset();  // its last reader is done, the link not yet
  WeightsMessage& again = recycler.next();
  EXPECT_EQ(again.values.data(), first_storage);  // the oldest one's vector, old contents kept
  EXPECT_EQ(again.values, weights().values);
  again.version = 5;
  again.values.assign({3.0F});
  const Encoded<WeightsMessage> third = recycler.share();
  WeightsMessage expected;
  expected.version = 5;
  expected.values = {3.0F};
  EXPECT_EQ(third->value().version, 5U);
  EXPECT_EQ(bytes_of(third->bytes()), encode(expected));
  // The link's bytes stay as they were: the new ones went to a buffer of their own.
  EXPECT_NE(third->bytes().data, first_bytes.data);
  EXPECT_EQ(bytes_of(first_bytes), encode(weights()));
  EXPECT_EQ(second->value().values, weights().values);  // the newest before is untouched
  EXPECT_EQ(bytes_of(second->bytes()), encode(weights()));
}

TEST(EncodedRecycler, BytesNobodyHoldsAreWrittenOverInPlace) {
  EncodedRecycler<WeightsMessage> recycler;
  recycler.next() = weights();
  Encoded<WeightsMessage> first = recycler.share();
  const void* first_bytes = first->bytes().data;
  first.reset();                            // its readers are done, no link sent it
  WeightsMessage& again = recycler.next();  // first's storage
  again.version = 9;
  again.values.assign({-2.0F, 4.0F});
  const Encoded<WeightsMessage> made = recycler.share();
  EXPECT_EQ(made->bytes().data, first_bytes);  // the same buffer, written over
  WeightsMessage expected;
  expected.version = 9;
  expected.values = {-2.0F, 4.0F};
  EXPECT_EQ(bytes_of(made->bytes()), encode(expected));
  std::string error;
  const Encoded<WeightsMessage> back = decode_encoded<WeightsMessage>(made->bytes(), &error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->value().values, expected.values);
}

TEST(EncodedRecycler, AMessageThatDoesNotEncodeIsNotSharedAndCanBeFilledAgain) {
  EncodedRecycler<AgentActionsMessage> recycler;
  EXPECT_THROW((void)recycler.share(), std::logic_error);  // nothing filled
  const auto fill = [](AgentActionsMessage& m, std::size_t policies) {
    m.agents = {0, 1};
    m.policies.assign(policies, 0);  // one per agent, or an inconsistent message
    m.versions = {1, 1};
    m.actions = {2, 3};
  };
  fill(recycler.next(), 1);
  EXPECT_THROW((void)recycler.share(), std::invalid_argument);  // a new value's first encoding
  fill(recycler.next(), 2);
  Encoded<AgentActionsMessage> made = recycler.share();
  EXPECT_EQ(bytes_of(made->bytes()), encode(made->value()));
  const AgentActionsMessage sent = made->value();
  made.reset();  // nobody holds it or its bytes: the next encoding would go over them
  fill(recycler.next(), 3);
  EXPECT_THROW((void)recycler.share(), std::invalid_argument);
  fill(recycler.next(), 2);
  made = recycler.share();
  EXPECT_EQ(made->value().policies, sent.policies);
  EXPECT_EQ(bytes_of(made->bytes()), encode(sent));  // whole again after the failed one
}

TEST(EncodedRecycler, ObservationRowsWrittenAgainEncodeAsAFreshMessage) {
  // The sparse encoding written into old storage gives the bytes of a fresh encoding, whether
  // the old bytes were longer, shorter, sparse or dense.
  EncodedRecycler<AgentObservationsMessage> recycler;
  const auto fill = [](AgentObservationsMessage& m, int agents, int size, int set_every) {
    m.source = 3;
    m.observation_size = static_cast<std::uint32_t>(size);
    m.agents.clear();
    m.policies.clear();
    for (int a = 0; a < agents; ++a) {
      m.agents.push_back(static_cast<std::uint32_t>(a));
      m.policies.push_back(static_cast<std::uint32_t>(a % 2));
    }
    m.observations.assign(static_cast<std::size_t>(agents * size), 0.0F);
    for (std::size_t k = 0; k < m.observations.size(); k += static_cast<std::size_t>(set_every)) {
      m.observations[k] = 1.0F + static_cast<float>(k);
    }
  };
  const int shapes[][3] = {{4, 300, 37}, {2, 40, 1}, {10, 300, 101}, {1, 7, 2}, {4, 300, 37}};
  for (const auto& shape : shapes) {
    AgentObservationsMessage& m = recycler.next();
    fill(m, shape[0], shape[1], shape[2]);
    const Encoded<AgentObservationsMessage> made = recycler.share();
    EXPECT_EQ(bytes_of(made->bytes()), encode(made->value()))
        << shape[0] << " agents of " << shape[1] << " floats";
  }
}

TEST(EncodedRecycler, ValuesReleasedOnAnotherThreadAreTakenBackOnlyAfterItsLastRead) {
  // A reader thread holds each value a while, reads all of it, lets it go, then reads its bytes
  // and lets those go (as a link sending them would); the writer refills whatever storage comes
  // back, bytes included. A reuse before the reader's last read would show as a
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
      const std::uint64_t version = value->value().version;
      if (sum != static_cast<float>(version) * 64.0F) wrong.fetch_add(1);
      // Its bytes, as a link holds them: read whole after the value itself is let go, then
      // released last. Still the value's encoding, never written over while held.
      transport::Payload bytes = value->bytes();
      value.reset();
      WeightsMessage sent;
      if (!decode(bytes.bytes(), bytes.size, sent, nullptr) || sent.version != version ||
          sent.values != std::vector<float>(64, static_cast<float>(version))) {
        wrong.fetch_add(1);
      }
      bytes = {};
    }
  });
  int reused = 0;
  for (int i = 1; i <= kValues; ++i) {
    WeightsMessage& next = recycler.next();
    if (next.values.capacity() > 0) ++reused;
    next.version = static_cast<std::uint64_t>(i);
    next.values.assign(64, static_cast<float>(i));
    const Encoded<WeightsMessage> made = recycler.share();
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
