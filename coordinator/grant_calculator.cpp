#include "coordinator/grant_calculator.hpp"

#include <algorithm>

namespace tagflow::coordinator {

using transport::delayed;
using transport::kForever;
using transport::kNever;

GrantCalculator::GrantCalculator(const FederationSpec& spec) {
  federates_.resize(spec.federates.size());
  for (std::size_t i = 0; i < spec.federates.size(); ++i) {
    federates_[i].id = spec.federates[i].id;
    federates_[i].next_event = spec.start_tag;
  }
  for (std::size_t i = 0; i < spec.federates.size(); ++i) {
    for (const UpstreamLink& link : spec.federates[i].upstreams) {
      const std::size_t from = index_of(link.federate);
      federates_[i].inbound.push_back(Inbound{from, link.delay, {}, 0});
      federates_[from].outbound.push_back(i);
    }
  }
  // Zero-delay reachability (connections without delay), then the cycles through each federate.
  const std::size_t n = federates_.size();
  std::vector<std::vector<bool>> reaches(n, std::vector<bool>(n, false));
  for (std::size_t start = 0; start < n; ++start) {
    std::vector<std::size_t> stack{start};
    while (!stack.empty()) {
      const std::size_t at = stack.back();
      stack.pop_back();
      for (std::size_t to : federates_[at].outbound) {
        for (const Inbound& in : federates_[to].inbound) {
          if (in.from != at || in.delay.has_value() || reaches[start][to]) continue;
          reaches[start][to] = true;
          stack.push_back(to);
        }
      }
    }
  }
  for (std::size_t f = 0; f < n; ++f) {
    federates_[f].in_zero_delay_cycle = reaches[f][f];
    federates_[f].zero_delay_group.assign(n, false);
    for (std::size_t g = 0; g < n; ++g) {
      federates_[f].zero_delay_group[g] = g == f || (reaches[f][g] && reaches[g][f]);
    }
  }
}

std::size_t GrantCalculator::index_of(const std::string& id) const {
  for (std::size_t i = 0; i < federates_.size(); ++i) {
    if (federates_[i].id == id) return i;
  }
  return federates_.size();
}

void GrantCalculator::on_next_event(std::size_t federate, const WireTag& tag) {
  federates_[federate].next_event = tag;
}

void GrantCalculator::on_completed(std::size_t federate, const WireTag& tag,
                                   const std::optional<WireTag>& next) {
  State& state = federates_[federate];
  if (next) state.next_event = *next;
  if (tag <= state.completed) return;
  state.completed = tag;
  // Its NET bounded its events when it was sent; tags it processed since, inside its grant, may
  // have scheduled earlier ones. Without a next tag in the LTC, nothing after it is known.
  if (!next) state.next_event = std::min(state.next_event, tag);
  for (Inbound& in : state.inbound) {
    while (!in.in_transit.empty() && in.in_transit.front() <= tag) {
      in.in_transit.pop_front();
      ++in.completed_count;
    }
  }
}

bool GrantCalculator::waits_for_grant(std::size_t federate) const {
  const State& state = federates_[federate];
  return !state.resigned && state.next_event != transport::kForever &&
         state.next_event > state.granted && state.next_event > state.completed;
}

bool GrantCalculator::on_in_transit(std::size_t sender, std::size_t destination,
                                    const WireTag& tag) {
  for (Inbound& in : federates_[destination].inbound) {
    if (in.from != sender) continue;
    if (tag <= federates_[destination].completed) {
      ++in.completed_count;  // late: the receiver will drop it, but counts must still add up
    } else {
      in.in_transit.insert(std::upper_bound(in.in_transit.begin(), in.in_transit.end(), tag), tag);
    }
    return true;
  }
  return false;
}

void GrantCalculator::on_resigned(std::size_t federate) {
  federates_[federate].resigned = true;
  federates_[federate].next_event = kForever;
}

std::vector<WireTag> GrantCalculator::send_bounds(const std::vector<bool>& excluded) const {
  const std::size_t n = federates_.size();
  // Generalized Dijkstra: every edge function (delay) and node function (max with LTC+) is
  // monotone and never lowers a tag, so settling the smallest tentative bound first is exact.
  std::vector<WireTag> tentative(n, kForever);
  std::vector<bool> settled(n, false);
  for (std::size_t u = 0; u < n; ++u) {
    const State& s = federates_[u];
    if (s.resigned) continue;
    // An excluded federate (a member of the zero-delay cycle being checked for PTAG) counts with
    // neither its NET nor the messages in transit to it: what it sends at the tag in question is
    // an output of the cycle, which the federate waits for inside the tag (§3.7).
    WireTag own = excluded[u] ? kForever : s.next_event;
    for (const Inbound& in : s.inbound) {
      if (!excluded[u] && !in.in_transit.empty()) own = std::min(own, in.in_transit.front());
    }
    tentative[u] = std::max(s.completed.next_microstep(), own);
    if (s.completed == kNever) tentative[u] = own;
  }
  for (std::size_t round = 0; round < n; ++round) {
    std::size_t best = n;
    for (std::size_t u = 0; u < n; ++u) {
      if (!settled[u] && (best == n || tentative[u] < tentative[best])) best = u;
    }
    if (best == n || tentative[best] == kForever) break;
    settled[best] = true;
    for (std::size_t to : federates_[best].outbound) {
      const State& target = federates_[to];
      if (settled[to] || target.resigned) continue;
      for (const Inbound& in : target.inbound) {
        if (in.from != best) continue;
        WireTag candidate = delayed(tentative[best], in.delay);
        if (target.completed != kNever) {
          candidate = std::max(candidate, target.completed.next_microstep());
        }
        tentative[to] = std::min(tentative[to], candidate);
      }
    }
  }
  return tentative;
}

WireTag GrantCalculator::incoming_from(const std::vector<WireTag>& bounds,
                                       std::size_t federate) const {
  WireTag earliest = kForever;
  for (const Inbound& in : federates_[federate].inbound) {
    if (federates_[in.from].resigned) continue;
    earliest = std::min(earliest, delayed(bounds[in.from], in.delay));
  }
  return earliest;
}

WireTag GrantCalculator::earliest_incoming(std::size_t federate) const {
  return incoming_from(send_bounds(std::vector<bool>(federates_.size(), false)), federate);
}

std::vector<std::pair<std::string, std::uint64_t>> GrantCalculator::counts_up_to(
    std::size_t federate, const WireTag& tag) const {
  std::vector<std::pair<std::string, std::uint64_t>> counts;
  for (const Inbound& in : federates_[federate].inbound) {
    const auto pending =
        std::upper_bound(in.in_transit.begin(), in.in_transit.end(), tag) - in.in_transit.begin();
    counts.emplace_back(federates_[in.from].id,
                        in.completed_count + static_cast<std::uint64_t>(pending));
  }
  return counts;
}

std::vector<GrantDecision> GrantCalculator::take_new_grants() {
  std::vector<GrantDecision> grants;
  const std::vector<WireTag> bounds = send_bounds(std::vector<bool>(federates_.size(), false));
  for (std::size_t f = 0; f < federates_.size(); ++f) {
    State& state = federates_[f];
    // Only a federate that will want a tag beyond what it holds is granted anything: one waiting
    // on its NET, or one a data message is in transit to. The second is granted without waiting
    // for the NET the message will cause, which saves a round trip per hop (§4.4).
    // A NET at or below what the federate holds is stale (a grant sent ahead answered it
    // already); so are messages below its grant. A federate that defers its reports is granted
    // its messages by their senders' notices, which follow them on the data path; a grant for
    // them would arrive after they ran and wake it for nothing (§4.4).
    if (state.resigned) continue;
    const WireTag held = std::max(state.granted, state.completed);
    bool waiting = state.next_event > held;
    WireTag wanted = waiting ? state.next_event : kForever;
    for (const Inbound& in : state.inbound) {
      const auto above = std::upper_bound(in.in_transit.begin(), in.in_transit.end(), held);
      if (state.deferring || above == in.in_transit.end()) continue;
      waiting = true;
      wanted = std::min(wanted, *above);
    }
    if (!waiting) continue;
    const WireTag earliest = incoming_from(bounds, f);
    const WireTag grant = earliest.predecessor();
    if (grant >= wanted) {
      state.granted = grant;
      grants.push_back({f, grant, false, counts_up_to(f, grant)});
      continue;
    }
    if (state.next_event <= state.granted) continue;
    if (state.completed != kNever && state.next_event <= state.completed) continue;
    if (!state.in_zero_delay_cycle || state.provisional >= state.next_event) continue;
    if (earliest != state.next_event) continue;
    // Would anything reach f at its NET if the members of its zero-delay cycle sent nothing? If
    // not, only outputs of that cycle can still arrive at that tag: PTAG.
    const WireTag without_self = incoming_from(send_bounds(state.zero_delay_group), f);
    if (without_self > state.next_event) {
      state.provisional = state.next_event;
      grants.push_back(
          {f, state.next_event, true, counts_up_to(f, state.next_event.predecessor())});
    }
  }
  return grants;
}

}  // namespace tagflow::coordinator
