// PeerSet: the peers one node actor knows, for the parts of the protocol that are not per port:
// forwarding a StopRun to everyone once, forgetting a replica that left, and telling transient
// peers (which may come and go) from the fixed nodes (whose loss ends the run).
//
// Value type; not thread-safe (an actor's own state).
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_addr.hpp>

namespace tagflow::actors {

class PeerSet {
 public:
  struct Peer {
    caf::actor handle;
    bool transient = false;  // a peer that may come and go (a replica of a transient kind)
    std::string name;        // its replica name, when it told it (Offer.from); else empty
  };

  /// Adds `peer` if new; returns true if it was new. A known peer without a name takes `name`.
  bool add(const caf::actor& peer, bool transient, const std::string& name = "") {
    const auto it = find(peer.address());
    if (it != peers_.end()) {
      if (it->name.empty()) it->name = name;
      return false;
    }
    peers_.push_back(Peer{peer, transient, name});
    return true;
  }
  /// The name `peer` told, or "" (unknown peer, or it never told).
  [[nodiscard]] std::string name_of(const caf::actor_addr& peer) const {
    const auto it = std::find_if(peers_.begin(), peers_.end(),
                                 [&](const Peer& p) { return p.handle.address() == peer; });
    return it == peers_.end() ? std::string() : it->name;
  }
  /// Forgets `peer`; returns true if it was known.
  bool remove(const caf::actor_addr& peer) {
    const auto it = find(peer);
    if (it == peers_.end()) return false;
    peers_.erase(it);
    return true;
  }
  [[nodiscard]] bool is_transient(const caf::actor_addr& peer) const {
    const auto it = std::find_if(peers_.begin(), peers_.end(),
                                 [&](const Peer& p) { return p.handle.address() == peer; });
    return it != peers_.end() && it->transient;
  }
  [[nodiscard]] bool contains(const caf::actor_addr& peer) const {
    return std::any_of(peers_.begin(), peers_.end(),
                       [&](const Peer& p) { return p.handle.address() == peer; });
  }
  [[nodiscard]] long transients() const {
    return static_cast<long>(
        std::count_if(peers_.begin(), peers_.end(), [](const Peer& p) { return p.transient; }));
  }
  [[nodiscard]] const std::vector<Peer>& all() const { return peers_; }

 private:
  std::vector<Peer>::iterator find(const caf::actor_addr& peer) {
    return std::find_if(peers_.begin(), peers_.end(),
                        [&](const Peer& p) { return p.handle.address() == peer; });
  }
  std::vector<Peer> peers_;
};

}  // namespace tagflow::actors
