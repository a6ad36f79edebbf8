// Coordinator: the federation's control plane, one single-threaded event loop over a ROUTER
// socket (PROTOCOL.md). It admits federates, sends the start tag, turns NET/LTC/in-transit
// reports into TAG/PTAG grants (GrantCalculator), runs the stop negotiation, and declares a
// federate failed when it is silent past the heartbeat timeout. It never relays payloads.
//
// Use: construct with a valid FederationSpec, bind() (returns the bound endpoint, useful with
// port 0 / `*`), then run(), which returns when every federate resigned (ok), when a federate
// failed or never joined (error naming it), or when stop() was called from another thread.
// Errors at construction (unreadable keys) throw transport::CurveKeyError. Thread-safety: all
// methods except stop() belong to the thread that calls run().
// Metrics: with set_metrics() (before run(); the ProcessMetrics must outlive the coordinator) it
// updates tagflow_coordinator_tag_advances_total (TAG and PTAG sent), _grant_latency_seconds
// (a federate's next tag received, in a NET or an LTC → the grant that covers it sent; 0 when a
// grant covers it already), _heartbeats_total{peer}, _federates (joined and not failed) and
// _federate_failures_total; and tagflow_transport_invalid_messages_total{peer, reason} for every
// control frame dropped (malformed_control, unknown_peer, ...) or JOIN refused (refused_join).
// Text from peers (ids, reasons) is escaped in the log, one line per peer (common/log_text.hpp).
//
// Launchers (PROTOCOL.md §8) reach it on a third connection per federate, routing id = id +
// `#up`, authenticated with that federate's key: FAILED there ends the run at once naming the
// federate (its process died), and RESULT hands a process's result to the sink set with
// set_result_sink(), answered by RESULT_STORED or REFUSED; TRACE_PART hands a piece of a traced
// process's file to the sink set with set_trace_sink() (TRACE_STORED or REFUSED), and
// CLOCK_REQUEST is answered with the coordinator's clock (CLOCK). collect_results() keeps serving
// them after run() returned, until the sinks have everything they wait for.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "common/log_text.hpp"
#include "common/trace_recorder.hpp"
#include "coordinator/grant_calculator.hpp"
#include "federation/control_message.hpp"
#include "federation/federation_spec.hpp"
#include "transport/connection_guard.hpp"
#include "transport/local_links.hpp"
#include "transport/peer_drop_counters.hpp"
#include "transport/zap_authenticator.hpp"

namespace prometheus {
class Counter;
class Gauge;
class Histogram;
}  // namespace prometheus
namespace tagflow::monitoring {
class ProcessMetrics;
}

namespace tagflow::coordinator {

struct CoordinatorResult {
  bool ok = false;
  std::string error;                ///< empty when ok
  std::vector<std::string> failed;  ///< federates declared failed or missing
  std::uint64_t grants_sent = 0;
  std::uint64_t messages_handled = 0;
  std::uint64_t report_requests = 0;  ///< REPORT_REQUESTs sent (PROTOCOL.md §3.9)
  /// Silences: a joined federate heard from again after more than 3/8 of heartbeat_timeout
  /// without a message (one and a half heartbeat periods: a slow or broken link, a stalled
  /// process), and their total length in seconds (PROTOCOL.md §6.2).
  std::uint64_t silences = 0;
  double silence_seconds = 0;
  /// The same per federate that had any: id -> (silences, seconds).
  std::map<std::string, std::pair<std::uint64_t, double>> silences_by_federate;
  /// Per federate: id -> (TAGs and PTAGs sent to it, its messages handled after it joined).
  /// Which federates lean on the coordinator to advance.
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> traffic_by_federate;
};

/// What a result sink answers: stored (`text` says where the cluster's summary goes) or refused
/// (`text` says why).
struct ResultReceipt {
  bool stored = false;
  std::string text;
};
/// (federate whose key sent it, process name, result JSON) → receipt. Runs on the loop's thread.
using ResultSink =
    std::function<ResultReceipt(const std::string&, const std::string&, const std::string&)>;

/// What a trace sink answers: stored, with the bytes of the file stored so far, or refused
/// (`text` says why).
struct TraceReceipt {
  bool stored = false;
  std::string text;
  std::uint64_t stored_bytes = 0;
};
/// (federate whose key sent it, its TRACE_PART) → receipt (PROTOCOL.md §8.4). Runs on the loop's
/// thread.
using TraceSink = std::function<TraceReceipt(const std::string&, const ControlMessage&)>;

/// (federate, its CHECKPOINT_WRITTEN) → nothing (PROTOCOL.md §9). Runs on the loop's thread; a
/// std::exception it throws ends the run with its message (a manifest that cannot be written).
using CheckpointSink = std::function<void(const std::string&, const ControlMessage&)>;

class Coordinator {
 public:
  explicit Coordinator(FederationSpec spec);
  ~Coordinator();
  Coordinator(const Coordinator&) = delete;
  Coordinator& operator=(const Coordinator&) = delete;

