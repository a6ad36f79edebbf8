#include "actors/credit_ledger.hpp"

#include <algorithm>

namespace tagflow::actors {

bool CreditLedger::add_credit(const caf::actor& peer, std::uint32_t amount) {
  if (Downstream* d = find(peer.address())) {
    d->credits += amount;
    return false;
  }
  downstreams_.push_back(Downstream{peer, amount, false, amount});
  return true;
}

bool CreditLedger::try_spend(const caf::actor_addr& peer) {
  Downstream* d = find(peer);
  if (d == nullptr || d->credits == 0) return false;
  --d->credits;
  return true;
}

bool CreditLedger::remove(const caf::actor_addr& peer) {
  const auto it = std::find_if(downstreams_.begin(), downstreams_.end(),
                               [&](const Downstream& d) { return d.handle.address() == peer; });
  if (it == downstreams_.end()) return false;
  downstreams_.erase(it);
  return true;
}

bool CreditLedger::all_have_credit() const {
  if (downstreams_.empty()) return false;
  return std::all_of(downstreams_.begin(), downstreams_.end(),
                     [](const Downstream& d) { return d.credits > 0; });
}

std::uint32_t CreditLedger::credits(const caf::actor_addr& peer) const {
  const Downstream* d = find(peer);
  return d == nullptr ? 0 : d->credits;
}

std::uint32_t CreditLedger::unanswered(const caf::actor_addr& peer) const {
  const Downstream* d = find(peer);
  return d == nullptr || d->credits >= d->window ? 0 : d->window - d->credits;
}

CreditLedger::Downstream* CreditLedger::find(const caf::actor_addr& peer) {
  for (Downstream& d : downstreams_)
    if (d.handle.address() == peer) return &d;
  return nullptr;
}

const CreditLedger::Downstream* CreditLedger::find(const caf::actor_addr& peer) const {
  for (const Downstream& d : downstreams_)
    if (d.handle.address() == peer) return &d;
  return nullptr;
}

}  // namespace tagflow::actors
