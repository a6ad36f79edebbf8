#include "rl/envs/blackjack.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "rl/envs/random.hpp"

namespace tagflow::envs {
namespace {

constexpr int kDeck[13] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10};

EnvSpec blackjack_spec() {
  EnvSpec spec;
  spec.id = "Blackjack-v1";
  spec.observation_space = Space::multi_discrete({32, 11, 2});
  spec.action_space = Space::discrete(2);
  return spec;
}

}  // namespace

const EnvSpec& Blackjack::spec() const noexcept {
  static const EnvSpec spec = blackjack_spec();
  return spec;
}

void Blackjack::stack_cards(const std::vector<int>& cards) {
  for (int c : cards) {
    if (c < 1 || c > 10) throw std::invalid_argument("Blackjack card values are 1..10");
    stacked_.push_back(c);
  }
}

int Blackjack::draw_card() {
  if (!stacked_.empty()) {
    const int card = stacked_.front();
    stacked_.pop_front();
    return card;
  }
  return kDeck[uniform_index(rng(), 13)];
}

bool Blackjack::usable_ace(const std::vector<int>& hand) noexcept {
  const int total = std::accumulate(hand.begin(), hand.end(), 0);
  return std::find(hand.begin(), hand.end(), 1) != hand.end() && total + 10 <= 21;
}

int Blackjack::sum_hand(const std::vector<int>& hand) noexcept {
  const int total = std::accumulate(hand.begin(), hand.end(), 0);
  return usable_ace(hand) ? total + 10 : total;
}

int Blackjack::score(const std::vector<int>& hand) noexcept {
  const int total = sum_hand(hand);
  return total > 21 ? 0 : total;
}

bool Blackjack::is_natural(const std::vector<int>& hand) noexcept {
  return hand.size() == 2 && std::min(hand[0], hand[1]) == 1 && std::max(hand[0], hand[1]) == 10;
}

void Blackjack::reset_impl(void* observation) {
  dealer_.clear();
  player_.clear();
  dealer_.push_back(draw_card());
  dealer_.push_back(draw_card());
  player_.push_back(draw_card());
  player_.push_back(draw_card());
  observe_impl(observation);
}

StepResult Blackjack::step_impl(const Action& action, void* observation) {
  StepResult result;
  if (action.index == 1) {
    player_.push_back(draw_card());
    result.terminated = sum_hand(player_) > 21;
    result.reward = result.terminated ? -1.0F : 0.0F;
  } else {
    result.terminated = true;
    while (sum_hand(dealer_) < 17) dealer_.push_back(draw_card());
    const int player_score = score(player_);
    const int dealer_score = score(dealer_);
    float reward =
        static_cast<float>((player_score > dealer_score) - (player_score < dealer_score));
    if (options_.sab && is_natural(player_) && !is_natural(dealer_)) {
      reward = 1.0F;
    } else if (!options_.sab && options_.natural && is_natural(player_) && reward == 1.0F) {
      reward = 1.5F;
    }
    result.reward = reward;
  }
  observe_impl(observation);
  return result;
}

void Blackjack::observe_impl(void* observation) const {
  auto* out = static_cast<float*>(observation);
  out[0] = static_cast<float>(sum_hand(player_));
  out[1] = static_cast<float>(dealer_.empty() ? 0 : dealer_[0]);
  out[2] = usable_ace(player_) ? 1.0F : 0.0F;
}

}  // namespace tagflow::envs
