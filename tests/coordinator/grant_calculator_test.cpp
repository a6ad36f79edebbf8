#include "coordinator/grant_calculator.hpp"

#include <gtest/gtest.h>

namespace tagflow::coordinator {
namespace {

using transport::kForever;
using transport::previous_tag;

/// Builds a spec from "from->to" edges with delays (nullopt: no delay).
FederationSpec spec_of(
    const std::vector<std::string>& ids,
    const std::vector<std::tuple<std::string, std::string, ConnectionDelay>>& edges) {
  FederationSpec spec;
  for (const std::string& id : ids) spec.federates.push_back({id, {}, {}});
  for (const auto& [from, to, delay] : edges) {
    for (FederateSpec& f : spec.federates) {
      if (f.id == to) f.upstreams.push_back({from, delay});
      if (f.id == from) f.downstreams.push_back(to);
    }
  }
  spec.validate();
  return spec;
}

std::optional<GrantDecision> grant_for(std::vector<GrantDecision> grants, std::size_t federate) {
  for (GrantDecision& g : grants) {
    if (g.federate == federate) return g;
  }
  return std::nullopt;
}

TEST(GrantCalculator, FederateWithoutUpstreamsIsGrantedForever) {
  GrantCalculator calc(spec_of({"source"}, {}));
  calc.on_next_event(0, {0, 0});
  const auto grant = grant_for(calc.take_new_grants(), 0);
  ASSERT_TRUE(grant.has_value());
  EXPECT_EQ(grant->tag, kForever);
  EXPECT_FALSE(grant->provisional);
  EXPECT_TRUE(calc.take_new_grants().empty()) << "a grant is sent once";
}

TEST(GrantCalculator, DelayedConnectionGrantsUpToJustBeforeUpstreamBoundPlusDelay) {
  GrantCalculator calc(spec_of({"a", "b"}, {{"a", "b", 10}}));
  calc.on_next_event(0, {0, 0});
  calc.on_next_event(1, {0, 0});
  auto grant = grant_for(calc.take_new_grants(), 1);
  ASSERT_TRUE(grant.has_value());
  EXPECT_EQ(grant->tag, previous_tag({10, 0}));
  calc.on_next_event(1, {20, 0});
  EXPECT_FALSE(grant_for(calc.take_new_grants(), 1).has_value()) << "a may still send at 10";
  calc.on_completed(0, {0, 0});
  calc.on_next_event(0, {15, 0});
  grant = grant_for(calc.take_new_grants(), 1);
  ASSERT_TRUE(grant.has_value());
  EXPECT_EQ(grant->tag, previous_tag({25, 0}));
}

TEST(GrantCalculator, ZeroDelayDownstreamWaitsForTheUpstreamToCompleteTheTag) {
  GrantCalculator calc(spec_of({"a", "b"}, {{"a", "b", std::nullopt}}));
  calc.on_next_event(0, {5, 0});
  calc.on_next_event(1, {5, 0});
  EXPECT_FALSE(grant_for(calc.take_new_grants(), 1).has_value());
  calc.on_completed(0, {5, 0});
  const auto grant = grant_for(calc.take_new_grants(), 1);
  ASSERT_TRUE(grant.has_value());
  EXPECT_EQ(grant->tag, (WireTag{5, 0}));
}

TEST(GrantCalculator, BoundsPropagateTransitivelyAlongAChain) {
  GrantCalculator calc(spec_of({"a", "b", "c"}, {{"a", "b", 10}, {"b", "c", 10}}));
  calc.on_next_event(0, {100, 0});
  calc.on_next_event(1, {1000, 0});  // b's own next event is late, but a can wake it at 110
  calc.on_next_event(2, {0, 0});
  const auto grant = grant_for(calc.take_new_grants(), 2);
  ASSERT_TRUE(grant.has_value());
  EXPECT_EQ(grant->tag, previous_tag({120, 0}));
  EXPECT_EQ(calc.earliest_incoming(2), (WireTag{120, 0}));
}

TEST(GrantCalculator, MessagesInTransitHoldBackTheReceiversDownstreams) {
  GrantCalculator calc(spec_of({"a", "b", "c"}, {{"a", "b", 0}, {"b", "c", 0}}));
  calc.on_next_event(1, {50, 0});
  calc.on_next_event(2, {0, 0});
  calc.on_in_transit(0, 1, {3, 1});  // a sent b a message at (3, 1): b will react at 3
  calc.on_resigned(0);
  const auto grant = grant_for(calc.take_new_grants(), 2);
  ASSERT_TRUE(grant.has_value());
  EXPECT_EQ(grant->tag, (WireTag{3, 1}));  // b may send at (3, 1) + 1 microstep
  calc.on_completed(1, {3, 1});
  calc.on_next_event(2, {10, 0});
  EXPECT_EQ(calc.earliest_incoming(2), (WireTag{50, 1}));
}

TEST(GrantCalculator, GrantsCountTheMessagesSentAtOrBeforeTheGrantedTag) {
  GrantCalculator calc(spec_of({"a", "b"}, {{"a", "b", 0}}));
  calc.on_in_transit(0, 1, {1, 1});
  calc.on_in_transit(0, 1, {2, 1});
  calc.on_in_transit(0, 1, {9, 1});
  calc.on_completed(0, {5, 0});
  calc.on_next_event(0, {9, 0});
  calc.on_next_event(1, {1, 1});
  const auto grant = grant_for(calc.take_new_grants(), 1);
  ASSERT_TRUE(grant.has_value());
  EXPECT_EQ(grant->tag, (WireTag{9, 0}));  // a completed 5 and sleeps until 9 (+1 microstep)
  ASSERT_EQ(grant->counts.size(), 1U);
  EXPECT_EQ(grant->counts[0].first, "a");
  EXPECT_EQ(grant->counts[0].second, 2U) << "messages at (1, 1) and (2, 1), not (9, 1)";
  calc.on_completed(1, {2, 1});
  calc.on_next_event(1, {9, 1});
  EXPECT_FALSE(grant_for(calc.take_new_grants(), 1).has_value());
  calc.on_completed(0, {9, 0});
  const auto later = grant_for(calc.take_new_grants(), 1);
  ASSERT_TRUE(later.has_value());
  EXPECT_EQ(later->tag, (WireTag{9, 1}));
  EXPECT_EQ(later->counts[0].second, 3U);
}

TEST(GrantCalculator, CycleWithADelayNeedsNoProvisionalGrant) {
  GrantCalculator calc(spec_of({"a", "b"}, {{"a", "b", std::nullopt}, {"b", "a", 0}}));
  EXPECT_FALSE(calc.in_zero_delay_cycle(0));
  calc.on_next_event(0, {5, 0});
  calc.on_next_event(1, {5, 0});
  auto grants = calc.take_new_grants();
  const auto a = grant_for(grants, 0);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->tag, (WireTag{5, 0}));
  EXPECT_FALSE(grant_for(grants, 1).has_value());
  calc.on_completed(0, {5, 0});
  calc.on_next_event(0, {5, 1});
  const auto b = grant_for(calc.take_new_grants(), 1);
  ASSERT_TRUE(b.has_value());
  EXPECT_FALSE(b->provisional);
  EXPECT_EQ(b->tag, (WireTag{5, 0}));
}

TEST(GrantCalculator, ZeroDelayCycleAcrossFederatesGetsProvisionalGrants) {
  GrantCalculator calc(spec_of(
      {"a", "b", "src"}, {{"a", "b", std::nullopt}, {"b", "a", std::nullopt}, {"src", "a", 100}}));
  EXPECT_TRUE(calc.in_zero_delay_cycle(0));
  EXPECT_TRUE(calc.in_zero_delay_cycle(1));
  EXPECT_FALSE(calc.in_zero_delay_cycle(2));
  calc.on_next_event(2, {0, 0});
  calc.on_next_event(0, {5, 0});
  calc.on_next_event(1, {5, 0});
  const auto grants = calc.take_new_grants();
  const auto a = grant_for(grants, 0);
  const auto b = grant_for(grants, 1);
  ASSERT_TRUE(a.has_value());
  ASSERT_TRUE(b.has_value());
  EXPECT_TRUE(a->provisional);
  EXPECT_EQ(a->tag, (WireTag{5, 0}));
  EXPECT_TRUE(b->provisional);
  EXPECT_TRUE(calc.take_new_grants().size() <= 1U) << "PTAG is not repeated";
}

TEST(GrantCalculator, CycleMemberGetsProvisionalGrantWithACycleMessageInTransitAtItsTag) {
  GrantCalculator calc(spec_of({"a", "b"}, {{"a", "b", std::nullopt}, {"b", "a", std::nullopt}}));
  calc.on_next_event(0, {5, 0});
  calc.on_next_event(1, {10, 0});
  const auto grants = calc.take_new_grants();
  ASSERT_TRUE(grant_for(grants, 0).has_value());
  EXPECT_FALSE(grant_for(grants, 1).has_value());
  // a sent b a message at 5 (an output of the cycle): b may still run 5 provisionally.
  ASSERT_TRUE(calc.on_in_transit(0, 1, {5, 0}));
  calc.on_next_event(1, {5, 0});
  const auto b = grant_for(calc.take_new_grants(), 1);
  ASSERT_TRUE(b.has_value());
  EXPECT_TRUE(b->provisional);
  EXPECT_EQ(b->tag, (WireTag{5, 0}));
  // The grant counts only messages below 5: the one at 5 is waited for inside the tag.
  ASSERT_EQ(b->counts.size(), 1U);
  EXPECT_EQ(b->counts[0].second, 0U);
}

TEST(GrantCalculator, ProvisionalGrantWaitsForOutsideUpstreams) {
  GrantCalculator calc(
      spec_of({"a", "b", "src"},
              {{"a", "b", std::nullopt}, {"b", "a", std::nullopt}, {"src", "a", std::nullopt}}));
  calc.on_next_event(2, {5, 0});  // src may still send to a at 5
  calc.on_next_event(0, {5, 0});
  calc.on_next_event(1, {5, 0});
  EXPECT_FALSE(grant_for(calc.take_new_grants(), 0).has_value());
}

TEST(GrantCalculator, ResignedUpstreamsNoLongerHoldAnyoneBack) {
  GrantCalculator calc(spec_of({"a", "b"}, {{"a", "b", std::nullopt}}));
  calc.on_next_event(1, {7, 0});
  EXPECT_FALSE(grant_for(calc.take_new_grants(), 1).has_value());
  calc.on_resigned(0);
  const auto grant = grant_for(calc.take_new_grants(), 1);
  ASSERT_TRUE(grant.has_value());
  EXPECT_EQ(grant->tag, kForever);
}

}  // namespace
}  // namespace tagflow::coordinator
