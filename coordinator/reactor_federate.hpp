// ReactorFederate: runs a reactor program (reactors/) as one federate — the binding of the
// coordinator protocol and the data plane to the scheduler's federation door
// (reactors/federation.hpp, PROTOCOL.md §3).
//
// Use, in this order:
//   ReactorFederate federate(spec, "mid");
//   const WireTag start = federate.join();          // blocks until every federate joined
//   config.start_time_ns = start.time_ns; config.timeout = ...;  // same timeout everywhere
//   Environment env(config);  ...declare reactors...
//   auto& rx = env.add<NetworkReceiver>("from_source", federate, "source", 1);   // inputs
//   auto& tx = env.add<NetworkSender>("to_sink", federate, "sink", 1);          // outputs
//   env.connect(rx.out, local.in); env.connect(local.out, tx.in);
//   federate.run(env);                               // runs, then resigns
//
// A network thread owns every socket. The scheduler's hooks (NET, LTC) and NetworkSender's
// reactions only append commands to a queue the network thread drains in order, so every
// IN_TRANSIT report and data message of a tag precedes that tag's LTC. Received values enter
// through PhysicalAction::schedule_at at the tag they carry; TAG(g) becomes env.grant(g) once
// the data messages the grant counts have all arrived; PTAG(g) becomes grant(g.predecessor()).
// The run ends at the environment's stop tag (set the same `timeout` in every federate); a
// FAILED from the coordinator, or a lost coordinator, stops the environment and run() throws
// FederationError naming the federate. Thread-safety: construct, join, declare and run from one
// thread; send() is called by NetworkSender from worker threads.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "coordinator/federate_client.hpp"
#include "reactors/action.hpp"
#include "reactors/environment.hpp"
#include "reactors/port.hpp"
#include "reactors/reactor.hpp"
#include "transport/message_validator.hpp"
#include "transport/peer_drop_counters.hpp"
#include "transport/zap_authenticator.hpp"

namespace tagflow::coordinator {

class ReactorFederate {
 public:
  ReactorFederate(const FederationSpec& spec, std::string id);
  ~ReactorFederate();
  ReactorFederate(const ReactorFederate&) = delete;
  ReactorFederate& operator=(const ReactorFederate&) = delete;

  const std::string& id() const { return id_; }
  /// JOIN and wait for START; returns the start tag.
  WireTag join(std::chrono::milliseconds timeout = std::chrono::seconds(30));
  /// Delivers values from upstream `from` on `port` into `action` (at the tag they carry).
  void bind_input(const std::string& from, std::uint32_t port,
                  reactors::PhysicalAction<std::string>& action);
  /// Sends `bytes` to input `port` of downstream `to`, sent at `tag` (the connection's delay
  /// is added). Thread-safe; called from reactions.
  void send(const std::string& to, std::uint32_t port, const reactors::Tag& tag, std::string bytes);
  /// Runs `env` to its stop tag under the coordinator's grants, then resigns.
  void run(reactors::Environment& env);

  const transport::PeerDropCounters& drops() const { return drops_; }

 private:
  struct Command {
    enum Kind { kNet, kLtc, kSend } kind;
    WireTag tag;
    std::string to;
    std::uint32_t port = 0;
    std::string bytes;
  };
  void push(Command command);
  void network_loop(reactors::Environment& env);
  void drain_commands();
  void receive_data();
  void update_grant(reactors::Environment& env);

  const FederationSpec& spec_;
  std::string id_;
  zmq::context_t context_;
  std::unique_ptr<transport::ZapAuthenticator> zap_;
  zmq::socket_t data_;
  std::unique_ptr<FederateClient> client_;
  std::map<std::string, zmq::socket_t> outputs_;
  std::map<std::pair<std::string, std::uint32_t>, reactors::PhysicalAction<std::string>*> inputs_;
  transport::MessageValidator validator_;
  transport::PeerDropCounters drops_;
  std::map<std::string, std::deque<WireTag>> received_;  // per upstream, tags not yet completed
  std::map<std::string, std::uint64_t> completed_;       // per upstream, messages completed
  WireTag granted_to_env_ = transport::kNever;
  bool scheduler_started_ = false;  // the scheduler announced its first NET
  int wake_fd_ = -1;                // eventfd: commands are waiting
  std::mutex mutex_;                // guards commands_
  std::deque<Command> commands_;
  std::atomic<bool> done_{false};  // env.run() returned (release/acquire)
  std::string error_;              // set by the network thread before done_ is read
};

/// A reactor that delivers values received from another federate on its `out` port.
class NetworkReceiver : public reactors::Reactor {
 public:
  reactors::PhysicalAction<std::string> received{"received", this};
  reactors::Output<std::string> out{"out", this};
  NetworkReceiver(std::string name, reactors::Environment& env, ReactorFederate& federate,
                  const std::string& from, std::uint32_t port);
};

/// A reactor that sends what arrives on its `in` port to an input of another federate.
class NetworkSender : public reactors::Reactor {
 public:
  reactors::Input<std::string> in{"in", this};
  NetworkSender(std::string name, reactors::Environment& env, ReactorFederate& federate,
                std::string to, std::uint32_t port);
};

}  // namespace tagflow::coordinator
