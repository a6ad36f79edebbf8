// ServiceGateway: the inference service for outside programs (nodes/gateway/PROTOCOL.md) — a
// ZeroMQ ROUTER socket on its own thread that answers hello, act, episode and health requests of
// any number of clients with a GatewayBackend (the policies of one inference replica).
//
// The loop (one thread, the only one that touches the socket and the backend):
//   1. wait for a frame, or for the earliest deadline of a queued request (its arrival plus the
//      smallest max_wait of its policies);
//   2. read every frame already waiting (at most max_queue + 64 per round): decode it
//      (gateway_protocol.hpp), check that its agents are served here, and either answer at once
//      (hello, health, episodes, errors, `busy`) or queue it (act);
//   3. apply weights offered since the last pass (offer_weights), so that a forward pass runs on
//      one version of each policy and its replies say which;
//   4. when a request is due — its deadline has passed (at once with max_wait 0), or one of its
//      policies has max_batch rows queued — take the due requests in arrival order while every
//      policy's rows stay within its max_batch, serve them in one backend call and send each
//      reply (when that call throws and held several requests, each is served again alone, and
//      only those that fail alone get `internal`). Requests of policies that wait stay queued
//      meanwhile: one policy's max_wait never delays another's requests.
// max_batch and max_wait are the gateway's, or the policy's own (`policy_batching`).
// Bounds: max_in_flight queued requests per client, max_queue requests and max_queue_bytes of
// observations in all (beyond: `busy`), frames of
// at most max_message bytes (ZMQ_MAXMSGSIZE), 4 whole requests per connection read by ZeroMQ
// ahead of the gateway (ZMQ_RCVHWM; the rest wait in the kernel), max_reply_queue replies per
// connection (beyond: the reply is dropped, reason slow_reader), and max_clients connections
// (beyond: the quietest are cut, transport/connection_guard.hpp; with CURVE that is all the guard
// judges; without it, the guard also cuts the fullest while the process holds more than its
// budget, read from lately or not). A refused request
// is counted per policy and reason (tagflow_gateway_errors_total when metrics are given) and logged
// once per client and reason.
//
// Experience (PROTOCOL.md §4.3): an episode started with `log: true` records each agent's
// observation and action from every answered act that names it; the rewards and dones of its
// later requests complete transitions (episode_experience.hpp), which go to `experience` (beyond
// its bound they are dropped and counted, tagflow_gateway_transitions_total{outcome="dropped"}).
// A logged episode has at most one act in flight (a second one gets `busy`), so its steps follow
// the client's order. Transitions of a policy outside `replayed_policies` are dropped and counted.
//
// Security: with `curve_secret_key` set the socket is a CURVE server; clients must know its public
// key, and with `allowed_client_keys` a ZapAuthenticator (transport/zap_authenticator.hpp) admits
// only those keys.
// Errors: the constructor throws std::runtime_error when the endpoint cannot be bound (naming it).
// Thread-safety: offer_weights(), port(), ready() and the counters may be called from any thread.
// Not copyable or movable; the destructor stops and joins the thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "nodes/gateway/experience_queue.hpp"
#include "nodes/gateway/gateway_backend.hpp"

namespace tagflow::monitoring {
class ProcessMetrics;
}
namespace zmq {
class context_t;
}
namespace tagflow::transport {
class ZapAuthenticator;
}

namespace tagflow::gateway {

/// Batching settings of one policy that differ from the gateway's.
struct PolicyBatching {
  std::optional<std::uint32_t> max_batch;
  std::optional<std::chrono::nanoseconds> max_wait;
};

struct GatewayConfig {
  std::string endpoint = "tcp://127.0.0.1:0";     // what the ROUTER binds
  std::uint32_t max_batch = 64;                   // rows per policy per forward pass
  std::chrono::nanoseconds max_wait{0};           // how long a request may wait to fill a batch
  std::map<int, PolicyBatching> policy_batching;  // by policy index: overrides of the two above

