// GrantCalculator: the coordinator's tag-advance rules (PROTOCOL.md §4), with no sockets.
//
// It holds, per federate, the last NET, the last LTC, the grants already sent, whether it
// resigned, and per connection the tags of data messages reported in transit. From these it
// computes, for every federate, the earliest tag at which a message could still reach it (EIMT):
// a shortest-path pass over the federation graph where a federate u may still send from
//   B(u) = max(LTC(u)+, min(NET(u), in-transit tags to u, min over upstreams v of B(v) ⊕ d(v,u)))
// and EIMT(f) = min over upstreams u of B(u) ⊕ d(u,f). A federate waiting on NET n (or with a
// data message in transit to it at n, without waiting for its NET) gets TAG(g) with g = the tag
// just before EIMT(f) once g >= n; a NET at or below its grant or LTC is stale; if only its own
// outputs can still reach it at n through the zero-delay cycle it belongs to (the NETs of that
// cycle's members ignored, as Lingua Franca's RTI does), it gets PTAG(n) instead. Grants never go
// backwards. Not thread-safe: owned by the coordinator's single event loop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "federation/federation_spec.hpp"

namespace tagflow::coordinator {

struct GrantDecision {
  std::size_t federate = 0;
  WireTag tag;
  bool provisional = false;
  /// Per upstream (in spec order): data messages with tag <= `tag` it sent to this federate.
  std::vector<std::pair<std::string, std::uint64_t>> counts;
};

class GrantCalculator {
 public:
  /// `spec` must be valid (FederationSpec::validate).
  explicit GrantCalculator(const FederationSpec& spec);

  [[nodiscard]] std::size_t size() const { return federates_.size(); }
  [[nodiscard]] std::size_t index_of(const std::string& id) const;  ///< size() when unknown
  [[nodiscard]] const std::string& id_of(std::size_t index) const { return federates_[index].id; }

  void on_next_event(std::size_t federate, const WireTag& tag);
  /// LTC(tag), with the federate's next tag when the LTC carries one. A later completed tag
  /// without one makes its NET stale: it may send right after `tag` until its next NET.
  void on_completed(std::size_t federate, const WireTag& tag,
                    const std::optional<WireTag>& next = std::nullopt);
  /// `sender` is about to send a data message that arrives at `destination` with `tag`.
  /// Returns false (and ignores it) when `destination` is not a downstream of `sender`.
  bool on_in_transit(std::size_t sender, std::size_t destination, const WireTag& tag);
  void on_resigned(std::size_t federate);
  /// Whether the last frame of `federate` said it may leave its waits unreported (reporting 2,
  /// PROTOCOL.md §3.9): its upstreams' COMPLETED notices end them, so a data message in transit
  /// to it earns it no grant of its own (§4.4).
  void set_deferring(std::size_t federate, bool deferring) {
    federates_[federate].deferring = deferring;
  }

  /// Grants that became possible since the last call (each federate at most once).
  [[nodiscard]] std::vector<GrantDecision> take_new_grants();

  /// The earliest tag at which a message may still reach `federate` (kForever: never).
  [[nodiscard]] WireTag earliest_incoming(std::size_t federate) const;
  [[nodiscard]] bool in_zero_delay_cycle(std::size_t federate) const {
    return federates_[federate].in_zero_delay_cycle;
  }
  [[nodiscard]] const WireTag& last_grant(std::size_t federate) const {
    return federates_[federate].granted;
  }
  /// The latest tag `federate` reported completed (kNever before its first LTC).
  [[nodiscard]] const WireTag& last_completed(std::size_t federate) const {
    return federates_[federate].completed;
  }
  /// True while `federate` has a next tag (not forever) that no grant covers yet.
  [[nodiscard]] bool waits_for_grant(std::size_t federate) const;

 private:
  struct Inbound {
    std::size_t from = 0;
    ConnectionDelay delay;
    std::deque<WireTag> in_transit;  // reported, not yet completed by the receiver; sorted
    std::uint64_t completed_count = 0;
  };
  struct State {
    std::string id;
    std::vector<Inbound> inbound;
    std::vector<std::size_t> outbound;
    WireTag next_event;
    WireTag completed = transport::kNever;
    WireTag granted = transport::kNever;
    WireTag provisional = transport::kNever;
    bool resigned = false;
    bool in_zero_delay_cycle = false;
    bool deferring = false;              // its last frame said reporting 2
    std::vector<bool> zero_delay_group;  // federates on a zero-delay cycle with this one
  };

  /// B(u) for every federate; federates with `excluded[u]` have their own NET ignored.
  std::vector<WireTag> send_bounds(const std::vector<bool>& excluded) const;
  WireTag incoming_from(const std::vector<WireTag>& bounds, std::size_t federate) const;
  std::vector<std::pair<std::string, std::uint64_t>> counts_up_to(std::size_t federate,
                                                                  const WireTag& tag) const;

  std::vector<State> federates_;
};

}  // namespace tagflow::coordinator
