// FederateDataPlane: the data side of one federate (transport/WIRE.md) and the bookkeeping the
// coordinator protocol ties to it (PROTOCOL.md §3.2–§3.4) — the one copy of it that both
// FederateRuntime (tag-ordered programs) and ReactorFederate (reactor programs) drive.
//
// It owns:
//   - the data ROUTER where the upstreams' DEALERs connect (prepare_data_socket: receiver
//     limits, CURVE + ZAP allow-list of the upstreams when the federation has keys), and one
//     output DEALER per downstream (routing id = this federate's id, no send high-water mark,
//     so a reaction never blocks on a slow downstream), connected from the START endpoints;
//   - the MessageValidator (allowed (upstream, port) pairs, the completed tag) and the
//     per-peer drop counters; with CURVE, a message whose connection authenticated with another
//     upstream's key than the one its routing id names is dropped (unknown_peer);
//   - per upstream, the tags of the received data messages not yet completed and the count of
//     completed ones: a grant's counts are met (counts_met) when completed + received with a tag
//     <= the grant reach them, so a grant never overtakes data still on the wire (§3.4);
//   - the in-transit reports of the data messages sent since the previous LTC, and LTC batching:
//     complete() marks a tag done, flush_completed() sends one LTC with the latest completed tag,
//     the in-transit list and (when given) the next tag in the same frame (§3.2); a full list
//     (kMaxInTransitPerLtc) is flushed with an LTC of the previous completed tag first;
//   - the next tag the coordinator has from this federate, and announce(): a NET, or the pending
//     LTC carrying the next tag, and no NET for a tag only a received message asks for while the
//     coordinator's copy is later and not stale, unless on a zero-delay cycle (§3.3);
//   - without CURVE, a ConnectionGuard on the data socket (transport/connection_guard.hpp,
//     WIRE.md §3.1): a connection that makes ZeroMQ hold more than one message's bytes
//     unread (an incomplete multipart message without end), or that holds data and makes no
//     progress (a second connection with a routing id in use), is cut and counted; with CURVE,
//     handshakes that fail before the key check (no CURVE, another server key) are counted as
//     refused and the first of each kind logged (the data socket's monitor, read when a receive
//     finds nothing);
//   - bounded reads: receive() reads at most kMaxReceivedPerCall messages per call, so a federate
//     far behind a fast upstream goes back to its tags and control messages (FAILED, a stop)
//     between batches;
//   - with metrics: tagflow_transport_{messages_sent,sent_bytes}_total{peer} per downstream,
//     _{messages_received,received_bytes}_total{peer} per upstream (values; ABSENTs are counted
//     by neither), tagflow_transport_invalid_messages_total{peer, reason} per dropped message.
//
// Use: construct (binds), allow_input() for every accepted (upstream, port), connect(START), then
// per tag: receive() what arrived, run the tag when counts_met(), send_value()/send_absent() its
// outputs (reported in transit, in the next LTC), complete() it, and announce() the next tag
// before waiting. Payloads are sent zero-copy (transport::Payload, zmq_msg_init_data) and handed
// to the receiver as the frames ZeroMQ received.
// Errors: FederationError when the endpoint cannot be bound; transport::CurveKeyError for a
// missing or malformed key file. Bad bytes from a peer are dropped and counted, never thrown —
// except a message the grants count (DataLossError, see receive()).
// Thread-safety: none; one thread (the runtime's loop, or ReactorFederate's socket owner) calls
// everything after construction. The context, the spec and the metrics must outlive the plane.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <zmq.hpp>

#include "common/trace_recorder.hpp"
#include "common/value_log.hpp"
#include "federate/federate_client.hpp"
#include "transport/connection_guard.hpp"
#include "transport/local_links.hpp"
#include "transport/message_validator.hpp"
#include "transport/payload.hpp"
#include "transport/peer_drop_counters.hpp"
#include "transport/wire_socket.hpp"
#include "transport/zap_authenticator.hpp"

namespace tagflow::monitoring {
class ProcessMetrics;
}
namespace prometheus {
class Counter;
}

namespace tagflow::coordinator {

class FederateDataPlane {
 public:
  /// Data messages receive() reads per call at most.
  static constexpr int kMaxReceivedPerCall = 1024;

