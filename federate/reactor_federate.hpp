// ReactorFederate: runs a reactor program (reactors/) as one federate — the binding of the
// coordinator protocol and the data plane to the scheduler's federation door
// (reactors/federation.hpp, PROTOCOL.md §3, §5).
//
// Use, in this order:
//   ReactorFederateOptions options;
//   options.bind_endpoint = "tcp://10.0.0.5:7611";
//   ReactorFederate federate(spec, "mid", options);
//   const WireTag start = federate.join();          // blocks until every federate joined
//   config.start_time_ns = start.time_ns(); config.timeout = ...;  // same timeout everywhere
//   Environment env(config);  ...declare reactors...
//   auto& rx = env.add<NetworkReceiver>("from_source", federate, "source", 1);   // inputs
//   auto& tx = env.add<NetworkSender>("to_sink", federate, "sink", 1);          // outputs
//   env.connect(rx.out, local.in); env.connect(local.out, tx.in);
//   federate.run(env);                               // runs, then resigns
//   federate.stop_proposal();                        // the cutoff, if a stop was negotiated
//
// One thread owns every socket, through the federate's FederateDataPlane (the data sockets,
// in-transit reports, LTC batching and the NET rules it shares with FederateRuntime). With one
// worker (and no NetworkReceiver waiting inside a tag on a zero-delay cycle) it is the thread
// that runs the environment: the scheduler, where it would park for a grant or an event, polls
// the sockets instead, and drains the queue below at every tag it starts (reactors/federation.hpp
// step 8). A received message then reaches its reaction, and a sent value its socket, without
// waking another thread; on a loaded machine each such wake-up costs tens of microseconds.
// Otherwise (several workers, a cycle receiver, or options.network_thread) a network thread of
// its own does that work while the workers run. Either way the scheduler's hooks (NET, LTC, stop
// proposals) and NetworkSender's reactions only append commands to a queue the socket owner
// drains in order; data messages are reported in transit
// by the LTC that follows them, which goes in one frame with the NET the scheduler announces right
// after it (PROTOCOL.md §3.2). A NET for a tag only a received message asks for is not sent
// (§3.3). Received values enter through PhysicalAction::schedule_at at the tag they carry; TAG(g)
// becomes env.grant(g) once the data messages the grant counts have all arrived (values first,
// then the grant: federation.hpp step 3). The socket owner reads at most
// FederateDataPlane::kMaxReceivedPerCall data messages between two looks at its commands and
// control messages. The owner looks at the coordinator's socket at least every 20 ms, so a lost
// coordinator (seen by the heartbeat thread) ends the run either way.
// Waits left unreported (§3.9): at a wait its upstreams' COMPLETED notices will end (it sent to
// every upstream at the tag it just completed), it sends neither LTC nor NET until the
// coordinator asks with REPORT_REQUEST, 64 completed tags are held back, or the wait outlasted its
// overdue time (1-10 ms, twice the upstreams' recent answers).
// Values are transport::Payload: immutable shared bytes. send() queues the Payload itself and the
// socket owner hands its bytes to ZeroMQ without copying them (so one value sent to several
// downstreams is one buffer); a received value is the frame ZeroMQ received, passed to the
// action and on to the reactions without a copy (transport/WIRE.md §4).
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
// _received_... per upstream peer, tagflow_transport_invalid_messages_total{peer, reason}, and
// tagflow_federation_grants_total{by="coordinator"|"upstreams"}: which grants let it run further,
// tagflow_federation_deferred_waits_total: the waits it left unreported, and
// tagflow_federation_waiting_for_start: 1 while join() waits for the coordinator's START.
// Thread-safety: construct, join, declare and run from one thread; send() is called by
// NetworkSender from worker threads; the ProcessMetrics must outlive the federate.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <prometheus/gauge.h>

#include "common/event_fd.hpp"
#include "federate/cycle_inputs.hpp"
#include "federate/federate_client.hpp"
#include "federate/federate_data_plane.hpp"
#include "reactors/action.hpp"
#include "reactors/environment.hpp"
#include "reactors/port.hpp"
#include "reactors/reactor.hpp"
#include "transport/payload.hpp"
#include "transport/peer_drop_counters.hpp"

