// PeerDropCounters: how many received messages were dropped, per peer and per reason.
//
// The first drop from a peer is logged (spdlog warning naming the peer and the reason); later
// ones are only counted, so a peer spraying garbage cannot flood the log; and at most
// kLinesPerSecond such lines are logged in any second (many new peer names at once). At most
// kMaxPeers distinct peers are tracked by name; further ones share the "(other)" entry, so memory
// stays bounded whatever identities a peer invents. Thread-safe: one internal mutex guards the
// table (drops are rare, so the lock is off the normal receive path). An observer set with
// set_observer() sees every drop with the peer name it was counted under (for metrics); it is
// called outside the lock, on the thread that recorded the drop.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "common/log_text.hpp"
#include "transport/drop_reason.hpp"

namespace tagflow::transport {

class PeerDropCounters {
 public:
  static constexpr std::size_t kMaxPeers = 256;
  static constexpr std::uint64_t kLinesPerSecond = 20;

  /// Counts one dropped message from `peer`; logs it when it is that peer's first drop.
  void record(const std::string& peer, DropReason reason);
  /// Called for every later drop with its (bounded) peer name and reason. Set before use.
  void set_observer(std::function<void(const std::string& peer, DropReason reason)> observer) {
    observer_ = [observer = std::move(observer)](const std::string& /*identity*/,
                                                 const std::string& peer,
                                                 DropReason reason) { observer(peer, reason); };
  }
  /// The same, also given the identity as record() got it (unbounded: for a caller that maps it
  /// to a bounded set of its own, such as a coordinator's configured federates).
  void set_identity_observer(
      std::function<void(const std::string& identity, const std::string& peer, DropReason reason)>
          observer) {
    observer_ = std::move(observer);
  }

  [[nodiscard]] std::uint64_t count(const std::string& peer, DropReason reason) const;
  [[nodiscard]] std::uint64_t total(const std::string& peer) const;
  [[nodiscard]] std::uint64_t total() const;

 private:
  using Counts = std::array<std::uint64_t, kDropReasonCount>;
  mutable std::mutex mutex_;
  std::map<std::string, Counts> counts_;    // guarded by mutex_
  LogRateLimit log_rate_{kLinesPerSecond};  // guarded by mutex_
  std::function<void(const std::string&, const std::string&, DropReason)>
      observer_;  // set before use
};

}  // namespace tagflow::transport