  /// Binds federate `id`'s data socket to `bind_endpoint` (e.g. "tcp://127.0.0.1:*"). Throws
  /// FederationConfigError when `id` is not in `spec`, FederationError when it cannot bind.
  FederateDataPlane(zmq::context_t& context, const FederationSpec& spec, std::string id,
                    const std::string& bind_endpoint,
                    monitoring::ProcessMetrics* metrics = nullptr);
  /// Closes the outputs, reads away what is left unread (a full receive queue would keep the
  /// context from terminating; at most 100000 messages) and closes the data socket.
  ~FederateDataPlane();
  FederateDataPlane(const FederateDataPlane&) = delete;
  FederateDataPlane& operator=(const FederateDataPlane&) = delete;

  /// The endpoint the data socket is bound to.
  [[nodiscard]] const std::string& endpoint() const { return endpoint_; }
  /// The data socket, to poll for input.
  [[nodiscard]] zmq::socket_t& socket() { return data_; }
  [[nodiscard]] const transport::PeerDropCounters& drops() const { return drops_; }
  /// The data socket's connection guard (nullptr with CURVE, where only upstreams connect).
  [[nodiscard]] const transport::ConnectionGuard* guard() const { return guard_.get(); }
  /// With CURVE: the handshakes refused so far (by its ZAP handler, or failed before the key
  /// check), for tests.
  [[nodiscard]] std::uint64_t refused_handshakes() const {
    return zap_ ? zap_->refused_count() : 0;
  }
  /// True when this federate is on a zero-delay cycle across federates.
  [[nodiscard]] bool on_zero_delay_cycle() const { return on_zero_delay_cycle_; }

  /// Accepts data messages from upstream `from` on `port` (before connect()).
  void allow_input(const std::string& from, std::uint32_t port);
  /// Connects one DEALER per downstream to the data endpoint START gave it, and from now on
  /// refuses messages with a tag before START's tag. `protocol_version`: the one this federate
  /// joined with. Version 6 reads data headers 2 to 4 and sends header 4 (the payloads in the
  /// header's frame, when they total at most 16 KiB; header 3 otherwise) to the downstreams whose
  /// version START gives as 6 or more; versions 4 and 5 read headers 2 and 3; to a downstream of
  /// version 4 or 5 it sends header 3 (a value may carry its COMPLETED notice as `done`), to one
  /// of version 3 header 2; version 3 reads and sends header 2 only (PROTOCOL.md §2.5).
  void connect(const ControlMessage& start, std::uint32_t protocol_version);

  /// Reads at most kMaxReceivedPerCall data messages without waiting; when it found nothing
  /// more waiting, the connection guard checks the connections. Each valid message is counted
  /// against its upstream's grants and passed to `deliver` (header and payload frames, to keep);
  /// invalid ones are dropped and counted. True when it stopped at the bound (more may wait).
  /// A value or ABSENT from an upstream on its own connection whose header decodes but which is
  /// refused anyway (bad_version, too_many_frames, frame_count_mismatch, size_mismatch,
  /// message_too_large, unknown_port, tag_in_past) is counted, then throws DataLossError naming
  /// the sender, the port and the reason: the grants count that message, so they could never be
  /// met.
  bool receive(const std::function<void(transport::ReceivedMessage& message)>& deliver);
  /// Before START, when nothing reads the data socket yet: lets the connection guard cut a
  /// connection over its limits (without reading: upstreams' messages wait for receive()).
  void watch_connections() {
    if (guard_) (void)guard_->check(drops_);
    count_failed_handshakes();
  }
  /// True when, from every upstream in `counts`, the completed messages plus those received with a
  /// tag <= `through` are at least its count.
  [[nodiscard]] bool counts_met(const std::map<std::string, std::uint64_t>& counts,
                                const WireTag& through) const;
  /// True when a received, not yet completed data message has tag `tag`.
  [[nodiscard]] bool asked_by_input(const WireTag& tag) const;

