#include "transport/peer_drop_counters.hpp"

#include <spdlog/spdlog.h>

#include "common/log_text.hpp"

namespace tagflow::transport {
namespace {

/// A peer identity that may hold any bytes as the log and the counters name it: escaped as the
/// coordinator's log escapes what peers send (bytes outside printable ASCII as \xNN, a
/// backslash as \\) and cut after 128 bytes with "...(N more bytes)", so two identities that
/// differ in their first 128 bytes keep two names.
std::string printable(const std::string& peer) {
  return peer.empty() ? "(anonymous)" : escape_for_log(peer, 128);
}

}  // namespace

void PeerDropCounters::record(const std::string& peer, DropReason reason) {
  std::string key = printable(peer);
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (counts_.count(key) == 0 && counts_.size() >= kMaxPeers) key = "(other)";
    auto [it, inserted] = counts_.try_emplace(key, Counts{});
    ++it->second[static_cast<std::size_t>(reason)];
    if (inserted && log_rate_.allow()) {
      spdlog::warn(
          "transport: dropped a message from peer '{}': {} (further drops from this peer "
          "are counted, not logged)",
          key, drop_reason_name(reason));
    }
  }
  if (observer_) observer_(peer, key, reason);
}

std::uint64_t PeerDropCounters::count(const std::string& peer, DropReason reason) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto it = counts_.find(printable(peer));
  return it == counts_.end() ? 0 : it->second[static_cast<std::size_t>(reason)];
}

std::uint64_t PeerDropCounters::total(const std::string& peer) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto it = counts_.find(printable(peer));
  if (it == counts_.end()) return 0;
  std::uint64_t sum = 0;
  for (std::uint64_t n : it->second) sum += n;
  return sum;
}

std::uint64_t PeerDropCounters::total() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  std::uint64_t sum = 0;
  for (const auto& entry : counts_) {
    for (std::uint64_t n : entry.second) sum += n;
  }
  return sum;
}

}  // namespace tagflow::transport