namespace tagflow::coordinator {

struct ReactorFederateOptions {
  /// Where the data socket listens (a node: its data_port on its host's address).
  std::string bind_endpoint = "tcp://127.0.0.1:*";
  /// The endpoint sent to the others in JOIN; empty: the bound endpoint.
  std::string advertised_endpoint;
  /// Per-peer transport families when set (not owned).
  monitoring::ProcessMetrics* metrics = nullptr;
  /// Always give the sockets a network thread of their own. False: only when the environment
  /// has several workers or a NetworkReceiver waits on a zero-delay cycle; otherwise the thread
  /// that runs the environment does the network work while it waits (see the header comment).
  bool network_thread = false;
  /// The protocol version it joins with (FederateOptions::protocol_version). Version 3 reads and
  /// sends data header 2 only: no value carries its COMPLETED notice (transport/WIRE.md §2).
  std::uint32_t protocol_version = kProtocolVersion;
  /// With `trace.digests`: every data message it sends is written here (not owned; must outlive
  /// the federate's run). Null: none.
  ValueLog* value_log = nullptr;
  /// Names a wire port for people ("weights[0]") in the reason of a value over the message cap;
  /// unset: its number.
  std::function<std::string(std::uint32_t)> port_name{};
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
                  reactors::PhysicalAction<transport::Payload>& action);
  /// True when the link from upstream `from` is on a zero-delay cycle across federates.
  [[nodiscard]] bool cycle_link_from(const std::string& from) const;
  /// A NetworkReceiver's input on a zero-delay cycle link, delivered by `deliver` through
  /// await_cycle_input(); returns the index to pass there.
  std::size_t bind_cycle_input(const std::string& from, std::uint32_t port,
                               reactors::PhysicalAction<transport::Payload>& action,
                               reactors::Reaction& deliver);
  /// A NetworkSender's output to (to, port), sent by `sender`; on a zero-delay cycle link its
  /// unwritten tags are announced with ABSENT.
  void bind_output(const std::string& to, std::uint32_t port, reactors::Reaction& sender);
  /// In the deliver reaction (at `level`) of cycle input `index` at `tag`: sends ABSENT for the
  /// cycle outputs ordered before `level` that were not written at `tag`, then waits until the
  /// input's status at `tag` is known. Returns the value, or nullopt when absent (or the run
  /// failed). Called from worker threads.
  std::optional<transport::Payload> await_cycle_input(std::size_t index, const reactors::Tag& tag,
                                                      std::size_t level);
  /// Sends `value` to input `port` of downstream `to`, sent at `tag` (the connection's delay
  /// is added). The bytes are shared, not copied: they must not change afterwards (Payload).
  /// Thread-safe; called from reactions.
  void send(const std::string& to, std::uint32_t port, const reactors::Tag& tag,
            transport::Payload value);
  /// The tag at which a value sent to `to` at `tag` arrives (the link's delay added).
  [[nodiscard]] reactors::Tag arrival_tag(const std::string& to, const reactors::Tag& tag) const;
  /// Resuming from a checkpoint (PROTOCOL.md §9.6), after join() and before run(): sends again
  /// a message this federate's part saved in transit, to input `port` of downstream `to`,
  /// arriving at `tag`, and reports it IN_TRANSIT, so that the grants count it like any other.
  /// False when `to` is no downstream.
  bool resend_in_transit(const std::string& to, std::uint32_t port, const reactors::Tag& tag,
                         const transport::Payload& value);
  /// Then RESUMED(tag): the part is loaded and every message it held is reported; the
  /// coordinator of a resumed run grants nothing until every federate said so.
  void report_resumed(const reactors::Tag& tag);
  /// Before run(): FAILED(this federate, `reason`) to the coordinator, which ends the run naming
  /// it (PROTOCOL.md §3.4), e.g. when its checkpoint part cannot be loaded. Never throws.
  void report_failure(const std::string& reason) noexcept;
  /// Sends CHECKPOINT_WRITTEN(tag, bytes, checksum) through the socket owner, in order with
  /// the federate's other messages. Thread-safe; called from a reaction.
  void report_checkpoint(const reactors::Tag& tag, std::uint64_t bytes, std::uint64_t checksum);
  /// Runs `env` to its stop tag under the coordinator's grants, then resigns.
  void run(reactors::Environment& env);

  const transport::PeerDropCounters& drops() const { return plane_.drops(); }
  /// The endpoint the data socket is bound to.
  const std::string& data_endpoint() const { return plane_.endpoint(); }
  /// After run(): the earliest stop tag proposed in the stop negotiation (the digest cutoff,
  /// contract §3), or nullopt when the run ended at its own stop tag without one.
  std::optional<reactors::Tag> stop_proposal() const;
  /// After run(): the stop tag the coordinator granted, or nullopt.
  std::optional<reactors::Tag> granted_stop_tag() const;

