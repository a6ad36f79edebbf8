// ReactorFederate: runs a reactor program (reactors/) as one federate — the binding of the
// coordinator protocol and the data plane to the scheduler's federation door
// (reactors/federation.hpp, PROTOCOL.md §3, §5).
//
// Use, in this order:
//   ReactorFederate federate(spec, "mid", {.bind_endpoint = "tcp://10.0.0.5:7611"});
//   const WireTag start = federate.join();          // blocks until every federate joined
//   config.start_time_ns = start.time_ns; config.timeout = ...;  // same timeout everywhere
//   Environment env(config);  ...declare reactors...
//   auto& rx = env.add<NetworkReceiver>("from_source", federate, "source", 1);   // inputs
//   auto& tx = env.add<NetworkSender>("to_sink", federate, "sink", 1);          // outputs
//   env.connect(rx.out, local.in); env.connect(local.out, tx.in);
//   federate.run(env);                               // runs, then resigns
//   federate.stop_proposal();                        // the cutoff, if a stop was negotiated
//
// A network thread owns every socket. The scheduler's hooks (NET, LTC, stop proposals) and
// NetworkSender's reactions only append commands to a queue the network thread drains in order;
// data messages are reported in transit by the LTC that follows them, which goes in one frame
// with the NET the scheduler announces right after it (PROTOCOL.md §3.2). A NET for a tag only a
// received message asks for is not sent (§3.3). Received values
// enter through PhysicalAction::schedule_at at the tag they carry; TAG(g) becomes env.grant(g)
// once the data messages the grant counts have all arrived (values first, then the grant:
// federation.hpp step 3).
// Stop (PROTOCOL.md §5): env.request_stop() in any federate sends STOP_REQUEST with the tag it
// proposes (the next microstep); a STOP_REQUEST forwarded by the coordinator is answered with
// max(its tag, this federate's next unstarted tag), obtained from the scheduler the same way.
// From its proposal on, a federate processes no tag at or past it until STOP_GRANTED(s) arrives;
// then every federate stops at s. Without a negotiation the run ends at the environment's own
// stop tag (set the same `timeout` everywhere). A FAILED from the coordinator, or a lost
// coordinator, stops the environment without waiting for grants and run() throws
// FederationError naming the federate.
// Zero-delay cycles across federates (PROTOCOL.md §3.7): a NetworkReceiver on a link of such a
// cycle delivers through CycleInputs — under PTAG(g) the federate runs g, and the receiver's
// reaction waits inside the tag until a value or an ABSENT with tag g (or a TAG >= g) arrived.
// A NetworkSender on such a link sends ABSENT(port, g) at every tag g it did not write: before
// any cycle receiver of the federate waits (for senders ordered before it) and when the tag
// completes. run() orders every cycle sender before every cycle receiver that does not feed it
// (Environment::order_before), so a federate sends what it can before it waits. ABSENTs go over
// the data path and are reported in transit like data messages. An input on such a link cannot
// be bound with bind_input(), which cannot wait inside a tag: it throws FederationConfigError.
// Metrics (options.metrics): tagflow_transport_{messages,sent_bytes}_... per downstream peer,
// _received_... per upstream peer, and tagflow_transport_invalid_messages_total{peer, reason}.
// Thread-safety: construct, join, declare and run from one thread; send() is called by
// NetworkSender from worker threads; the ProcessMetrics must outlive the federate.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "coordinator/cycle_inputs.hpp"
#include "coordinator/federate_client.hpp"
#include "reactors/action.hpp"
#include "reactors/environment.hpp"
#include "reactors/port.hpp"
#include "reactors/reactor.hpp"
#include "transport/message_validator.hpp"
#include "transport/peer_drop_counters.hpp"
#include "transport/zap_authenticator.hpp"

namespace tagflow::monitoring {
class ProcessMetrics;
}
namespace prometheus {
class Counter;
}

namespace tagflow::coordinator {

struct ReactorFederateOptions {
  /// Where the data socket listens (a node: its data_port on its host's address).
  std::string bind_endpoint = "tcp://127.0.0.1:*";
  /// The endpoint sent to the others in JOIN; empty: the bound endpoint.
  std::string advertised_endpoint;
  /// Per-peer transport families when set (not owned).
  monitoring::ProcessMetrics* metrics = nullptr;
};

class ReactorFederate {
 public:
  ReactorFederate(const FederationSpec& spec, std::string id, ReactorFederateOptions options = {});
  ~ReactorFederate();
  ReactorFederate(const ReactorFederate&) = delete;
  ReactorFederate& operator=(const ReactorFederate&) = delete;

  const std::string& id() const { return id_; }
  /// JOIN and wait for START; returns the start tag.
  WireTag join(std::chrono::milliseconds timeout = std::chrono::seconds(30));
  /// Delivers values from upstream `from` on `port` into `action` (at the tag they carry).
  /// Throws FederationConfigError when the link is on a zero-delay cycle (NetworkReceiver).
  void bind_input(const std::string& from, std::uint32_t port,
                  reactors::PhysicalAction<std::string>& action);
  /// True when the link from upstream `from` is on a zero-delay cycle across federates.
  [[nodiscard]] bool cycle_link_from(const std::string& from) const;
  /// A NetworkReceiver's input on a zero-delay cycle link, delivered by `deliver` through
  /// await_cycle_input(); returns the index to pass there.
  std::size_t bind_cycle_input(const std::string& from, std::uint32_t port,
                               reactors::PhysicalAction<std::string>& action,
                               reactors::Reaction& deliver);
  /// A NetworkSender's output to (to, port), sent by `sender`; on a zero-delay cycle link its
  /// unwritten tags are announced with ABSENT.
  void bind_output(const std::string& to, std::uint32_t port, reactors::Reaction& sender);
  /// In the deliver reaction (at `level`) of cycle input `index` at `tag`: sends ABSENT for the
  /// cycle outputs ordered before `level` that were not written at `tag`, then waits until the
  /// input's status at `tag` is known. Returns the value, or nullopt when absent (or the run
  /// failed). Called from worker threads.
  std::optional<std::string> await_cycle_input(std::size_t index, const reactors::Tag& tag,
                                               std::size_t level);
  /// Sends `bytes` to input `port` of downstream `to`, sent at `tag` (the connection's delay
  /// is added). Thread-safe; called from reactions.
  void send(const std::string& to, std::uint32_t port, const reactors::Tag& tag, std::string bytes);
  /// Runs `env` to its stop tag under the coordinator's grants, then resigns.
  void run(reactors::Environment& env);

