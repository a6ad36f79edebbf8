#include "rl/envs/blackjack.hpp"

#include <vector>

#include <gtest/gtest.h>

namespace tagflow::envs {
namespace {

/// Deals dealer {d1, d2} and player {p1, p2} (Gymnasium deals the dealer first).
std::vector<float> deal(Blackjack& env, std::vector<int> cards) {
  env.stack_cards(cards);
  std::vector<float> obs(3);
  env.reset(0, obs);
  return obs;
}

StepResult act(Blackjack& env, int action, std::vector<float>& obs) {
  return env.step(Action::discrete(action), obs);
}

TEST(Blackjack, DealsTheDealerFirstThenThePlayer) {
  Blackjack env;
  const std::vector<float> obs = deal(env, {5, 9, 1, 7});
  EXPECT_EQ(env.dealer(), (std::vector<int>{5, 9}));
  EXPECT_EQ(env.player(), (std::vector<int>{1, 7}));
  EXPECT_EQ(obs, (std::vector<float>{18.0F, 5.0F, 1.0F}));
}

TEST(Blackjack, HittingWithoutBustingContinuesWithRewardZero) {
  Blackjack env;
  std::vector<float> obs = deal(env, {5, 9, 10, 5});
  env.stack_cards({4});
  const StepResult r = act(env, 1, obs);
  EXPECT_EQ(obs, (std::vector<float>{19.0F, 5.0F, 0.0F}));
  EXPECT_FLOAT_EQ(r.reward, 0.0F);
  EXPECT_FALSE(r.terminated);
}

TEST(Blackjack, BustingEndsTheEpisodeWithMinusOne) {
  Blackjack env;
  std::vector<float> obs = deal(env, {5, 9, 10, 9});
  env.stack_cards({5});
  const StepResult r = act(env, 1, obs);
  EXPECT_FLOAT_EQ(obs[0], 24.0F);
  EXPECT_FLOAT_EQ(r.reward, -1.0F);
  EXPECT_TRUE(r.terminated);
  EXPECT_FALSE(r.truncated);
}

TEST(Blackjack, AnAceStopsBeingUsableWhenItWouldBust) {
  Blackjack env;
  std::vector<float> obs = deal(env, {5, 9, 1, 6});
  EXPECT_EQ(obs, (std::vector<float>{17.0F, 5.0F, 1.0F}));
  env.stack_cards({9});
  const StepResult r = act(env, 1, obs);
  EXPECT_EQ(obs, (std::vector<float>{16.0F, 5.0F, 0.0F}));
  EXPECT_FALSE(r.terminated);
}

TEST(Blackjack, DealerDrawsToSeventeenThenHigherScoreWins) {
  Blackjack env;
  std::vector<float> obs = deal(env, {10, 6, 10, 10});
  env.stack_cards({3});
  const StepResult r = act(env, 0, obs);
  EXPECT_EQ(env.dealer(), (std::vector<int>{10, 6, 3}));
  EXPECT_FLOAT_EQ(r.reward, 1.0F);
  EXPECT_TRUE(r.terminated);
}

TEST(Blackjack, DealerBustingLosesToAnyStandingHand) {
  Blackjack env;
  std::vector<float> obs = deal(env, {10, 6, 10, 2});
  env.stack_cards({8});
  EXPECT_FLOAT_EQ(act(env, 0, obs).reward, 1.0F);
}

TEST(Blackjack, EqualScoresDrawAndLowerScoresLose) {
  Blackjack draw;
  std::vector<float> obs = deal(draw, {10, 8, 9, 9});
  EXPECT_FLOAT_EQ(act(draw, 0, obs).reward, 0.0F);
  Blackjack lose;
  obs = deal(lose, {10, 7, 10, 5});
  EXPECT_FLOAT_EQ(act(lose, 0, obs).reward, -1.0F);
}

TEST(Blackjack, DealerStandsOnSoftSeventeen) {
  Blackjack env;
  std::vector<float> obs = deal(env, {1, 6, 10, 8});
  EXPECT_FLOAT_EQ(act(env, 0, obs).reward, 1.0F);
  EXPECT_EQ(env.dealer().size(), 2U);
}

TEST(Blackjack, DefaultRulesPayANaturalLikeAnyWin) {
  Blackjack env;
  std::vector<float> obs = deal(env, {10, 7, 1, 10});
  EXPECT_FLOAT_EQ(act(env, 0, obs).reward, 1.0F);
  // Without sab a natural does not beat a dealer's drawn 21.
  Blackjack tie;
  obs = deal(tie, {6, 10, 10, 1});
  tie.stack_cards({5});
  EXPECT_FLOAT_EQ(act(tie, 0, obs).reward, 0.0F);
}

TEST(Blackjack, NaturalOptionPaysOneAndAHalf) {
  Blackjack env(BlackjackOptions{true, false});
  std::vector<float> obs = deal(env, {10, 7, 1, 10});
  EXPECT_FLOAT_EQ(act(env, 0, obs).reward, 1.5F);
}

TEST(Blackjack, SuttonBartoRulesLetANaturalBeatADrawnTwentyOne) {
  Blackjack env(BlackjackOptions{false, true});
  std::vector<float> obs = deal(env, {6, 10, 10, 1});
  env.stack_cards({5});
  EXPECT_FLOAT_EQ(act(env, 0, obs).reward, 1.0F);
  Blackjack both(BlackjackOptions{false, true});
  obs = deal(both, {1, 10, 10, 1});
  EXPECT_FLOAT_EQ(act(both, 0, obs).reward, 0.0F);
}

TEST(Blackjack, SeededDealsRepeatAndCardsFollowTheDeck) {
  Blackjack a;
  Blackjack b;
  std::vector<float> oa(3);
  std::vector<float> ob(3);
  int tens = 0;
  int cards = 0;
  for (std::uint64_t seed = 0; seed < 2000; ++seed) {
    a.reset(seed, oa);
    b.reset(seed, ob);
    ASSERT_EQ(oa, ob);
    ASSERT_EQ(a.player(), b.player());
    for (int c : a.player()) {
      ASSERT_GE(c, 1);
      ASSERT_LE(c, 10);
      tens += c == 10 ? 1 : 0;
      ++cards;
    }
  }
  // 4 of the 13 ranks are worth ten: expect about 1231 of 4000 cards.
  EXPECT_NEAR(static_cast<double>(tens) / cards, 4.0 / 13.0, 0.03);
}

TEST(Blackjack, HasNoTimeLimit) {
  Blackjack env;
  EXPECT_EQ(env.spec().max_episode_steps, 0);
  EXPECT_EQ(env.spec().observation_space.to_string(), "MultiDiscrete([32, 11, 2])");
}

}  // namespace
}  // namespace tagflow::envs
