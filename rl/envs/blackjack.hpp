// Blackjack-v1 as in Gymnasium's toy_text/blackjack.py (natural=False, sab=False by default).
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "rl/envs/env.hpp"

namespace tagflow::envs {

/// Rule switches, as Gymnasium's keyword arguments.
struct BlackjackOptions {
  /// Pay 1.5 for a winning natural (ace + ten-valued card). Ignored when sab is true.
  bool natural = false;
  /// Sutton & Barto's rules: a player's natural wins (+1) unless the dealer also has one (0).
  /// Note: Gymnasium's registered "Blackjack-v1" passes sab=True; tagflow's id uses the class
  /// defaults (both false), which is what the RL paper's benchmark harness ran.
  bool sab = false;
};

/// Blackjack against a dealer, cards drawn with replacement from an infinite deck
/// {A, 2..9, 10, J, Q, K} (face cards count 10, an ace 11 while that does not bust).
///
/// Reset deals the dealer two cards, then the player two. Action 1 (hit) adds a card: a bust
/// ends the episode with −1, otherwise reward 0. Action 0 (stick) ends the episode: the dealer
/// draws until reaching 17 or more, then +1 / 0 / −1 for a higher / equal / lower score (a bust
/// scores 0). Observation float32 [player sum, dealer's showing card (1 = ace), usable ace 0/1],
/// space MultiDiscrete([32, 11, 2]). No time limit. See Env for errors and threads.
class Blackjack final : public Env {
 public:
  Blackjack() = default;
  explicit Blackjack(const BlackjackOptions& options) : options_(options) {}

  [[nodiscard]] const EnvSpec& spec() const noexcept override;

  /// The hands as dealt so far (card values 1..10).
  [[nodiscard]] const std::vector<int>& player() const noexcept { return player_; }
  [[nodiscard]] const std::vector<int>& dealer() const noexcept { return dealer_; }

  /// Test seam: the next cards drawn (values 1..10), in order, before the generator resumes.
  void stack_cards(const std::vector<int>& cards);

  static int sum_hand(const std::vector<int>& hand) noexcept;
  static bool usable_ace(const std::vector<int>& hand) noexcept;
  static bool is_natural(const std::vector<int>& hand) noexcept;

  // Implementation hooks, public for non-virtual batch stepping (env_batch.hpp).
  void reset_impl(void* observation) override;
  StepResult step_impl(const Action& action, void* observation) override;
  void observe_impl(void* observation) const override;

 private:
  int draw_card();
  static int score(const std::vector<int>& hand) noexcept;

  BlackjackOptions options_;
  std::vector<int> player_;
  std::vector<int> dealer_;
  std::deque<int> stacked_;
};

}  // namespace tagflow::envs
