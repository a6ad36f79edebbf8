// ZapAuthenticator: the ZAP handler that admits only allow-listed CURVE client keys.
//
// Without a ZAP handler, a CURVE server admits any client that knows the server's public key.
// This object binds inproc://zeromq.zap.01 in the given context and answers every CURVE
// handshake of that context's sockets: 200 for a client public key in the allow-list, 400
// otherwise (counted, and logged once per refused key: at most 256 keys by name, then one line
// for all the others, and at most 20 lines in any second, as common/log_text.hpp's PeerLogBudget
// allows, so a flood of fresh keys neither floods the log nor grows the memory). Non-CURVE
// mechanisms are refused too.
// Construct it before any CURVE server socket of the context accepts a connection and destroy it
// before the context. Only one may exist per context (the endpoint is fixed by ZeroMQ).
// Thread-safety: it runs its own thread; refused_count() may be called from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include <zmq.hpp>

#include "common/log_text.hpp"

namespace tagflow::transport {

class ZapAuthenticator {
 public:
  /// `allowed_public_keys` are Z85 client public keys; `socket_name` is what the log calls the
  /// context's CURVE socket ("the gateway", "the data port", "the coordinator").
  ZapAuthenticator(zmq::context_t& context, std::set<std::string> allowed_public_keys,
                   std::string socket_name);
  ~ZapAuthenticator();
  ZapAuthenticator(const ZapAuthenticator&) = delete;
  ZapAuthenticator& operator=(const ZapAuthenticator&) = delete;

  [[nodiscard]] std::uint64_t refused_count() const {
    return refused_.load(std::memory_order_relaxed);
  }
  [[nodiscard]] std::uint64_t accepted_count() const {
    return accepted_.load(std::memory_order_relaxed);
  }
  /// A handshake at a socket this handler serves failed before the handler was asked (the
  /// socket's monitor reported ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL with this ZMQ_PROTOCOL_ERROR_*:
  /// no CURVE, another server key): counted and observed as a refusal, the first of each kind
  /// logged (log_failed_handshake(), connection_guard.hpp). Any thread.
  void note_failed_handshake(std::uint32_t protocol_error);
  /// Called for each refusal from now on (a metric's increment): on the handler's thread, or on
  /// the thread of note_failed_handshake().
  void set_refused_observer(std::function<void()> observer) {
    const std::lock_guard<std::mutex> lock(observer_mutex_);
    refused_observer_ = std::move(observer);
  }

 private:
  void run();
  void answer(zmq::socket_t& handler);
  void count_refusal();

  zmq::context_t& context_;
  const std::set<std::string> allowed_;
  const std::string socket_name_;
  zmq::socket_t handler_;  // REP on the ZAP endpoint; used only by thread_ after construction
  std::string stop_endpoint_;
  PeerLogBudget logged_;  // which refusals are logged; used only by thread_
  std::mutex observer_mutex_;
  std::function<void()> refused_observer_;  // guarded by observer_mutex_
  std::set<std::uint32_t> failed_kinds_;    // logged by note_failed_handshake(); observer_mutex_
  std::atomic<std::uint64_t> refused_{0};   // relaxed: a statistic
  std::atomic<std::uint64_t> accepted_{0};  // relaxed: a statistic
  std::thread thread_;
};

}  // namespace tagflow::transport