  /// Binds spec.address (or `endpoint` when given); returns the endpoint actually bound.
  std::string bind(const std::string& endpoint = "");
  /// Runs the event loop until the run ends (see the class comment).
  CoordinatorResult run();
  /// Asks run() to return at its next wake-up, ending the run with FAILED to every joined
  /// federate: `coordinator stopped by SIGTERM before the run finished` when `signal` names the
  /// signal that stopped it, else `coordinator stopped before the run finished`. Thread-safe and
  /// async-signal-safe (one lock-free store).
  void stop(int signal = 0) {
    stop_requested_.store(signal > 0 ? signal : -1, std::memory_order_relaxed);
  }

  /// Where CHECKPOINT_WRITTEN reports go (before run()); without a sink they are dropped and
  /// counted (unknown_kind).
  void set_checkpoint_sink(CheckpointSink sink) { checkpoint_sink_ = std::move(sink); }
  /// Where RESULT messages go (before run()); without a sink they are refused.
  void set_result_sink(ResultSink sink) { result_sink_ = std::move(sink); }
  /// Where TRACE_PART messages go (before run()); without a sink they are refused.
  void set_trace_sink(TraceSink sink) { trace_sink_ = std::move(sink); }
  /// After run(): serves launchers' RESULT messages until `complete()` is true (checked after
  /// every batch) or `timeout` passed; returns complete().
  bool collect_results(std::chrono::milliseconds timeout, const std::function<bool()>& complete);

  /// Exports the coordinator families into `metrics` (not owned). Call before run().
  void set_metrics(monitoring::ProcessMetrics* metrics);

  /// Refused handshakes so far (a key ZAP refused, or a handshake that failed before the key
  /// check: no CURVE, another server key), for tests and metrics.
  [[nodiscard]] std::uint64_t refused_handshakes() const;

 private:
  using Clock = std::chrono::steady_clock;
  struct Member {
    bool joined = false;
    bool resigned = false;
    std::string identity;  // routing id of the control connection
    std::string endpoint;  // data endpoint
    std::string address;   // peer address of the connection it joined from (logs)
    std::uint32_t version = kProtocolVersion;  // the protocol version it joined with (§2)
    Clock::time_point last_seen;
    /// When one of its control or heartbeat connections closed (TCP ended), until it is heard
    /// from again (§6.3).
    std::optional<Clock::time_point> closed_at;
    std::optional<Clock::time_point> waiting_since;  // a NET not yet answered by a grant
    Reporting reporting = Reporting::kEveryWait;     // as its last NET or LTC said (§3.9)
    bool asked = false;                              // sent REPORT_REQUEST since that frame
    bool resumed = false;                            // a resumed run: it sent RESUMED (§9.6)
    int join_fd = -1;                // the connection (ZMQ_SRCFD) its accepted JOIN came on
    bool join_closed = false;        // that connection closed (its heartbeats may go on)
    bool spoke_since_start = false;  // a frame other than JOIN came from it after START
    /// The grants sent to it after START while it had said nothing since (at most the newest
    /// TAG and the newest PTAG after it): a JOIN that gets START again gets these again too (§2.2).
    std::vector<ControlMessage> unheard_grants;
    /// A launcher's FAILED for it that came before it joined, and when (§8.1): it ends the run
    /// only if the federate has still not joined `held_report_window()` later, for it may be
    /// about the process of the run before, delivered late to this one.
    std::optional<std::pair<std::string, Clock::time_point>> held_report;
    std::uint64_t grants = 0;                   // TAGs and PTAGs sent to it
    std::uint64_t messages = 0;                 // its frames handled after it joined
    prometheus::Counter* heartbeats = nullptr;  // with metrics
    prometheus::Counter* silences = nullptr;
    prometheus::Counter* silence_seconds = nullptr;
    prometheus::Counter* sent = nullptr;  // transport families, per peer
    prometheus::Counter* sent_bytes = nullptr;
    prometheus::Counter* received = nullptr;
    prometheus::Counter* received_bytes = nullptr;
  };
  struct Metrics {
    prometheus::Counter* tag_advances = nullptr;
    prometheus::Counter* report_requests = nullptr;
    prometheus::Histogram* grant_latency = nullptr;
    prometheus::Gauge* federates = nullptr;
    prometheus::Counter* failures = nullptr;
  };

