#include "nodes/channel_digest.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace tagflow::nodes {
namespace {

using reactors::Tag;

transport::Payload value_at(int i) {
  const std::string text = std::to_string(i);
  return transport::Payload::copy_of(text.data(), text.size());
}

// Records the same values into a digest that keeps its whole history and one that keeps only
// the recent records: tags 0, 10, ..., one value each, and two values at every fifth tag (two
// reactions writing one output at one tag).
void record_both(ChannelDigests& whole, ChannelDigests& recent, int tags) {
  for (int i = 0; i < tags; ++i) {
    const Tag tag(10 * i, 0);
    const int values = i % 5 == 0 ? 2 : 1;
    for (int v = 0; v < values; ++v) {
      whole.record(0, tag, value_at(i * 10 + v));
      recent.record(0, tag, value_at(i * 10 + v));
    }
  }
}

TEST(ChannelDigests, ARecordHashesTheTagsTwelveBytesThenTheValueWide) {
  ChannelDigests digest(1);
  const Tag tag(0x0102030405060708LL, 0x0A0B0C0DU);
  std::vector<std::uint8_t> value(77);
  for (std::size_t i = 0; i < value.size(); ++i) value[i] = static_cast<std::uint8_t>(i * 13 + 5);
  digest.record(0, tag, transport::Payload::copy_of(value.data(), value.size()));
  // docs/ARCHITECTURE.md, "What the digest covers": time and microstep, little-endian.
  const std::vector<std::uint8_t> header = {8, 7, 6, 5, 4, 3, 2, 1, 0x0D, 0x0C, 0x0B, 0x0A};
  EXPECT_EQ(digest.hash_before(0, Tag(0x0102030405060709LL, 0)),
            fnv1a64_wide(value.data(), value.size(), fnv1a64(header)));
}

TEST(ChannelDigests, KeepingOnlyRecentRecordsAnswersEveryCutoffAtOrAfterTheNewestTag) {
  // The cutoffs a program that is the whole run can ask for: the stop tag, where the newest
  // records (two at tag 50) are left out, or any later tag.
  ChannelDigests whole(1), recent(1, true);
  record_both(whole, recent, 6);
  const Tag newest(50, 0);
  for (const Tag cutoff : {newest, newest.next_microstep(), Tag(51, 0), Tag::forever()}) {
    EXPECT_EQ(recent.hash_before(0, cutoff), whole.hash_before(0, cutoff)) << cutoff.time_ns();
    EXPECT_EQ(recent.count_before(0, cutoff), whole.count_before(0, cutoff)) << cutoff.time_ns();
  }
  EXPECT_EQ(recent.count_before(0, newest), 6U);  // tags 0..40: 2 + 1 + 1 + 1 + 1 values
  EXPECT_EQ(recent.count_before(0, Tag::forever()), 8U);
  EXPECT_EQ(recent.hash(0), whole.hash(0));
}

TEST(ChannelDigests, KeepingOnlyRecentRecordsForgetsOlderCutoffs) {
  // What it drops: a federate, whose cutoff may be a tag it has passed, keeps everything.
  ChannelDigests whole(1), recent(1, true);
  record_both(whole, recent, 100);
  const Tag old(205, 0);                            // between tags 200 and 210
  EXPECT_EQ(whole.count_before(0, old), 21U + 5U);  // tags 0..200, five of them with two values
  EXPECT_NE(recent.count_before(0, old), whole.count_before(0, old));
  EXPECT_NE(recent.hash_before(0, old), whole.hash_before(0, old));
}

TEST(ChannelDigests, ARecentOnlyDigestSavedAndLoadedAnswersAsBefore) {
  ChannelDigests whole(1), recent(1, true);
  record_both(whole, recent, 12);
  StateWriter out;
  recent.save(out);
  ChannelDigests loaded(1, true);
  StateReader in(out.data(), "digest");
  loaded.load(in);
  // The run goes on after a restart from the checkpoint.
  for (ChannelDigests* d : {&whole, &loaded}) d->record(0, Tag(120, 0), value_at(1200));
  for (const Tag cutoff : {Tag(120, 0), Tag(120, 1), Tag::forever()}) {
    EXPECT_EQ(loaded.hash_before(0, cutoff), whole.hash_before(0, cutoff));
    EXPECT_EQ(loaded.count_before(0, cutoff), whole.count_before(0, cutoff));
  }
}

TEST(ChannelDigests, AFederateDropsTheRecordsNoCutoffAfterTheFloorNeeds) {
  // A federate's environment (cutoff_never_behind false): FLOOR raises its cutoff floor as the
  // run goes on (federation/PROTOCOL.md §5.1), here 1,000 tags behind the newest one.
  reactors::Environment env;
  ChannelDigests whole(1), floored(1, env);
  const int tags = 20'000;
  for (int i = 0; i < tags; ++i) {
    const Tag tag(10 * i, 0);
    for (int v = 0; v < (i % 5 == 0 ? 2 : 1); ++v) {
      whole.record(0, tag, value_at(i * 10 + v));
      floored.record(0, tag, value_at(i * 10 + v));
    }
    if (i >= 1000) env.raise_cutoff_floor(Tag(10 * (i - 1000), 3));  // microstep rounds down
  }
  EXPECT_EQ(whole.records_kept(0), 24'000U);
  // Dropped only when a block of 4,096 fills: at most the floor's lag plus two blocks remain.
  EXPECT_LE(floored.records_kept(0), 1'200U + 2 * 4'096U);
  EXPECT_EQ(floored.hash(0), whole.hash(0));
  const Tag floor = env.cutoff_floor();
  EXPECT_EQ(floor, Tag(10 * (tags - 1 - 1000), 0));
  for (const Tag cutoff : {floor, floor.next_microstep(), Tag(floor.time_ns() + 5, 0),
                           Tag(10 * (tags - 1), 0), Tag::forever()}) {
    EXPECT_EQ(floored.hash_before(0, cutoff), whole.hash_before(0, cutoff)) << cutoff.time_ns();
    EXPECT_EQ(floored.count_before(0, cutoff), whole.count_before(0, cutoff)) << cutoff.time_ns();
  }
  // A floor never raised keeps everything, as a federate of a coordinator without FLOOR does.
  reactors::Environment without_floor;
  ChannelDigests kept(1, without_floor);
  for (int i = 0; i < 5'000; ++i) kept.record(0, Tag(i, 0), value_at(i));
  EXPECT_EQ(kept.records_kept(0), 5'000U);
  EXPECT_EQ(kept.count_before(0, Tag(1, 0)), 1U);
}

}  // namespace
}  // namespace tagflow::nodes