  /// The tag at which a message sent at `sent_at` arrives at downstream `to` (its link's delay).
  [[nodiscard]] WireTag arrival_tag(const std::string& to, const WireTag& sent_at) const;
  /// True when `to` is a downstream this federate is connected to (after connect()).
  [[nodiscard]] bool sends_to(const std::string& to) const {
    const auto down = downstreams_.find(to);
    return down != downstreams_.end() && static_cast<bool>(down->second.socket);
  }
  /// Reports a data message to `to` arriving at `arrival` in transit: it goes in the next LTC.
  /// A full list is sent first with an LTC of the latest completed tag.
  void report_in_transit(FederateClient& client, const std::string& to, const WireTag& arrival);
  /// Sends `payload` (shared, not copied) to input `port` of downstream `to` with tag `arrival`.
  /// Does not report it (report_in_transit). False when `to` is not a connected downstream;
  /// FederationError (nothing sent) for a payload over the message cap the receiver enforces.
  /// With `done`, the value's header also says that the sender completed `done` right after it
  /// (header version 3, WIRE.md §2): `to` then needs no COMPLETED notice of that tag.
  bool send_value(const std::string& to, std::uint32_t port, const WireTag& arrival,
                  const transport::Payload& payload, std::optional<WireTag> done = std::nullopt);
  /// Sends ABSENT(port, arrival) to `to` (WIRE.md §2), not reported; false as send_value().
  bool send_absent(const std::string& to, std::uint32_t port, const WireTag& arrival);

  /// `tag` is complete: the received messages with a tag <= it count as completed, messages at or
  /// before it are refused from now on, and its LTC is pending, as is a COMPLETED notice to
  /// every downstream sent a value or an ABSENT since the last notice.
  void complete(const WireTag& tag);
  /// Sends the pending COMPLETED notices (WIRE.md §2, PROTOCOL.md §3.8), each after everything
  /// sent to its downstream before it.
  void send_completed_notices();
  /// Sends COMPLETED(tag) to `to` now, right after the last value of the tag (which completes,
  /// its LTC already queued, with nothing more for `to`): the two then leave in one write and
  /// arrive in one wake-up. complete() sends `to` no second notice for it.
  void send_completed_notice_now(const std::string& to, const WireTag& tag);
  /// The latest tag through which, by the upstreams' own COMPLETED notices, nothing more can
  /// arrive from any upstream (kNever until every upstream sent one, and with no upstream).
  [[nodiscard]] WireTag upstream_bound() const;
  /// Completed tags not yet reported by an LTC.
  [[nodiscard]] int unreported_tags() const { return unreported_; }
  /// Completed tags or sent messages not yet reported by an LTC.
  [[nodiscard]] bool has_unreported() const { return unreported_ != 0 || !in_transit_.empty(); }
  /// Sends LTC(latest completed tag) with the unreported in-transit messages and, when given,
  /// `next` as the next tag in the same frame — if there is anything to report. An LTC without a
  /// next tag leaves the coordinator without one (announced() becomes kNever). `reporting` goes
  /// with a next tag (PROTOCOL.md §3.9); a frame without one says kEveryWait.
  void flush_completed(FederateClient& client, std::optional<WireTag> next,
                       Reporting reporting = Reporting::kEveryWait);
  /// About to wait for `next`: sends the pending LTC with `next`, or else NET(next) unless the
  /// coordinator has it already or needs no NET for it (PROTOCOL.md §3.3); `reporting` as above.
  void announce(FederateClient& client, const WireTag& next,
                Reporting reporting = Reporting::kEveryWait);
  /// The next tag the coordinator has from this federate, or kNever.
  [[nodiscard]] const WireTag& announced() const { return announced_; }
  /// The reporting of the last frame the coordinator has from this federate (§3.9): only while
  /// it is kMayDefer may the federate leave a wait unreported.
  [[nodiscard]] Reporting announced_reporting() const { return announced_reporting_; }

  /// Every data message sent from now on is also written to `log` (with `trace.digests`,
  /// tracing/README.md); null: none. The log must outlive the plane's sends.
  void set_value_log(ValueLog* log) { value_log_ = log; }

