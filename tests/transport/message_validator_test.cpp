#include "transport/message_validator.hpp"

#include <gtest/gtest.h>

namespace tagflow::transport {
namespace {

class MessageValidatorTest : public ::testing::Test {
 protected:
  MessageValidatorTest() : validator_(ValidationPolicy{HeaderLimits{}, 1000}) {
    validator_.allow_port("a", 1);
    header_.from = "a";
    header_.port = 1;
    header_.tag = {10, 0};
    header_.sizes = {100, 200};
  }
  MessageValidator validator_;
  WireHeader header_;
};

TEST_F(MessageValidatorTest, AcceptsAMessageThatMatchesItsHeader) {
  EXPECT_EQ(validator_.validate("a", header_, {100, 200}), DropReason::kNone);
}

// WIRE.md §2: a federate of protocol version 3 reads header 2 only; version 4 reads 2 and 3.
TEST_F(MessageValidatorTest, ReadsTheHeaderVersionsItWasSetTo) {
  header_.version = 2;
  EXPECT_EQ(validator_.validate("a", header_, {100, 200}), DropReason::kNone);
  header_.version = 3;
  EXPECT_EQ(validator_.validate("a", header_, {100, 200}), DropReason::kNone);
  validator_.set_newest_version(2);
  EXPECT_EQ(validator_.validate("a", header_, {100, 200}), DropReason::kBadVersion);
  header_.version = 2;
  EXPECT_EQ(validator_.validate("a", header_, {100, 200}), DropReason::kNone);
}

TEST_F(MessageValidatorTest, RefusesFrameCountAndSizeMismatches) {
  EXPECT_EQ(validator_.validate("a", header_, {100}), DropReason::kFrameCountMismatch);
  EXPECT_EQ(validator_.validate("a", header_, {100, 201}), DropReason::kSizeMismatch);
}

TEST_F(MessageValidatorTest, RefusesMessagesAboveTheCapEvenWhenSizesMatch) {
  header_.sizes = {600, 600};
  EXPECT_EQ(validator_.validate("a", header_, {600, 600}), DropReason::kMessageTooLarge);
}

TEST_F(MessageValidatorTest, RefusesUnknownPeersPortsAndSpoofedSenders) {
  EXPECT_EQ(validator_.validate("b", header_, {100, 200}), DropReason::kUnknownPeer);
  header_.port = 2;
  EXPECT_EQ(validator_.validate("a", header_, {100, 200}), DropReason::kUnknownPort);
  header_.from = "b";
  EXPECT_EQ(validator_.validate("b", header_, {100, 200}), DropReason::kUnknownPeer);
}

TEST_F(MessageValidatorTest, AKnownPeerWithoutThatPortFailsAsUnknownPortNotUnknownPeer) {
  header_.from = "b";
  EXPECT_EQ(validator_.validate("b", header_, {100, 200}), DropReason::kUnknownPeer);
  validator_.allow_peer("b");
  EXPECT_EQ(validator_.validate("b", header_, {100, 200}), DropReason::kUnknownPort);
  validator_.allow_port("b", 1);
  EXPECT_EQ(validator_.validate("b", header_, {100, 200}), DropReason::kNone);
}

TEST_F(MessageValidatorTest, RefusesTagsAtOrBeforeTheCompletedTag) {
  validator_.set_completed_tag({10, 0});
  EXPECT_EQ(validator_.validate("a", header_, {100, 200}), DropReason::kTagInPast);
  header_.tag = {10, 1};
  EXPECT_EQ(validator_.validate("a", header_, {100, 200}), DropReason::kNone);
}

TEST_F(MessageValidatorTest, CompletedTagNeverMovesBackwards) {
  validator_.set_completed_tag({20, 0});
  validator_.set_completed_tag({5, 0});
  EXPECT_EQ(validator_.completed_tag(), (WireTag{20, 0}));
}

TEST_F(MessageValidatorTest, AbsentMessagesCarryNoPayload) {
  header_.kind = MessageKind::kPortAbsent;
  header_.sizes.clear();
  EXPECT_EQ(validator_.validate("a", header_, {}), DropReason::kNone);
  header_.sizes = {1};
  EXPECT_EQ(validator_.validate("a", header_, {1}), DropReason::kFrameCountMismatch);
}

TEST_F(MessageValidatorTest, CompletedNoticesTakeAnyTagOnPortZeroWithoutPayload) {
  header_.kind = MessageKind::kCompleted;
  header_.sizes.clear();
  header_.port = 0;
  validator_.set_completed_tag({20, 0});
  // Old news is still no error: the receiver may have run past it on a coordinator grant.
  EXPECT_EQ(validator_.validate("a", header_, {}), DropReason::kNone);
  header_.port = 1;
  EXPECT_EQ(validator_.validate("a", header_, {}), DropReason::kUnknownPort);
  header_.port = 0;
  header_.sizes = {1};
  EXPECT_EQ(validator_.validate("a", header_, {1}), DropReason::kFrameCountMismatch);
  header_.sizes.clear();
  EXPECT_EQ(validator_.validate("b", header_, {}), DropReason::kUnknownPeer);
}

}  // namespace
}  // namespace tagflow::transport