  /// One control frame from `identity`, read from connection `fd` (ZMQ_SRCFD; -1: unknown).
  void handle(const std::string& identity, const zmq::message_t& frame, int fd);
  /// A heartbeat on a heartbeat connection (`id#hb`): noted and echoed.
  void handle_heartbeat(const std::string& identity, const ControlMessage& message);
  /// A message from a joined federate's control connection.
  void handle_member(const std::string& identity, const ControlMessage& message);
  /// The in-transit report `federate` sent: a message to `destination` arrives at `tag`.
  void note_in_transit(const std::string& identity, std::size_t federate,
                       const std::string& destination, const WireTag& tag);
  void handle_resign(const std::string& identity, std::size_t federate);
  void handle_resumed(const std::string& identity, std::size_t federate, const WireTag& tag);
  /// Grants may go out: the run started and, when resumed, every federate sent RESUMED.
  [[nodiscard]] bool granting() const {
    return started_ && (!resuming_ || resumed_count_ == members_.size());
  }
  void handle_checkpoint_written(const std::string& identity, std::size_t federate,
                                 const ControlMessage& message);
  /// Ends the run naming member `federate` (the first failure reported wins).
  void note_failure(std::size_t federate, const std::string& why);
  /// `address`: the connection's peer address (ZeroMQ's Peer-Address), for the log.
  /// `fd`: the connection it came on (ZMQ_SRCFD), -1 when unknown. False when the JOIN was
  /// refused: a refused frame is no sign of life of the member whose id it claims (§6.1).
  bool handle_join(const std::string& identity, const ControlMessage& join,
                   const std::string& address, int fd);
  void handle_stop(std::size_t federate, const ControlMessage& message);
  /// START: the start tag and every member's data endpoint (§2.3).
  [[nodiscard]] ControlMessage start_message(const Member& to) const;
  /// A message on a launcher's connection (`id#up`) for federate `index` (§8).
  void handle_launcher(const std::string& identity, std::size_t index,
                       const ControlMessage& message);
  /// Receives and handles up to one batch; returns whether every waiting message was read.
  bool receive_batch();
  /// Which of the two sockets run() reads after a wait.
  struct Readable {
    bool router;
    bool closed;
  };
  /// Waits at most `limit` for the router or the monitor socket and says which to read. Like a
  /// federate's wait (federate/README.md), it sleeps in poll(2) on the sockets' ZMQ_FD
  /// descriptors, which turn readable when ZeroMQ has news for a socket whose events were asked
  /// since it last had some: zmq::poll asked both sockets for their events before and after every
  /// sleep, a system call each. The router is asked first every time (the coordinator sends on
  /// it in almost every round, and a send takes in the socket's news without announcing it);
  /// the monitor socket only when it was not read to its end.
  Readable wait_for_sockets(std::chrono::milliseconds limit);
  /// Whether `fd` is the connection `identity` was last heard on.
  [[nodiscard]] bool on_known_connection(const std::string& identity, int fd) const;
  /// Notes the connection `fd` (ZMQ_SRCFD) a frame of a joined federate came on: heard from,
  /// and, when the monitor already said that connection closed, gone from now (§6.3).
  void note_connection(const std::string& identity, int fd);
  /// Reads the socket monitor's events: marks the members whose connection closed (DISCONNECTED)
  /// and keeps which descriptors are closed until their next connection (ACCEPTED).
  void read_closed_connections(Clock::time_point now);
  /// The first joined, not resigned member whose connection closed more than the grace ago and
  /// who sent nothing since; members_.size() when none.
  [[nodiscard]] std::size_t find_gone(Clock::time_point now) const;
  /// A member failed: the failure counter and the federates gauge, with metrics.
  void count_failure();
  /// Member `index` sent something: a sign of life, and the end of a silence if it was one.
  void heard_from(std::size_t index, Clock::time_point now);
  /// A frame that does not decode: REFUSED with the reason to a peer that has not joined, else
  /// dropped, counted and logged once (PROTOCOL.md §1).
  void handle_malformed(const std::string& identity, const ControlDecodeResult& decoded);
  /// REFUSED(why) to `identity`, logged once per peer with `why` escaped, or with `logged` where
  /// given (a `why` that holds escaped text already, which escaping again would double).
  void refuse(const std::string& identity, const std::string& why,
              const std::optional<std::string>& logged = std::nullopt);
  void send(const std::string& identity, const ControlMessage& message);
  /// With CURVE: the federate whose public key `frame`'s connection authenticated with ("" when
  /// none), and whether that is the federate `identity` (control or heartbeat) belongs to.
  std::string key_owner_of(const zmq::message_t& frame) const;
  bool key_matches(const std::string& identity, const zmq::message_t& frame) const;
  /// The member a routing id belongs to (control or heartbeat connection), or size() if none.
  std::size_t member_of(const std::string& identity) const;
  /// Counts a valid control message received from member `index` (with metrics).
  void count_received(std::size_t index, std::size_t bytes);
  void broadcast(const ControlMessage& message);
  void send_grants();
  /// Keeps `grant` for a JOIN that gets START again (Member::unheard_grants).
  static void keep_unheard(Member& member, const ControlMessage& grant);
  /// When a federate that said it needs the coordinator waits for a grant, asks every federate
  /// that may have left waits unreported, once per report, for its report (PROTOCOL.md §3.9).
  void request_reports();
  /// Starts timing the grant latency of `next`, the next tag of federate `index`.
  void time_grant(std::size_t index, const WireTag& next);
  /// A NET or LTC of member `index` said how it reports its waits from now on (§3.9): kept for
  /// the report requests and the grants; it was not asked since.
  void note_reporting(std::size_t index, Reporting said);
  /// At most every kFloorInterval: FLOOR with the earliest tag any joined federate's LTC has
  /// reached, when it rose, to every federate of version 5 or later (PROTOCOL.md §5.1).
  void send_floor();
  /// The first member silent past the timeout, or size() when none.
  std::size_t find_silent(Clock::time_point now) const;
  CoordinatorResult fail(std::vector<std::string> who, const std::string& why);

