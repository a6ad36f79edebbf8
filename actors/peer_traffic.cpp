#include "actors/peer_traffic.hpp"

namespace tagflow::actors {

using monitoring::Metric;

PeerTraffic::PeerTraffic(monitoring::ProcessMetrics* metrics) : metrics_(metrics) {
  if (metrics_ == nullptr) return;
  drops_.set_observer([this](const std::string& peer, transport::DropReason reason) {
    metrics_
        ->counter(Metric::transport_invalid_messages,
                  {{"peer", peer}, {"reason", transport::drop_reason_name(reason)}})
        .Increment();
  });
}

PeerTraffic::Series& PeerTraffic::series(const std::string& peer) {
  const std::string& label = peer.empty() ? std::string(kUnknownPeer) : peer;
  auto it = series_.find(label);
  if (it != series_.end()) return it->second;
  const monitoring::Labels labels{{"peer", label}};
  Series s;
  s.sent = &metrics_->counter(Metric::transport_messages_sent, labels);
  s.sent_bytes = &metrics_->counter(Metric::transport_sent_bytes, labels);
  s.received = &metrics_->counter(Metric::transport_messages_received, labels);
  s.received_bytes = &metrics_->counter(Metric::transport_received_bytes, labels);
  return series_.emplace(label, s).first->second;
}

void PeerTraffic::sent(const std::string& peer, std::size_t bytes) {
  if (metrics_ == nullptr) return;
  Series& s = series(peer);
  s.sent->Increment();
  s.sent_bytes->Increment(static_cast<double>(bytes));
}

void PeerTraffic::received(const std::string& peer, std::size_t bytes) {
  if (metrics_ == nullptr) return;
  Series& s = series(peer);
  s.received->Increment();
  s.received_bytes->Increment(static_cast<double>(bytes));
}

void PeerTraffic::invalid(const std::string& peer, transport::DropReason reason) {
  drops_.record(peer.empty() ? std::string(kUnknownPeer) : peer, reason);
}

}  // namespace tagflow::actors
