// The one tag type (common/tag.hpp): reactors::Tag and transport::WireTag name it.
#include "common/tag.hpp"

#include <sstream>

#include <gtest/gtest.h>

namespace tagflow {
namespace {

using std::chrono::nanoseconds;

TEST(Tag, OrdersByTimeThenMicrostep) {
  EXPECT_LT(Tag(1, 5), Tag(2, 0));
  EXPECT_LT(Tag(2, 0), Tag(2, 1));
  EXPECT_EQ(Tag(3, 4), Tag(3, 4));
  EXPECT_GT(Tag::forever(), Tag(1000, 1000));
  EXPECT_LT(Tag::never(), Tag(-1000, 0));
}

TEST(Tag, ZeroDelayIsTheNextMicrostep) {
  EXPECT_EQ(Tag(10, 2).delayed(nanoseconds(0)), Tag(10, 3));
  EXPECT_EQ(Tag(10, 2).next_microstep(), Tag(10, 3));
}

TEST(Tag, PositiveDelayResetsTheMicrostep) {
  EXPECT_EQ(Tag(10, 7).delayed(nanoseconds(5)), Tag(15, 0));
}

TEST(Tag, DelaysSaturateAtForever) {
  EXPECT_EQ(Tag::forever().delayed(nanoseconds(1)), Tag::forever());
  EXPECT_EQ(Tag(std::numeric_limits<std::int64_t>::max() - 1, 0).delayed(nanoseconds(10)),
            Tag::forever());
}

TEST(Tag, NegativeDelayIsTreatedAsZero) {
  EXPECT_EQ(Tag(10, 0).delayed(nanoseconds(-5)), Tag(10, 1));
}

TEST(Tag, PredecessorIsTheGreatestSmallerTag) {
  EXPECT_EQ(Tag(10, 3).predecessor(), Tag(10, 2));
  const Tag before = Tag(10, 0).predecessor();
  EXPECT_LT(before, Tag(10, 0));
  EXPECT_EQ(before.next_microstep(), Tag(10, 0));
  EXPECT_EQ(Tag(100, 0).predecessor(), Tag(99, std::numeric_limits<std::uint32_t>::max()));
}

TEST(Tag, NeverAndForeverStayUnderPredecessor) {
  EXPECT_EQ(Tag::never().predecessor(), Tag::never());
  EXPECT_EQ(Tag::forever().predecessor(), Tag::forever());
  EXPECT_EQ(Tag::forever().next_microstep(), Tag::forever());
}

TEST(Tag, MicrostepOverflowMovesToTheNextNanosecond) {
  EXPECT_EQ(Tag(5, std::numeric_limits<std::uint32_t>::max()).next_microstep(), Tag(6, 0));
}

TEST(Tag, PrintsRelativeToAnOrigin) {
  EXPECT_EQ(Tag(1000000250, 3).to_string(), "(t=1.000000250s, m=3)");
  EXPECT_EQ(Tag(1500, 0).to_string(1000), "(t=0.000000500s, m=0)");
  EXPECT_EQ(Tag::forever().to_string(), "(forever)");
  std::ostringstream raw;
  raw << Tag(100, 3);
  EXPECT_EQ(raw.str(), "(100, 3)");
}

}  // namespace
}  // namespace tagflow