 private:
  struct Command {
    enum Kind { kNet, kLtc, kSend, kStop, kAbsent, kCheckpoint } kind;
    WireTag tag;
    std::string to;
    std::uint32_t port = 0;
    transport::Payload value;
    std::size_t level = 0;         // kAbsent: cycle outputs whose sender's level is below this one
    std::uint64_t part_bytes = 0;  // kCheckpoint
    std::uint64_t part_checksum = 0;  // kCheckpoint
    // kSend: the last value for `to` before the batch's next LTC, whose tag this is; its
    // COMPLETED notice goes right after it (mark_notices).
    std::optional<WireTag> notice = std::nullopt;
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
  /// Which sockets a network round reads. After a wait, only those it found readable: a read of
  /// a socket with nothing waiting costs ZeroMQ two system calls (its mailbox's getpid and poll).
  struct Readable {
    bool control;
    bool data;
  };
  /// Waits at most `limit` for the coordinator's socket, the data socket or the eventfd, and says
  /// which socket to read. ZeroMQ's own poll asks every socket for its events before and after
  /// it sleeps, two system calls each. This one sleeps in poll(2) on the sockets' ZMQ_FD
  /// descriptors, which turn readable when ZeroMQ has news for a socket that was read to its
  /// end; it asks a socket for its events first only when it was not read to its end (a receive
  /// stopped at its bound) or sent on since (a send takes in the socket's news too).
  Readable wait_for_sockets(std::chrono::milliseconds limit);
  /// One round of the socket owner's work after a poll: receive, coordinator, grants, stop.
  void network_round(reactors::Environment& env, Readable readable = {true, true});
  /// The network loop's end (failure or run over) on the socket owner's thread.
  void fail(reactors::Environment& env, const std::exception& e);
  void finish();
  /// hooks.wait / hooks.poll when the environment's thread owns the sockets.
  void wait_on_sockets(reactors::Environment& env, std::int64_t timeout_ns);
  void look_at_sockets(reactors::Environment& env);
  void drain_commands();
  /// In batch_: marks each value that its COMPLETED notice may follow at once.
  void mark_notices();
  /// The scheduler's next tag `next`, after a completed tag: reported to the coordinator (LTC and
  /// NET in one frame), or left unreported while the upstreams' notices will grant it (§3.9).
  void announce_or_defer(const WireTag& next);
  /// What this federate's frames say of its waits now (§3.9).
  [[nodiscard]] Reporting reporting_now() const;
  /// Sends what is unreported with `next`, saying whether the next waits may go unreported.
  void report(const WireTag& next);
  /// After a REPORT_REQUEST, or a wait left unreported for longer than overdue(): reports now
  /// and at the next few waits whatever happens.
  void report_eagerly();
  /// How long a wait may go unreported before it is overdue (§3.9.6): twice the time the
  /// upstreams' answers have lately taken, within [kOverdue, kMaxOverdue].
  [[nodiscard]] std::chrono::nanoseconds overdue() const;
  /// The upstreams' notices now grant `bound`: if that answers the tag awaited, learn how long
  /// the answer took.
  void note_answer(const WireTag& bound);
  /// The longest the socket owner may poll before a wait left unreported is overdue.
  [[nodiscard]] std::chrono::milliseconds poll_limit(std::chrono::milliseconds limit) const;
  void send_value(const Command& command);
  void deliver(transport::ReceivedMessage& message);
  void update_grant(reactors::Environment& env);
  /// Traces the wait of a granted tag for the data messages its grant counts (`met`: over): as
  /// `env`'s scheduler's traced wait when this is its thread, else a span of its own.
  void trace_data_wait(reactors::Environment& env, const WireTag& granted, bool met);
  void send_absents(const WireTag& tag, std::size_t below_level);
  void order_cycle_ports(reactors::Environment& env);
  void handle_stop(reactors::Environment& env);
  void propose_stop(const WireTag& floor);

