#include "hosts/reactor/wire_ports.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace tagflow::hosts {
namespace {

nodes::SampleBatchMessage batch(std::uint64_t key) {
  nodes::SampleBatchMessage b;
  b.observation_size = 2;
  b.keys = {key, key + 1};
  b.observations = {1, 2, 3, 4};
  b.next_observations = {5, 6, 7, 8};
  b.actions = {0, 1};
  b.rewards = {1.0F, 0.5F};
  b.terminated = {0, 1};
  b.importance_weights = {1.0F, 1.0F};
  b.weights_versions = {3, 4};
  return b;
}

TEST(WirePorts, APortIsItsInputCodeAboveTheReceiversChannel) {
  EXPECT_EQ(wire_port("transitions", 0), 0x10000U);
  EXPECT_EQ(wire_port("batches", 2), 0x30002U);
  EXPECT_EQ(wire_port("actions", 0xFFFF), 0x6FFFFU);
  EXPECT_THROW((void)wire_port("actions", 0x10000), std::invalid_argument);
  EXPECT_THROW((void)wire_port("gradients", 0), std::invalid_argument);
}

TEST(WirePorts, AListOfMinibatchesRoundTrips) {
  const std::vector<nodes::SampleBatchMessage> batches = {batch(10), batch(20)};
  std::vector<nodes::SampleBatchMessage> back;
  std::string error;
  ASSERT_TRUE(decode_batch_list(encode_batch_list(batches), back, &error)) << error;
  ASSERT_EQ(back.size(), 2U);
  EXPECT_EQ(back[1].keys, batches[1].keys);
  EXPECT_EQ(back[1].weights_versions, batches[1].weights_versions);
  ASSERT_TRUE(decode_batch_list(encode_batch_list({}), back, &error)) << error;
  EXPECT_TRUE(back.empty());
}

TEST(WirePorts, ABadListIsRefusedWithAReason) {
  const nodes::Bytes good = encode_batch_list({batch(1)});
  std::vector<nodes::SampleBatchMessage> back;
  std::string error;
  nodes::Bytes truncated(good.begin(), good.end() - 3);
  EXPECT_FALSE(decode_batch_list(truncated, back, &error));
  EXPECT_NE(error.find("truncated"), std::string::npos) << error;
  nodes::Bytes trailing = good;
  trailing.push_back(0);
  EXPECT_FALSE(decode_batch_list(trailing, back, &error));
  EXPECT_NE(error.find("trailing"), std::string::npos) << error;
  EXPECT_FALSE(decode_batch_list(nodes::Bytes{1, 0}, back, &error));
}

}  // namespace
}  // namespace tagflow::hosts