  /// The largest max_batch of any policy: the most rows of one policy in a forward pass.
  [[nodiscard]] std::uint32_t largest_batch() const {
    std::uint32_t most = max_batch;
    for (const auto& entry : policy_batching) {
      if (entry.second.max_batch && *entry.second.max_batch > most) most = *entry.second.max_batch;
    }
    return most;
  }
  std::uint32_t max_in_flight = 8;          // queued requests per client
  std::size_t max_queue = 1024;             // queued requests over all clients
  std::size_t max_queue_bytes = 256 << 20;  // observation bytes queued over all clients
  std::int64_t max_message = 16 << 20;      // bytes per frame
  int max_reply_queue = 1000;               // replies queued per connection (ZMQ_SNDHWM)
  /// TCP connections kept without CURVE: beyond them the quietest are cut (too_many_connections).
  std::size_t max_clients = 4096;
  std::string curve_secret_key;               // Z85; empty: no CURVE
  std::set<std::string> allowed_client_keys;  // Z85 public keys; empty with CURVE: any client
  /// Where logged episodes' transitions go (the replica's `experience` port); null: no replay is
  /// linked, and episode_start with `log: true` is refused (no_replay).
  std::shared_ptr<ExperienceQueue> experience;
  /// The policies whose rows `experience` carries to a replay; nullopt: every hosted policy. A
  /// logged agent's transitions whose policy is not among them are dropped and counted
  /// (tagflow_gateway_transitions_total{outcome="no_replay"}, PROTOCOL.md §4.3).
  std::optional<std::set<int>> replayed_policies;
  std::size_t max_experience = 65536;  // rows the replica's experience queue holds
  bool log_by_default = false;         // an episode_start without `log` logs (needs `experience`)
};

class ServiceGateway {
 public:
  /// `metrics` (may be null) must outlive the gateway; `log` gets one line per first refusal.
  ServiceGateway(GatewayConfig config, std::unique_ptr<GatewayBackend> backend,
                 monitoring::ProcessMetrics* metrics,
                 std::function<void(const std::string&)> log = {});
  ~ServiceGateway();
  ServiceGateway(const ServiceGateway&) = delete;
  ServiceGateway& operator=(const ServiceGateway&) = delete;

  /// New weights for `policy` (a served one), applied between forward passes.
  void offer_weights(int policy, nodes::WeightsMessage weights);

  /// The TCP port it listens on (the kernel's choice for port 0).
  [[nodiscard]] std::uint16_t port() const { return port_; }
  /// tcp://ADDRESS:PORT
  [[nodiscard]] const std::string& endpoint() const { return endpoint_; }

  [[nodiscard]] std::uint64_t rows_answered() const { return rows_answered_.load(); }
  [[nodiscard]] std::uint64_t requests_refused() const { return refused_.load(); }
  [[nodiscard]] std::uint64_t busy_replies() const { return busy_.load(); }
  [[nodiscard]] std::uint64_t replies_dropped() const { return dropped_.load(); }
  [[nodiscard]] std::uint64_t forward_passes() const { return passes_.load(); }
  /// The most requests it ever held queued (never above max_queue).
  [[nodiscard]] std::uint64_t peak_queued() const { return peak_queued_.load(); }
  /// Transitions of logged episodes queued for the replay, and dropped (the queue was full).
  [[nodiscard]] std::uint64_t transitions_logged() const { return logged_.load(); }
  [[nodiscard]] std::uint64_t transitions_dropped() const { return logged_dropped_.load(); }
  /// Transitions of logged episodes dropped because their policy has no replay.
  [[nodiscard]] std::uint64_t transitions_without_replay() const { return without_replay_.load(); }

 private:
  struct Impl;
  void run();

  std::unique_ptr<Impl> impl_;
  std::string endpoint_;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::mutex weights_mutex_;
  std::vector<std::pair<int, nodes::WeightsMessage>> offered_;  // guarded by weights_mutex_
  std::atomic<bool> weights_pending_{false};  // release on offer, acquire in the loop
  // Statistics (relaxed).
  std::atomic<std::uint64_t> rows_answered_{0}, refused_{0}, busy_{0}, dropped_{0}, passes_{0},
      peak_queued_{0}, logged_{0}, logged_dropped_{0}, without_replay_{0};
  std::thread thread_;
};

}  // namespace tagflow::gateway
