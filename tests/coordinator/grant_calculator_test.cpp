#include "coordinator/grant_calculator.hpp"

#include <gtest/gtest.h>

namespace tagflow::coordinator {
namespace {

using transport::kForever;

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
  EXPECT_EQ(grant->tag, WireTag(10, 0).predecessor());
  calc.on_next_event(1, {20, 0});
  EXPECT_FALSE(grant_for(calc.take_new_grants(), 1).has_value()) << "a may still send at 10";
  calc.on_completed(0, {0, 0});
  calc.on_next_event(0, {15, 0});
  grant = grant_for(calc.take_new_grants(), 1);
  ASSERT_TRUE(grant.has_value());
  EXPECT_EQ(grant->tag, WireTag(25, 0).predecessor());
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
  EXPECT_EQ(grant->tag, WireTag(120, 0).predecessor());
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
  EXPECT_EQ(grant->tag, (WireTag{3, 1}));        // b may send at (3, 1) + 1 microstep
  calc.on_completed(1, {3, 1}, WireTag{50, 0});  // b's next tag is 50 again
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

TEST(GrantCalculator, MessageInTransitGetsItsReceiverAGrantWithoutANewNet) {
  GrantCalculator calc(spec_of({"a", "b"}, {{"a", "b", std::nullopt}}));
  calc.on_next_event(0, {3, 0});
  calc.on_next_event(1, {1, 0});
  const auto first = grant_for(calc.take_new_grants(), 1);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->tag, transport::WireTag(3, 0).predecessor());
  // b completes 1 and sends no new NET: its NET (1) is stale from now on.
  calc.on_completed(1, {1, 0});
  EXPECT_FALSE(grant_for(calc.take_new_grants(), 1).has_value()) << "nothing asks for more";
  // a sends b a message at 5: b is granted past it at once, carrying the count.
  ASSERT_TRUE(calc.on_in_transit(0, 1, {5, 0}));
  calc.on_completed(0, {5, 0});
  calc.on_next_event(0, {9, 0});
  const auto second = grant_for(calc.take_new_grants(), 1);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->tag, transport::WireTag(9, 0).predecessor());
  ASSERT_EQ(second->counts.size(), 1U);
  EXPECT_EQ(second->counts[0].second, 1U);
}

// A federate whose last frame said it may defer its reports (reporting 2) is granted its
// messages by their senders' notices: a message in transit earns it no grant from here, its NET
// still does, and so does the message once it reports every wait again.
TEST(GrantCalculator, AMessageInTransitToADeferringFederateEarnsItNoGrantButItsNetDoes) {
  GrantCalculator calc(spec_of({"a", "b"}, {{"a", "b", std::nullopt}}));
  calc.on_next_event(0, {3, 0});
  calc.on_completed(1, {1, 0}, transport::WireTag(100, 0));
  calc.set_deferring(1, true);
  (void)calc.take_new_grants();
  ASSERT_TRUE(calc.on_in_transit(0, 1, {5, 0}));
  calc.on_completed(0, {5, 0}, transport::WireTag(9, 0));
  EXPECT_FALSE(grant_for(calc.take_new_grants(), 1).has_value());
  calc.on_next_event(1, {5, 0});  // it reports its wait
  const auto by_net = grant_for(calc.take_new_grants(), 1);
  ASSERT_TRUE(by_net.has_value());
  EXPECT_EQ(by_net->tag, transport::WireTag(9, 0).predecessor());

  calc.on_completed(1, {5, 0}, transport::WireTag(100, 0));
  ASSERT_TRUE(calc.on_in_transit(0, 1, {12, 0}));
  calc.on_completed(0, {12, 0}, transport::WireTag(20, 0));
  EXPECT_FALSE(grant_for(calc.take_new_grants(), 1).has_value());
  calc.set_deferring(1, false);
  const auto by_message = grant_for(calc.take_new_grants(), 1);
  ASSERT_TRUE(by_message.has_value());
  EXPECT_EQ(by_message->tag, transport::WireTag(20, 0).predecessor());
}

TEST(GrantCalculator, AnLtcWithoutTheNextTagLeavesTheFederateFreeToSendRightAfterIt) {
  // u -> a -> b without delays. a announced 10, but the input at 5 may schedule an earlier event
  // of its own (its grant lets it run that without asking): only a next tag sent with the LTC
  // says what a will do after 5.
  GrantCalculator calc(
      spec_of({"u", "a", "b"}, {{"u", "a", std::nullopt}, {"a", "b", std::nullopt}}));
  calc.on_next_event(0, {5, 0});
  calc.on_next_event(1, {10, 0});
  calc.on_next_event(2, {8, 0});
  (void)calc.take_new_grants();
  ASSERT_TRUE(calc.on_in_transit(0, 1, {5, 0}));
  calc.on_completed(0, {5, 0}, kForever);
  const auto a = grant_for(calc.take_new_grants(), 1);
  ASSERT_TRUE(a.has_value()) << "a has a message in transit to it";
  EXPECT_EQ(a->tag, kForever);
  EXPECT_FALSE(grant_for(calc.take_new_grants(), 2).has_value());

  calc.on_completed(1, {5, 0});  // without the next tag
  EXPECT_FALSE(grant_for(calc.take_new_grants(), 2).has_value())
      << "a may send at (5, 1): its NET of 10 no longer bounds it";
  calc.on_completed(1, {5, 0}, WireTag{7, 0});  // its event at 7 (the tag is not new)
  EXPECT_FALSE(grant_for(calc.take_new_grants(), 2).has_value()) << "a may send at 7";
  calc.on_completed(1, {7, 0}, kForever);
  const auto b = grant_for(calc.take_new_grants(), 2);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->tag, kForever);
}

TEST(GrantCalculator, TheNextTagInAnLtcReleasesACycleWithoutAnotherNet) {
  // sampler -> inference without delay, inference -> sampler after 1 ms, learner -> inference
  // after 1 ms. Inference completes 0 with the weights at 1 ms on their way to it and sends no
  // NET for 1 ms (an input asks for it): the next tag in its LTC is what lets the sampler go on.
  GrantCalculator calc(
      spec_of({"sampler", "inference", "learner"}, {{"sampler", "inference", std::nullopt},
                                                    {"inference", "sampler", 1'000'000},
                                                    {"learner", "inference", 1'000'000}}));
  for (std::size_t f = 0; f < 3; ++f) calc.on_next_event(f, {0, 0});
  (void)calc.take_new_grants();
  calc.on_completed(0, {0, 0}, WireTag{1'000'000, 0});
  ASSERT_TRUE(calc.on_in_transit(2, 1, {1'000'000, 0}));
  calc.on_completed(2, {0, 0}, kForever);
  (void)calc.take_new_grants();
  calc.on_completed(1, {0, 0}, kForever);
  const auto sampler = grant_for(calc.take_new_grants(), 0);
  ASSERT_TRUE(sampler.has_value());
  EXPECT_GE(sampler->tag, (WireTag{1'000'000, 0}));
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
