// PeerTraffic: the per-peer transport families of one node actor in actor mode —
// tagflow_transport_messages_sent_total / _received_total, _sent_bytes_total /
// _received_bytes_total {peer} and tagflow_transport_invalid_messages_total {peer, reason} —
// the same families the reactor-mode transport exports (monitoring/metric_catalogue.hpp).
//
// `peer` is the replica name at the other end (what it told in its Offer or Credit, or what the
// host wired), "unknown" for an actor this one does not know. Bytes are message_bytes()
// (actors/message_bytes.hpp): the payload the message carries, not CAF's framing. Reasons are
// the names of transport/drop_reason.hpp (unknown_peer, unknown_kind, unknown_port,
// size_mismatch). An invalid message is logged the first time a peer sends one, then only
// counted (transport::PeerDropCounters, as in reactor mode), metrics or not.
//
// Series are looked up once per peer and kept (updates are then lock-free atomics). Without a
// ProcessMetrics (null) every call does nothing. Ownership: the ProcessMetrics must outlive this
// object. Thread-safety: not thread-safe — one actor's state, used from its handlers only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "monitoring/process_metrics.hpp"
#include "transport/drop_reason.hpp"
#include "transport/peer_drop_counters.hpp"

namespace tagflow::actors {

class PeerTraffic {
 public:
  /// The peer label of an actor whose name is not known.
  static constexpr const char* kUnknownPeer = "unknown";

  explicit PeerTraffic(monitoring::ProcessMetrics* metrics);
  PeerTraffic(const PeerTraffic&) = delete;
  PeerTraffic& operator=(const PeerTraffic&) = delete;

  void sent(const std::string& peer, std::size_t bytes);
  void received(const std::string& peer, std::size_t bytes);
  void invalid(const std::string& peer, transport::DropReason reason);
  /// Invalid messages counted from `peer` (any reason).
  [[nodiscard]] std::uint64_t invalid_count(const std::string& peer) const {
    return drops_.total(peer);
  }

 private:
  struct Series {
    prometheus::Counter* sent = nullptr;
    prometheus::Counter* sent_bytes = nullptr;
    prometheus::Counter* received = nullptr;
    prometheus::Counter* received_bytes = nullptr;
  };
  Series& series(const std::string& peer);

  monitoring::ProcessMetrics* metrics_;
  std::map<std::string, Series> series_;
  transport::PeerDropCounters drops_;  // logs each peer's first invalid message
};

}  // namespace tagflow::actors
