#include "nodes/messages.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <optional>

namespace tagflow::nodes {
namespace {

TransitionsMessage two_transitions() {
  TransitionsMessage t;
  t.observation_size = 2;
  t.weights_version = 17;
  t.observations = {1, 2, 3, 4};
  t.actions = {0, 1};
  t.rewards = {1.0F, 0.5F};
  t.terminated = {0, 1};
  t.next_observations = {5, 6, 7, 8};
  return t;
}

TEST(Messages, TransitionsSurviveARoundTrip) {
  const TransitionsMessage t = two_transitions();
  TransitionsMessage back;
  std::string error;
  ASSERT_TRUE(decode(encode(t), back, &error)) << error;
  EXPECT_EQ(back.observation_size, 2U);
  EXPECT_EQ(back.weights_version, t.weights_version);
  EXPECT_EQ(back.observations, t.observations);
  EXPECT_EQ(back.actions, t.actions);
  EXPECT_EQ(back.rewards, t.rewards);
  EXPECT_EQ(back.terminated, t.terminated);
  EXPECT_EQ(back.next_observations, t.next_observations);
}

TEST(Messages, EncodingIsRawBlocksOfTheElements) {
  const TransitionsMessage t = two_transitions();
  // magic 4 + format 1 + size 4 + observation type 1 + weights version 8 + five blocks of
  // (8-byte count + elements).
  const std::size_t expected =
      4 + 1 + 4 + 1 + 8 + (8 + 16) + (8 + 16) + (8 + 8) + (8 + 2) + (8 + 16);
  EXPECT_EQ(encode(t).size(), expected);
}

TEST(Messages, SampleBatchWeightsAndPrioritiesSurviveARoundTrip) {
  SampleBatchMessage b;
  b.observation_size = 1;
  b.keys = {7, 9};
  b.observations = {1, 2};
  b.actions = {1, 0};
  b.rewards = {1, 1};
  b.terminated = {0, 0};
  b.next_observations = {2, 3};
  b.importance_weights = {1.0F, 0.25F};
  b.weights_versions = {30, 34};
  SampleBatchMessage back;
  ASSERT_TRUE(decode(encode(b), back, nullptr));
  EXPECT_EQ(back.keys, b.keys);
  EXPECT_EQ(back.importance_weights, b.importance_weights);
  EXPECT_EQ(back.weights_versions, b.weights_versions);
  // The learner's policy lag: newest 40 against the mean acting version 32.
  EXPECT_DOUBLE_EQ(policy_lag(40, b), 8.0);
  EXPECT_DOUBLE_EQ(policy_lag(20, b), 0.0);
  b.weights_versions.pop_back();  // one version per row, or the batch is inconsistent
  EXPECT_THROW((void)encode(b), std::invalid_argument);

  PriorityUpdateMessage p{{7, 9}, {0.5F, 2.0F}};
  PriorityUpdateMessage p_back;
  ASSERT_TRUE(decode(encode(p), p_back, nullptr));
  EXPECT_EQ(p_back.keys, p.keys);
  EXPECT_EQ(p_back.priorities, p.priorities);

  WeightsMessage w{42, {0.1F, -0.2F, 0.3F}};
  WeightsMessage w_back;
  ASSERT_TRUE(decode(encode(w), w_back, nullptr));
  EXPECT_EQ(w_back.version, 42U);
  EXPECT_EQ(w_back.values, w.values);

  ObservationBatchMessage o{3, 2, {1, 2, 3, 4}};
  ObservationBatchMessage o_back;
  ASSERT_TRUE(decode(encode(o), o_back, nullptr));
  EXPECT_EQ(o_back.source, 3U);
  EXPECT_EQ(o_back.rows(), 2U);

  ActionBatchMessage a{3, 17, {1, 0}};
  ActionBatchMessage a_back;
  ASSERT_TRUE(decode(encode(a), a_back, nullptr));
  EXPECT_EQ(a_back.weights_version, 17U);
  EXPECT_EQ(a_back.actions, a.actions);
}

TEST(Messages, EveryTruncationIsRejectedWithAReason) {
  const Bytes bytes = encode(two_transitions());
  for (std::size_t size = 0; size < bytes.size(); ++size) {
    const Bytes cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(size));
    TransitionsMessage out;
    std::string error;
    EXPECT_FALSE(decode(cut, out, &error)) << size;
    EXPECT_FALSE(error.empty()) << size;
  }
}

TEST(Messages, WrongTypeTrailingBytesAndInconsistentCountsAreRejected) {
  std::string error;
  WeightsMessage w;
  EXPECT_FALSE(decode(encode(two_transitions()), w, &error));
  EXPECT_EQ(error, "wrong message type");

  Bytes longer = encode(WeightsMessage{1, {1.0F}});
  longer.push_back(0);
  EXPECT_FALSE(decode(longer, w, &error));
  EXPECT_EQ(error, "trailing bytes");

  // A hand-made transitions message whose rewards block is one short.
  TransitionsMessage bad = two_transitions();
  bad.rewards.pop_back();
  EXPECT_THROW((void)encode(bad), std::invalid_argument);
}

TransitionsMessage two_pixel_transitions() {
  TransitionsMessage t;
  t.observation_size = 3;
  t.observation_type = ObservationType::kUInt8;
  t.observations_u8 = {0, 1, 2, 253, 254, 255};
  t.actions = {2, 0};
  t.rewards = {0.0F, -1.0F};
  t.terminated = {0, 1};
  t.next_observations_u8 = {7, 8, 9, 10, 11, 12};
  return t;
}

TEST(Messages, PixelTransitionsTravelAsOneBytePerValue) {
  const TransitionsMessage t = two_pixel_transitions();
  const Bytes bytes = encode(t);
  // As above, with 6-byte observation blocks instead of float ones.
  EXPECT_EQ(bytes.size(), 4 + 1 + 4 + 1 + 8 + (8 + 6) + (8 + 16) + (8 + 8) + (8 + 2) + (8 + 6));
  TransitionsMessage back;
  back.observations = {1.0F};  // decode replaces whatever was there
  std::string error;
  ASSERT_TRUE(decode(bytes, back, &error)) << error;
  EXPECT_EQ(back.observation_type, ObservationType::kUInt8);
  EXPECT_EQ(back.observations_u8, t.observations_u8);
  EXPECT_EQ(back.next_observations_u8, t.next_observations_u8);
  EXPECT_TRUE(back.observations.empty());
  EXPECT_TRUE(back.next_observations.empty());
  EXPECT_EQ(back.rows(), 2U);
}

TEST(Messages, PixelBatchesAndRequestsSurviveARoundTrip) {
  SampleBatchMessage b;
  b.observation_size = 2;
  b.observation_type = ObservationType::kUInt8;
  b.keys = {4};
  b.observations_u8 = {10, 20};
  b.actions = {1};
  b.rewards = {1};
  b.terminated = {0};
  b.next_observations_u8 = {30, 40};
  b.importance_weights = {1};
  b.weights_versions = {3};
  SampleBatchMessage b_back;
  ASSERT_TRUE(decode(encode(b), b_back, nullptr));
  EXPECT_EQ(b_back.observation_type, ObservationType::kUInt8);
  EXPECT_EQ(b_back.observations_u8, b.observations_u8);
  EXPECT_EQ(b_back.next_observations_u8, b.next_observations_u8);

  ObservationBatchMessage o;
  o.source = 1;
  o.observation_size = 2;
  o.observation_type = ObservationType::kUInt8;
  o.observations_u8 = {1, 2, 3, 4, 5, 6};
  ObservationBatchMessage o_back;
  ASSERT_TRUE(decode(encode(o), o_back, nullptr));
  EXPECT_EQ(o_back.observations_u8, o.observations_u8);
  EXPECT_EQ(o_back.rows(), 3U);
}

TEST(Messages, ObservationsOfTheOtherTypeOrAnUnknownTypeAreRejected) {
  TransitionsMessage both = two_pixel_transitions();
  both.observations = {1, 2, 3, 4, 5, 6};  // float rows as well as pixel rows
  EXPECT_THROW((void)encode(both), std::invalid_argument);

  // The observation type byte follows magic (4), format (1) and observation size (4).
  Bytes bytes = encode(two_pixel_transitions());
  bytes[9] = 7;
  TransitionsMessage out;
  std::string error;
  EXPECT_FALSE(decode(bytes, out, &error));
  EXPECT_EQ(error, "unknown observation type 7");

  // A format-2 peer (no observation type byte) is refused by name.
  bytes = encode(two_transitions());
  bytes[4] = 2;
  EXPECT_FALSE(decode(bytes, out, &error));
  EXPECT_EQ(error, "unknown format 2");
}

SampleBatchMessage batch_of(std::uint64_t key) {
  SampleBatchMessage b;
  b.observation_size = 1;
  b.keys = {key};
  b.observations = {1};
  b.actions = {1};
  b.rewards = {1};
  b.terminated = {0};
  b.next_observations = {2};
  b.importance_weights = {1.0F};
  b.weights_versions = {3};
  return b;
}

TEST(Messages, ABatchListIsItsBatchesEncodingsOneAfterAnother) {
  const SampleBatchList list = {batch_of(7), batch_of(8)};
  Bytes expected = encode(list[0]);
  const Bytes second = encode(list[1]);
  expected.insert(expected.end(), second.begin(), second.end());
  EXPECT_EQ(encode(list), expected);
  SampleBatchList back;
  std::string error;
  ASSERT_TRUE(decode(encode(list), back, &error)) << error;
  ASSERT_EQ(back.size(), 2U);
  EXPECT_EQ(back[1].keys, std::vector<std::uint64_t>{8});
  EXPECT_TRUE(encode(SampleBatchList{}).empty());
  ASSERT_TRUE(decode(Bytes{}, back, &error));
  EXPECT_TRUE(back.empty());
}

TEST(Messages, ABatchListWithATruncatedOrForeignBatchIsRejectedNamingIt) {
  Bytes bytes = encode(SampleBatchList{batch_of(7), batch_of(8)});
  SampleBatchList back;
  std::string error;
  EXPECT_FALSE(decode(bytes.data(), bytes.size() - 1, back, &error));
  EXPECT_EQ(error, "batch list: batch 1: truncated block 'weights_versions'");
  const Bytes foreign = encode(two_transitions());
  bytes.insert(bytes.end(), foreign.begin(), foreign.end());
  EXPECT_FALSE(decode(bytes, back, &error));
  EXPECT_EQ(error, "batch list: batch 2: wrong message type");
  Bytes trailing = encode(SampleBatchList{batch_of(7)});
  trailing.push_back(0);
  EXPECT_FALSE(decode(trailing, back, &error));
  EXPECT_EQ(error, "batch list: batch 1: truncated message");
}

TEST(Messages, DecodingReadsTheBytesWhereTheyLie) {
  const Bytes bytes = encode(two_transitions());
  Bytes framed(3, 0xEE);  // the message in the middle of a larger buffer
  framed.insert(framed.end(), bytes.begin(), bytes.end());
  framed.push_back(0xEE);
  TransitionsMessage back;
  std::string error;
  ASSERT_TRUE(decode(framed.data() + 3, bytes.size(), back, &error)) << error;
  EXPECT_EQ(back.next_observations, two_transitions().next_observations);
  EXPECT_FALSE(decode(framed.data() + 3, bytes.size() + 1, back, &error));
  EXPECT_EQ(error, "trailing bytes");
}

TEST(Messages, AgentMessagesSurviveARoundTripAndRefuseInconsistentRows) {
  const AgentObservationsMessage o{2, 3, {1, 4}, {0, 2}, {1.f, 2.f, 3.f, 4.f, 5.f, 6.f}};
  AgentObservationsMessage o2;
  std::string error;
  ASSERT_TRUE(decode(encode(o), o2, &error)) << error;
  EXPECT_EQ(o2.source, 2U);
  EXPECT_EQ(o2.agents, o.agents);
  EXPECT_EQ(o2.policies, o.policies);
  EXPECT_EQ(o2.observations, o.observations);

  const AgentActionsMessage a{2, {1, 4}, {0, 2}, {5, 9}, {1, 0}};
  AgentActionsMessage a2;
  ASSERT_TRUE(decode(encode(a), a2, &error)) << error;
  EXPECT_EQ(a2.versions, a.versions);
  EXPECT_EQ(a2.actions, a.actions);

  // Bytes whose rows disagree: two agents, one policy.
  AgentObservationsMessage bad = o;
  bad.policies.pop_back();
  EXPECT_FALSE(consistent(bad));
  EXPECT_THROW((void)encode(bad), std::invalid_argument);
  Bytes bytes = encode(a);
  bytes.resize(bytes.size() - 3);
  EXPECT_FALSE(decode(bytes, a2, &error));
  EXPECT_FALSE(error.empty());
  // A message of the other type.
  EXPECT_FALSE(decode(encode(o), a2, &error));
  EXPECT_EQ(error, "wrong message type");
}

TEST(Messages, MostlyZeroAgentObservationsTravelSparseAndComeBackBitForBit) {
  AgentObservationsMessage o{1, 100, {0, 3}, {0, 1}, std::vector<float>(200, 0.0F)};
  o.observations[7] = 1.0F;
  o.observations[99] = -0.0F;  // not all-zero bits: kept as it is
  o.observations[150] = 0.25F;
  const Bytes bytes = encode(o);
  EXPECT_LT(bytes.size(), 200U);  // 3 positions and values, not 800 bytes of floats
  AgentObservationsMessage back;
  std::string error;
  ASSERT_TRUE(decode(bytes, back, &error)) << error;
  EXPECT_EQ(back.agents, o.agents);
  EXPECT_EQ(back.policies, o.policies);
  ASSERT_EQ(back.observations.size(), o.observations.size());
  EXPECT_EQ(std::memcmp(back.observations.data(), o.observations.data(), 200 * sizeof(float)), 0);

  // A dense message stays dense; both decode the same way.
  AgentObservationsMessage dense = o;
  std::fill(dense.observations.begin(), dense.observations.end(), 2.0F);
  EXPECT_GT(encode(dense).size(), 800U);
  ASSERT_TRUE(decode(encode(dense), back, &error)) << error;
  EXPECT_EQ(back.observations, dense.observations);
}

TEST(Messages, ASparseAgentObservationsFrameListsItsNonZeroFloatsWhereTheyLie) {
  AgentObservationsMessage o{1, 100, {0, 3}, {0, 1}, std::vector<float>(200, 0.0F)};
  o.observations[7] = 1.0F;
  o.observations[99] = -0.0F;
  o.observations[100] = -2.5F;  // the first float of the second row
  o.observations[199] = 0.25F;
  const Bytes bytes = encode(o);
  const std::optional<SparseFloats> nonzero = sparse_observations(bytes.data(), bytes.size());
  ASSERT_TRUE(nonzero.has_value());
  ASSERT_EQ(nonzero->count, 4U);
  const std::vector<std::uint32_t> at = {7, 99, 100, 199};
  for (std::size_t i = 0; i < at.size(); ++i) {
    EXPECT_EQ(nonzero->position(i), at[i]);
    const float value = nonzero->value(i);
    EXPECT_EQ(std::memcmp(&value, &o.observations[at[i]], sizeof value), 0) << i;  // -0.0 too
    EXPECT_GE(nonzero->values, bytes.data());  // in the frame itself
    EXPECT_LT(nonzero->values, bytes.data() + bytes.size());
  }
  EXPECT_EQ(nonzero->first_at_or_after(0), 0U);
  EXPECT_EQ(nonzero->first_at_or_after(8), 1U);
  EXPECT_EQ(nonzero->first_at_or_after(100), 2U);
  EXPECT_EQ(nonzero->first_at_or_after(200), 4U);

  // A dense frame, a frame of another type and a cut frame list nothing.
  AgentObservationsMessage dense = o;
  std::fill(dense.observations.begin(), dense.observations.end(), 2.0F);
  const Bytes dense_bytes = encode(dense);
  EXPECT_FALSE(sparse_observations(dense_bytes.data(), dense_bytes.size()).has_value());
  const Bytes other = encode(AgentActionsMessage{1, {0}, {0}, {0}, {1}});
  EXPECT_FALSE(sparse_observations(other.data(), other.size()).has_value());
  EXPECT_FALSE(sparse_observations(bytes.data(), bytes.size() - 1).has_value());
  EXPECT_FALSE(sparse_observations(bytes.data(), 3).has_value());
}

// A sparse frame may claim at most 64 floats per byte (the decoder's bound against a small frame
// that makes the receiver allocate much). Many zero floats would encode sparse under that bound
// and be refused where they arrive, so they travel dense.
TEST(Messages, ManyZeroAgentObservationsTravelDenseWhereASparseFrameWouldBeRefused) {
  const AgentObservationsMessage o{1, 100000, {0, 3}, {0, 1}, std::vector<float>(200000, 0.0F)};
  const Bytes bytes = encode(o);
  EXPECT_GT(bytes.size(), 800000U);  // every float: a sparse frame of 60-odd bytes is refused
  AgentObservationsMessage back;
  std::string error;
  ASSERT_TRUE(decode(bytes, back, &error)) << error;
  EXPECT_EQ(back.observations, o.observations);
  EXPECT_EQ(encode(back), bytes);
}

// The bound exactly: one row, one set float. The sparse frame is 4 + 1 + 4 + 4 + 2 × (8 + 4) +
// 2 × (8 + 4) = 61 bytes, so it may stand for 64 × 61 + 64 = 3968 floats and no more.
TEST(Messages, AgentObservationsGoSparseUpToTheDecodersBoundAndDenseOneFloatPastIt) {
  for (const std::uint32_t width : {3968U, 3969U}) {
    AgentObservationsMessage o{1, width, {2}, {0}, std::vector<float>(width, 0.0F)};
    o.observations[width - 1] = -0.5F;
    const Bytes bytes = encode(o);
    EXPECT_EQ(bytes.size(), width == 3968U ? 61U : 4 + 1 + 4 + 4 + 2 * (8 + 4) + 8 + 4 * width);
    AgentObservationsMessage back;
    std::string error;
    ASSERT_TRUE(decode(bytes, back, &error)) << error;
    EXPECT_EQ(back.observations, o.observations);
    EXPECT_EQ(encode(back), bytes);
  }
}

TEST(Messages, MalformedSparseAgentObservationsAreRefusedWithAReason) {
  AgentObservationsMessage o{1, 100, {0, 3}, {0, 1}, std::vector<float>(200, 0.0F)};
  o.observations[7] = 1.0F;
  o.observations[150] = 0.25F;
  const Bytes good = encode(o);
  // Layout: magic u32, format u8, source u32, size u32, then blocks (u64 count + elements):
  // agents, policies, positions, values.
  const std::size_t positions_at = 4 + 1 + 4 + 4 + (8 + 2 * 4) * 2 + 8;
  AgentObservationsMessage back;
  std::string error;
  Bytes swapped = good;  // positions 150 then 7: out of order
  std::uint32_t a = 150, b = 7;
  std::memcpy(swapped.data() + positions_at, &a, 4);
  std::memcpy(swapped.data() + positions_at + 4, &b, 4);
  EXPECT_FALSE(decode(swapped, back, &error));
  EXPECT_NE(error.find("out of order or range"), std::string::npos) << error;
  Bytes beyond = good;  // a position past rows × observation_size
  std::uint32_t far = 200;
  std::memcpy(beyond.data() + positions_at + 4, &far, 4);
  EXPECT_FALSE(decode(beyond, back, &error));
  Bytes huge = good;  // claims 2 × 4e9 floats in a few dozen bytes
  std::uint32_t width = 4000000000U;
  std::memcpy(huge.data() + 4 + 1 + 4, &width, 4);
  EXPECT_FALSE(decode(huge, back, &error));
  EXPECT_NE(error.find("claim"), std::string::npos) << error;
  Bytes cut = good;
  cut.resize(cut.size() - 2);
  EXPECT_FALSE(decode(cut, back, &error));
}

// encode() never writes a sparse message without floats (there is nothing to leave out), but a
// peer may send one: no rows, or rows of width 0. It is a valid empty message, and decoding it
// must not touch the (possibly null) data of an empty vector.
TEST(Messages, ASparseAgentObservationsMessageWithoutFloatsDecodesEmpty) {
  AgentObservationsMessage o{1, 100, {0}, {0}, std::vector<float>(100, 0.0F)};
  o.observations[3] = 1.0F;
  const Bytes sparse = encode(o);
  ASSERT_LT(sparse.size(), 100U);  // the sparse form: its first 5 bytes (magic, format) below
  const auto append = [](Bytes& bytes, const auto value) {
    const auto* raw = reinterpret_cast<const std::uint8_t*>(&value);  // NOLINT
    bytes.insert(bytes.end(), raw, raw + sizeof value);
  };
  const auto message = [&](std::uint32_t width, const std::vector<std::uint32_t>& agents) {
    Bytes bytes(sparse.begin(), sparse.begin() + 5);
    append(bytes, std::uint32_t{7});  // source
    append(bytes, width);
    for (int block = 0; block < 2; ++block) {  // agents, then their policies
      append(bytes, static_cast<std::uint64_t>(agents.size()));
      for (const std::uint32_t agent : agents) append(bytes, agent);
    }
    append(bytes, std::uint64_t{0});  // no positions
    append(bytes, std::uint64_t{0});  // no values
    return bytes;
  };
  AgentObservationsMessage back;
  back.observations.assign(5, 1.0F);  // what a reused message held before
  std::string error;
  ASSERT_TRUE(decode(message(100, {}), back, &error)) << error;
  EXPECT_EQ(back.source, 7U);
  EXPECT_EQ(back.rows(), 0U);
  EXPECT_TRUE(back.observations.empty());
  ASSERT_TRUE(decode(message(0, {2, 5}), back, &error)) << error;
  EXPECT_EQ(back.agents, (std::vector<std::uint32_t>{2, 5}));
  EXPECT_EQ(back.observation_size, 0U);
  EXPECT_TRUE(back.observations.empty());
}

}  // namespace
}  // namespace tagflow::nodes
