#include "transport/peer_drop_counters.hpp"

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace tagflow::transport {
namespace {

TEST(PeerDropCounters, CountsPerPeerAndPerReason) {
  PeerDropCounters drops;
  drops.record("a", DropReason::kMalformedHeader);
  drops.record("a", DropReason::kMalformedHeader);
  drops.record("a", DropReason::kTagInPast);
  drops.record("b", DropReason::kUnknownPort);
  EXPECT_EQ(drops.count("a", DropReason::kMalformedHeader), 2U);
  EXPECT_EQ(drops.count("a", DropReason::kTagInPast), 1U);
  EXPECT_EQ(drops.total("a"), 3U);
  EXPECT_EQ(drops.total("b"), 1U);
  EXPECT_EQ(drops.total("c"), 0U);
  EXPECT_EQ(drops.total(), 4U);
}

TEST(PeerDropCounters, InventedIdentitiesShareOneBoundedEntry) {
  PeerDropCounters drops;
  for (int i = 0; i < 1000; ++i) drops.record("peer-" + std::to_string(i), DropReason::kNoFrames);
  EXPECT_EQ(drops.total(), 1000U);
  EXPECT_EQ(drops.total("(other)"), 1000U - PeerDropCounters::kMaxPeers);
}

TEST(PeerDropCounters, ObserverSeesEveryDropUnderItsBoundedPeerName) {
  PeerDropCounters drops;
  std::vector<std::pair<std::string, DropReason>> seen;
  drops.set_observer(
      [&seen](const std::string& peer, DropReason reason) { seen.emplace_back(peer, reason); });
  for (int i = 0; i < 300; ++i) drops.record("peer-" + std::to_string(i), DropReason::kNoFrames);
  drops.record("peer-0", DropReason::kTagInPast);
  ASSERT_EQ(seen.size(), 301U);
  EXPECT_EQ(seen[0], std::make_pair(std::string("peer-0"), DropReason::kNoFrames));
  EXPECT_EQ(seen[299].first, "(other)");
  EXPECT_EQ(seen[300], std::make_pair(std::string("peer-0"), DropReason::kTagInPast));
}

// A coordinator labels its metrics by configured federate, from the identity itself: past the
// table's 256 names it is still given the identity, beside "(other)".
TEST(PeerDropCounters, AnIdentityObserverIsGivenTheIdentityBesideItsBoundedName) {
  PeerDropCounters drops;
  std::vector<std::pair<std::string, std::string>> seen;
  drops.set_identity_observer([&seen](const std::string& identity, const std::string& peer,
                                      DropReason) { seen.emplace_back(identity, peer); });
  for (int i = 0; i < 300; ++i) drops.record("peer-" + std::to_string(i), DropReason::kNoFrames);
  drops.record("\x01", DropReason::kNoFrames);
  ASSERT_EQ(seen.size(), 301U);
  EXPECT_EQ(seen[0], std::make_pair(std::string("peer-0"), std::string("peer-0")));
  EXPECT_EQ(seen[299], std::make_pair(std::string("peer-299"), std::string("(other)")));
  EXPECT_EQ(seen[300].first, "\x01");  // as recorded, not escaped
  EXPECT_EQ(seen[300].second, "(other)");
}

TEST(PeerDropCounters, IdentitiesAreNamedEscapedAndCutAsTheCoordinatorsLogDoes) {
  PeerDropCounters drops;
  const std::string tail(198, 'r');
  drops.record(std::string("\x01\\") + tail, DropReason::kNoFrames);
  drops.record(std::string("\x02\\") + tail, DropReason::kNoFrames);
  drops.record("", DropReason::kNoFrames);
  // Two identities that differ in one unprintable byte are two peers, named apart.
  EXPECT_EQ(drops.total(std::string("\x01\\") + tail), 1U);
  EXPECT_EQ(drops.total(std::string("\x02\\") + tail), 1U);
  EXPECT_EQ(drops.total("(anonymous)"), 1U);
  std::vector<std::string> names;
  drops.set_observer([&names](const std::string& peer, DropReason) { names.push_back(peer); });
  drops.record(std::string("\x01\\") + tail, DropReason::kNoFrames);
  ASSERT_EQ(names.size(), 1U);
  // 128 bytes of the identity, escaped, then how many were cut.
  EXPECT_EQ(names[0], "\\x01\\\\" + std::string(126, 'r') + "...(72 more bytes)");
}

}  // namespace
}  // namespace tagflow::transport