 private:
  struct PeerCounters {
    prometheus::Counter* messages = nullptr;
    prometheus::Counter* bytes = nullptr;
  };
  /// What a send to one downstream needs, found with one lookup by its id.
  struct Downstream {
    ConnectionDelay delay;  // its link's delay
    zmq::socket_t socket;   // connected by connect(); empty before
    std::uint32_t reads_header = transport::kOldestWireVersion;  // newest data header it reads
    PeerCounters sent;                                           // with metrics
    bool unnotified = false;            // sent a value or an ABSENT since its last notice
    std::optional<WireTag> notice_due;  // the completed tag to announce to it
  };
  /// What a message from one upstream updates, found with one lookup by its id.
  struct Upstream {
    std::deque<WireTag> received;             // tags of its messages not yet completed, in order
    std::map<std::uint32_t, WireTag> latest;  // per port: the tag of its latest message
    std::uint64_t completed = 0;              // its messages completed
    PeerCounters counters;                    // with metrics
    std::optional<WireTag> notified;          // its latest COMPLETED (or a value's `done`)
  };
  void setup_metrics(monitoring::ProcessMetrics& metrics);
  /// True when `message`'s header names its sender, the sender is the connection's routing id
  /// and one of this federate's upstreams.
  [[nodiscard]] bool from_own_upstream(const transport::ReceivedMessage& message) const;
  /// With CURVE: true when `message` came over a connection authenticated with the key of the
  /// upstream its routing id names.
  [[nodiscard]] bool sent_with_own_key(const transport::ReceivedMessage& message) const;
  /// Sends COMPLETED(tag) to `to`, traced.
  void send_notice(const std::string& to, Downstream& down, const WireTag& tag);
  void trace_notice(const std::string& to, const WireTag& tag);
  /// A header from this federate in the newest version `to` reads (connect()); with
  /// `payload_bytes` over HeaderLimits::max_inline_bytes, not newer than 3 (payload frames).
  /// Kept in `outgoing_` (tag, port, kind and done reset), which every send reuses: its
  /// strings and sizes keep their room, so a send allocates no header.
  transport::WireHeader& header_to(const Downstream& down, std::size_t payload_bytes = 0);
  /// `upstream` completed `tag`: by a COMPLETED notice or a value's `done`.
  void note_completed(const std::string& upstream, const WireTag& tag);
  /// Sends a message without payload (an ABSENT or a COMPLETED) to `down`.
  void send_header_only(Downstream& down, std::uint32_t port, transport::MessageKind kind,
                        const WireTag& tag);
  /// The connected downstream `to`, or null.
  Downstream* connected(const std::string& to);
  /// The names of a data message this federate sends to `to`, for its trace event.
  void trace_message(trace::Event& event, const std::string& to, std::uint32_t port,
                     std::size_t bytes);
  [[noreturn]] void fail_on_lost_message(const transport::WireHeader& header,
                                         transport::DropReason reason) const;
  /// A header frame that names no sender (names_no_sender()) on `upstream`'s own connection, the
  /// one under its routing id (with CURVE, also under its key): the grants may count a message
  /// this federate cannot read.
  [[noreturn]] void fail_on_unreadable_message(const std::string& upstream,
                                               transport::DropReason reason) const;

  zmq::context_t& context_;
  const FederationSpec& spec_;
  std::string id_;
  const FederateSpec* me_ = nullptr;               // this federate in spec_
  std::map<std::string, Downstream> downstreams_;  // every downstream, by id
  bool on_zero_delay_cycle_ = false;
  transport::MessageValidator validator_;
  transport::PeerDropCounters drops_;
  std::unique_ptr<transport::ZapAuthenticator> zap_;  // outlives data_
  std::map<std::string, std::string> key_owner_;      // with CURVE: upstream public key → id
  zmq::socket_t data_;
  std::unique_ptr<transport::ConnectionGuard> guard_;  // without CURVE; before data_ closes
  // With CURVE: the data socket's monitor of handshakes that failed before the key check (no
  // CURVE, another server key), read where a receive found nothing; the ZAP handler counts them.
  std::optional<zmq::socket_t> handshake_events_;
  void count_failed_handshakes();
  std::string endpoint_;
  transport::TwinFile twin_;        // its Unix-socket twin's file; removed before data_ closes
  transport::WireHeader outgoing_;  // header_to()'s
  std::map<std::string, Upstream> upstreams_;  // every upstream, by id
  WireTag completed_tag_ = transport::kNever;  // the latest tag completed
  int unreported_ = 0;                         // completed tags not yet reported by an LTC
  std::vector<std::pair<std::string, WireTag>> in_transit_;  // sent, not yet reported
  WireTag announced_ = transport::kNever;
  Reporting announced_reporting_ = Reporting::kEveryWait;
  trace::NameCache trace_names_;  // the socket owner's (tracing/README.md)
  ValueLog* value_log_ = nullptr;
};

}  // namespace tagflow::coordinator
