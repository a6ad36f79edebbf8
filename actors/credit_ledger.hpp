// CreditLedger: the sender's side of credit-based flow control for one output port.
//
// CAF mailboxes are unbounded; without flow control a fast sampler grows a slow replay's mailbox
// until memory runs out. In tagflow's actor mode a receiver grants credits (a Credit message,
// actors/control_messages.hpp) and a sender sends on a link only while it holds credit there:
// every send spends one credit, the receiver grants one back after it has handled the message.
// So at most `window` messages per link are ever queued or in flight, whatever the speeds.
//
// The ledger keeps, per downstream actor of one port, its handle and its credits. Senders call
// add_credit() when a Credit arrives (a new actor becomes a downstream), try_spend() before each
// send, remove() when a peer leaves or goes down. Value type; not thread-safe (an actor's own
// state, used only from its handlers).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_addr.hpp>

namespace tagflow::actors {

/// The credit window receivers grant a new sender (messages in flight per link).
inline constexpr std::uint32_t kDefaultCreditWindow = 4;

class CreditLedger {
 public:
  struct Downstream {
    caf::actor handle;
    std::uint32_t credits = 0;
    bool dirty = false;        // latest-value links: a newer value waits for credit
    std::uint32_t window = 0;  // the receiver's first grant: what it lets be unanswered
  };

  explicit CreditLedger(std::string port) : port_(std::move(port)) {}

  [[nodiscard]] const std::string& port() const { return port_; }
  /// Adds `amount` credits for `peer`, making it a downstream if it is new. Returns true if new.
  bool add_credit(const caf::actor& peer, std::uint32_t amount);
  /// Spends one credit of `peer`; false (nothing spent) when it has none or is unknown.
  [[nodiscard]] bool try_spend(const caf::actor_addr& peer);
  /// Forgets `peer`; returns true if it was a downstream.
  bool remove(const caf::actor_addr& peer);
  /// True when every downstream holds at least one credit (and there is at least one).
  [[nodiscard]] bool all_have_credit() const;
  [[nodiscard]] std::uint32_t credits(const caf::actor_addr& peer) const;
  /// Messages sent to `peer` that it has not answered with a credit yet: its first grant (the
  /// window) minus the credits held (0 for an unknown peer). Every receiver grants one back per
  /// message handled, so these were in flight, queued, or handled with the credit held back.
  [[nodiscard]] std::uint32_t unanswered(const caf::actor_addr& peer) const;
  [[nodiscard]] std::vector<Downstream>& downstreams() { return downstreams_; }
  [[nodiscard]] const std::vector<Downstream>& downstreams() const { return downstreams_; }
  [[nodiscard]] bool empty() const { return downstreams_.empty(); }

 private:
  Downstream* find(const caf::actor_addr& peer);
  const Downstream* find(const caf::actor_addr& peer) const;

  std::string port_;
  std::vector<Downstream> downstreams_;
};

}  // namespace tagflow::actors