  const transport::PeerDropCounters& drops() const { return drops_; }
  /// The endpoint the data socket is bound to.
  const std::string& data_endpoint() const { return data_endpoint_; }
  /// After run(): the earliest stop tag proposed in the stop negotiation (the digest cutoff,
  /// contract §3), or nullopt when the run ended at its own stop tag without one.
  std::optional<reactors::Tag> stop_proposal() const;
  /// After run(): the stop tag the coordinator granted, or nullopt.
  std::optional<reactors::Tag> granted_stop_tag() const;

 private:
  struct PeerCounters {
    prometheus::Counter* messages = nullptr;
    prometheus::Counter* bytes = nullptr;
  };
  struct Command {
    enum Kind { kNet, kLtc, kSend, kStop, kAbsent } kind;
    WireTag tag;
    std::string to;
    std::uint32_t port = 0;
    std::string bytes;
    std::size_t level = 0;  // kAbsent: cycle outputs whose sender's level is below this one
  };
  struct CycleOutput {
    std::string to;
    std::uint32_t port = 0;
    reactors::Reaction* sender = nullptr;
    std::size_t level = 0;                       // the sender's level, known after assembly
    WireTag status_through = transport::kNever;  // latest tag sent a value or ABSENT at
  };
  void push(Command command);
  void network_loop(reactors::Environment& env);
  void drain_commands();
  /// NET(next), or the pending LTC with `next` in the same frame (PROTOCOL.md §3.2).
  void announce(const WireTag& next);
  [[nodiscard]] bool asked_by_input(const WireTag& tag) const;
  /// Sends the pending LTC and in-transit reports, with `next` as the next tag when given.
  void flush_completed(std::optional<WireTag> next);
  void receive_data();
  void update_grant(reactors::Environment& env);
  [[nodiscard]] bool counts_met(const std::map<std::string, std::uint64_t>& counts,
                                const WireTag& through);
  void send_absents(const WireTag& tag, std::size_t below_level);
  void order_cycle_ports(reactors::Environment& env);
  void handle_stop(reactors::Environment& env);
  void propose_stop(const WireTag& floor);
  void setup_metrics();

  const FederationSpec& spec_;
  std::string id_;
  ReactorFederateOptions options_;
  zmq::context_t context_;
  std::unique_ptr<transport::ZapAuthenticator> zap_;
  zmq::socket_t data_;
  std::string data_endpoint_;
  std::unique_ptr<FederateClient> client_;
  std::map<std::string, zmq::socket_t> outputs_;
  std::map<std::pair<std::string, std::uint32_t>, reactors::PhysicalAction<std::string>*> inputs_;
  transport::MessageValidator validator_;
  transport::PeerDropCounters drops_;
  std::map<std::string, std::deque<WireTag>> received_;   // per upstream, tags not yet completed
  std::map<std::string, std::uint64_t> completed_;        // per upstream, messages completed
  std::map<std::string, PeerCounters> sent_metrics_;      // per downstream (options_.metrics)
  std::map<std::string, PeerCounters> received_metrics_;  // per upstream (options_.metrics)
  WireTag granted_to_env_ = transport::kNever;  // the highest grant given to env (TAG or PTAG)
  WireTag tag_applied_ = transport::kNever;     // the highest TAG applied
  // Zero-delay cycle ports (§3.7). cycle_outputs_ is the network thread's after run() starts.
  CycleInputs cycle_inputs_;
  std::vector<reactors::Reaction*> cycle_delivers_;
  std::vector<CycleOutput> cycle_outputs_;
  bool on_zero_delay_cycle_ = false;  // FederationSpec::on_zero_delay_cycle(id_)
  // LTC batching (network thread): the latest completed tag, whether it is unreported, and the
  // in-transit reports of the data messages sent since the previous LTC.
  WireTag completed_tag_ = transport::kNever;
  bool ltc_pending_ = false;
  std::vector<std::pair<std::string, WireTag>> in_transit_;
  // The next tag the coordinator has from this federate (NET or carried by an LTC); kNever once
  // an LTC went without one.
  WireTag announced_ = transport::kNever;
  // Stop negotiation, network thread only.
  std::optional<WireTag> asked_;     // a forwarded STOP_REQUEST waiting for the scheduler's floor
  bool proposed_ = false;            // this federate sent its own STOP_REQUEST
  bool stop_applied_ = false;        // STOP_GRANTED was passed to env.stop_at
  std::optional<WireTag> stop_tag_;  // set by the network thread before done_ is read
  std::optional<WireTag> stop_proposal_;  // idem
  int wake_fd_ = -1;                      // eventfd: commands are waiting
  std::mutex mutex_;                      // guards commands_
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