  const FederationSpec& spec_;
  std::string id_;
  ReactorFederateOptions options_;
  zmq::context_t context_;
  FederateDataPlane plane_;  // the socket owner's once run() starts
  std::unique_ptr<FederateClient> client_;
  std::map<std::pair<std::string, std::uint32_t>, reactors::PhysicalAction<transport::Payload>*>
      inputs_;
  WireTag granted_to_env_ = transport::kNever;  // the highest grant given to env (TAG or PTAG)
  WireTag tag_applied_ = transport::kNever;     // the highest TAG applied
  // Zero-delay cycle ports (§3.7). cycle_outputs_ is the socket owner's after run() starts.
  CycleInputs cycle_inputs_;
  std::vector<reactors::Reaction*> cycle_delivers_;
  std::vector<CycleOutput> cycle_outputs_;
  // Stop negotiation, socket owner only.
  std::optional<WireTag> asked_;     // a forwarded STOP_REQUEST waiting for the scheduler's floor
  bool proposed_ = false;            // this federate sent its own STOP_REQUEST
  bool stop_applied_ = false;        // STOP_GRANTED was passed to env.stop_at
  std::optional<WireTag> stop_tag_;  // set by the socket owner before run() reads it
  std::optional<WireTag> stop_proposal_;  // idem
  EventFd wake_;                          // signalled: commands are waiting, or hooks.wake()
  std::mutex mutex_;                      // guards commands_
  std::vector<Command> commands_;
  std::vector<Command> batch_;  // the socket owner's: the commands being drained
  // The environment's thread owns the sockets (no network thread), from run() on.
  std::atomic<bool> owner_is_runner_{false};
  std::thread::id runner_;                           // the thread in run()
  std::chrono::steady_clock::time_point last_look_;  // look_at_sockets' last full round
  // wait_for_sockets(): each socket read to its end since it was last changed otherwise.
  bool data_read_out_ = false;
  bool control_read_out_ = false;
  std::uint64_t control_sends_read_out_ = 0;       // client_->sends() when it was
  prometheus::Counter* by_coordinator_ = nullptr;  // tagflow_federation_grants_total{by}
  prometheus::Counter* by_upstreams_ = nullptr;
  prometheus::Counter* deferred_waits_ = nullptr;   // tagflow_federation_deferred_waits_total
  prometheus::Gauge* waiting_for_start_ = nullptr;  // tagflow_federation_waiting_for_start
  // Waits left unreported (PROTOCOL.md §3.9), socket owner only.
  static constexpr int kMaxDeferredTags = 64;  // completed tags one deferral may hold
  static constexpr int kMaxEagerStretch = 64;  // waits reported in a row after a request
  // The backstop's floor and ceiling (overdue()).
  static constexpr auto kOverdue = std::chrono::milliseconds(1);
  static constexpr auto kMaxOverdue = std::chrono::milliseconds(10);
  std::vector<std::string> upstream_ids_;     // this federate's upstreams
  std::vector<bool> sent_upstream_;           // per upstream: sent to at the current tag
  bool expect_notices_ = false;               // the last tag sent to every upstream
  WireTag pending_next_ = transport::kNever;  // the scheduler's last next tag
  std::optional<std::chrono::steady_clock::time_point> deferred_since_;  // the wait unreported
  int eager_waits_ = 0;       // waits still to report whatever happens
  int eager_stretch_ = 0;     // the length of the last such stretch
  int lazy_waits_ = 1 << 20;  // waits since that stretch ended
  // The upstreams' answers: a tag that sent to every upstream, completed at answer_since_, is
  // answered once their notices grant past it; answer_time_ decays towards the latest such time.
  std::optional<std::chrono::steady_clock::time_point> answer_since_;
  WireTag answer_tag_ = transport::kNever;
  std::chrono::nanoseconds answer_time_{0};
  std::atomic<bool> done_{false};  // env.run() returned (release/acquire; the network thread's)
  std::optional<MessageCapError> cap_error_;  // set with error_, for a value over the cap
  std::string error_;                         // set by the socket owner before run() reads it
  std::int64_t data_wait_since_ = 0;  // traced: a grant waiting for its data since (socket owner)
  WireTag data_wait_tag_ = transport::kNever;
};

/// A reactor that delivers values received from another federate on its `out` port: the received
/// bytes themselves (transport::Payload), not a copy.
class NetworkReceiver : public reactors::Reactor {
 public:
  reactors::PhysicalAction<transport::Payload> received{"received", this};
  reactors::Output<transport::Payload> out{"out", this};
  NetworkReceiver(std::string name, reactors::Environment& env, ReactorFederate& federate,
                  const std::string& from, std::uint32_t port);
};

/// A reactor that sends what arrives on its `in` port to an input of another federate, sharing
/// the Payload's bytes with ZeroMQ (no copy).
class NetworkSender : public reactors::Reactor {
 public:
  reactors::Input<transport::Payload> in{"in", this};
  NetworkSender(std::string name, reactors::Environment& env, ReactorFederate& federate,
                std::string to, std::uint32_t port);
};

}  // namespace tagflow::coordinator