  FederationSpec spec_;
  zmq::context_t context_;
  std::unique_ptr<transport::ZapAuthenticator> zap_;
  std::map<std::string, std::string> key_owner_;  // CURVE public key → federate id
  zmq::socket_t router_;
  transport::TwinFile twin_;      // the router's Unix-socket twin's file; removed before it closes
  zmq::socket_t closed_events_;   // the router's DISCONNECTED (and ACCEPTED) events (monitor)
  bool closed_read_out_ = false;  // closed_events_ asked or read to its end since it had news
  std::unique_ptr<transport::ConnectionGuard> guard_;  // without CURVE (WIRE.md §3.1)
  std::map<int, std::string> connection_identity_;     // fd -> the routing id last heard on it
  // Descriptors whose last monitor event was a close (DISCONNECTED, not yet followed by
  // ACCEPTED): at most one entry per descriptor number the process has.
  std::set<int> closed_descriptors_;
  GrantCalculator grants_;
  std::vector<Member> members_;
  std::size_t joined_count_ = 0;
  std::size_t resigned_count_ = 0;
  bool started_ = false;
  /// A resumed run (start tag not (0, 0)): no grant until every federate sent RESUMED (§9.6).
  bool resuming_ = false;
  std::size_t resumed_count_ = 0;
  std::optional<WireTag> stop_proposal_;      // the latest proposal: the stop tag
  std::optional<WireTag> earliest_proposal_;  // the earliest: relayed as the cutoff
  std::vector<bool> stop_waiting_;
  bool stop_granted_ = false;
  WireTag floor_ = transport::kNever;  // the last FLOOR sent
  Clock::time_point floor_sent_at_;
  transport::PeerDropCounters drops_;
  PeerLogBudget log_budget_;  // refusals and malformed frames: one log line per peer
  ResultSink result_sink_;
  TraceSink trace_sink_;
  CheckpointSink checkpoint_sink_;
  /// How long a launcher's FAILED for a federate not yet joined is held: min(10 s, join_timeout).
  [[nodiscard]] Clock::duration held_report_window() const;
  /// The first federate not joined whose launcher report is held and has waited out the window
  /// (any held one when `failing`: the run ends anyway), or members_.size().
  [[nodiscard]] std::size_t find_held_report(Clock::time_point now, bool failing) const;
  std::optional<std::string> peer_failure_;  // a FAILED from a federate: the run ends
  std::size_t peer_failure_index_ = 0;
  Metrics metrics_;  // all null without set_metrics()
  /// stats_ with each member's traffic.
  [[nodiscard]] CoordinatorResult result_so_far() const;
  CoordinatorResult stats_;
  std::atomic<int> stop_requested_{0};  // 0, -1 (stop()) or a signal; relaxed: polled by run()
  std::optional<Clock::time_point> behind_since_;  // messages were left unread since then
  trace::NameCache trace_names_;                   // tracing/README.md
};

}  // namespace tagflow::coordinator
