#include "federate/federate_data_plane.hpp"

#include <algorithm>

#include "common/trace_recorder.hpp"
#include "federate/data_socket.hpp"
#include "monitoring/process_metrics.hpp"
#include "transport/curve_keys.hpp"
#include "transport/local_links.hpp"

namespace tagflow::coordinator {

namespace {

/// Refusals of a header frame that names no sender (WIRE.md §3 steps 2-4). A message without a
/// header frame (`no_frames`) is not among them: it is dropped and counted only (WIRE.md §3).
bool names_no_sender(transport::DropReason reason) {
  return reason == transport::DropReason::kHeaderTooLarge ||
         reason == transport::DropReason::kMalformedHeader ||
         reason == transport::DropReason::kUnknownKind;
}

bool is_upstream(const FederateSpec& me, const std::string& id) {
  return std::any_of(me.upstreams.begin(), me.upstreams.end(),
                     [&](const UpstreamLink& link) { return link.federate == id; });
}

}  // namespace

using transport::kForever;
using transport::kNever;

FederateDataPlane::FederateDataPlane(zmq::context_t& context, const FederationSpec& spec,
                                     std::string id, const std::string& bind_endpoint,
                                     monitoring::ProcessMetrics* metrics)
    : context_(context), spec_(spec), id_(std::move(id)), data_(context, zmq::socket_type::router) {
  me_ = spec_.find(id_);
  if (me_ == nullptr) {
    throw FederationConfigError("federate '" + id_ + "' is not in the federation");
  }
  for (const std::string& down : me_->downstreams) {
    ConnectionDelay& delay = downstreams_[down].delay;
    if (const FederateSpec* destination = spec_.find(down)) {
      for (const UpstreamLink& link : destination->upstreams) {
        if (link.federate == id_) delay = link.delay;
      }
    }
  }
  on_zero_delay_cycle_ = spec_.on_zero_delay_cycle(id_);
  zap_ = prepare_data_socket(context_, data_, validator_.policy(), spec_, *me_);
  if (zap_) {
    handshake_events_ = transport::monitor_events(
        context_, data_, ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL, "federate-handshakes");
  }
  if (!spec_.keys_dir) {
    // With CURVE only upstreams' keys connect; without it anyone on the network can (WIRE.md §3.1).
    const transport::ValidationPolicy& policy = validator_.policy();
    transport::ConnectionLimits limits = transport::limits_for_messages(
        policy.max_message_bytes, policy.header_limits.max_header_bytes);
    limits.socket_name = "the data port";
    guard_ = std::make_unique<transport::ConnectionGuard>(context_, data_, limits);
  }
  try {
    const std::string at = transport::bindable_endpoint(bind_endpoint);  // a name, an IPv6 address
    transport::set_ipv6_for(data_, at);
    data_.bind(at);
  } catch (const zmq::error_t& e) {
    throw FederateSetupError("federate '" + id_ + "': cannot listen for data on " + bind_endpoint +
                             ": " + e.what());
  }
  endpoint_ = data_.get(zmq::sockopt::last_endpoint);
  // Upstreams on this machine connect to its Unix-socket twin instead (WIRE.md §1.1).
  twin_.adopt(transport::bind_local_twin(data_, endpoint_));
  for (const UpstreamLink& up : me_->upstreams) {
    (void)upstreams_[up.federate];
    validator_.allow_peer(up.federate);  // a port it does not accept is then unknown_port
    if (spec_.keys_dir) {
      key_owner_[transport::read_key_pair(*spec_.keys_dir, up.federate, true).public_key] =
          up.federate;
    }
  }
  if (metrics != nullptr) setup_metrics(*metrics);
}

void FederateDataPlane::setup_metrics(monitoring::ProcessMetrics& metrics) {
  using monitoring::Metric;
  const FederateSpec& me = *me_;
  for (const std::string& down : me.downstreams) {
    downstreams_[down].sent = {&metrics.counter(Metric::transport_messages_sent, {{"peer", down}}),
                               &metrics.counter(Metric::transport_sent_bytes, {{"peer", down}})};
  }
  for (const UpstreamLink& up : me.upstreams) {
    upstreams_[up.federate].counters = {
        &metrics.counter(Metric::transport_messages_received, {{"peer", up.federate}}),
        &metrics.counter(Metric::transport_received_bytes, {{"peer", up.federate}})};
  }
  if (zap_) {  // refused CURVE handshakes: a key none of its upstreams holds, or none at all
    prometheus::Counter* refused = &metrics.counter(
        Metric::transport_invalid_messages,
        {{"peer", "unknown"},
         {"reason", transport::drop_reason_name(transport::DropReason::kRefusedHandshake)}});
    zap_->set_refused_observer([refused] { refused->Increment(); });
  }
  drops_.set_observer([&metrics](const std::string& peer, transport::DropReason reason) {
    metrics
        .counter(Metric::transport_invalid_messages,
                 {{"peer", peer}, {"reason", transport::drop_reason_name(reason)}})
        .Increment();
  });
}

FederateDataPlane::~FederateDataPlane() {
  for (auto& [id, down] : downstreams_) down.socket.close();
  // Unread data left on the socket when its receive queue is full keeps libzmq's context from
  // terminating (its I/O thread cannot hand the queue the end marker): read it away first. The
  // bound keeps a peer that still sends from holding the federate here.
  zmq::message_t unread;
  for (int i = 0; i < 100000 && data_.recv(unread, zmq::recv_flags::dontwait); ++i) {
  }
  guard_.reset();
  if (handshake_events_) {
    (void)zmq_socket_monitor(data_.handle(), nullptr, 0);
    handshake_events_.reset();
  }
  twin_.remove();  // while data_ still holds the TCP port (local_links.hpp)
  data_.close();
  zap_.reset();
}

void FederateDataPlane::count_failed_handshakes() {
  if (!handshake_events_) return;
  std::uint16_t kind = 0;
  std::uint32_t value = 0;
  while (transport::read_monitor_event(*handshake_events_, kind, value)) {
    if (kind == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL) zap_->note_failed_handshake(value);
  }
}

void FederateDataPlane::allow_input(const std::string& from, std::uint32_t port) {
  validator_.allow_port(from, port);
}

void FederateDataPlane::connect(const ControlMessage& start, std::uint32_t protocol_version) {
  // The newest data header a federate of protocol version `v` reads (PROTOCOL.md §2.5).
  const auto newest_header = [](std::uint32_t v) {
    if (v >= kFirstInlineVersion) return transport::kFirstInlineHeaderVersion;
    return v >= kFirstDoneVersion ? transport::kFirstDoneHeaderVersion
                                  : transport::kOldestWireVersion;
  };
  validator_.set_newest_version(newest_header(protocol_version));
  if (protocol_version >= kFirstDoneVersion) {
    // What this federate sends is never newer than what it reads itself.
    for (const auto& [id, version] : start.versions) {
      if (const auto down = downstreams_.find(id); down != downstreams_.end()) {
        down->second.reads_header =
            std::min(newest_header(version), newest_header(protocol_version));
      }
    }
  }
  for (const std::string& down : spec_.find(id_)->downstreams) {
    std::string endpoint;
    for (const auto& [id, address] : start.endpoints) {
      if (id == down) endpoint = address;
    }
    zmq::socket_t socket(context_, zmq::socket_type::dealer);
    socket.set(zmq::sockopt::routing_id, id_);
    socket.set(zmq::sockopt::sndhwm, 0);  // never block a reaction on a slow downstream
    socket.set(zmq::sockopt::linger, 2000);
    if (spec_.keys_dir) {
      transport::make_curve_client(
          socket, transport::read_key_pair(*spec_.keys_dir, id_),
          transport::read_key_pair(*spec_.keys_dir, down, true).public_key);
    }
    const std::string to = transport::nearest_endpoint(endpoint);
    transport::set_ipv6_for(socket, to);
    socket.connect(to);
    downstreams_[down].socket = std::move(socket);
  }
  validator_.set_completed_tag(start.tag.predecessor());
}

bool FederateDataPlane::receive(
    const std::function<void(transport::ReceivedMessage& message)>& deliver) {
  // The connection's metadata only where something reads it: the guard (no CURVE) its
  // descriptor and transport, the key check (CURVE) its User-Id.
  const transport::ReceiveNeeds needs{guard_ != nullptr, !key_owner_.empty()};
  // At most a batch per call: what is left wakes the next poll, or comes with the grant that
  // needs it.
  for (int i = 0; i < kMaxReceivedPerCall; ++i) {
    transport::ReceiveResult result = transport::receive_wire_message(
        data_, validator_, drops_, zmq::recv_flags::dontwait, needs);
    // Taken once the message is here, so that it never seems to arrive before it was sent.
    trace::TraceRecorder* const tracer = trace::active();
    const std::int64_t taken_at = tracer != nullptr ? trace::TraceRecorder::now_ns() : 0;
    if (!result.received) {
      if (guard_) (void)guard_->check(drops_);
      count_failed_handshakes();
      return false;
    }
    // The guard watches TCP connections only; a twin's message would only make it look for
    // a connection it will never watch (two system calls per message).
    if (guard_ && result.over_tcp) {
      guard_->note_read(result.source_fd, result.message.peer, result.wire_bytes);
    }
    if (!key_owner_.empty() && !sent_with_own_key(result.message)) {
      // An upstream's key used under another upstream's routing id (WIRE.md §5): not that
      // upstream's message, so no grant counts it.
      if (result.error == transport::DropReason::kNone) {
        drops_.record(result.message.peer, transport::DropReason::kUnknownPeer);
      }
      continue;
    }
    // Bytes that name no sender on the connection of an upstream's routing id are a message of
    // that upstream this federate cannot read, which the grants may count (PROTOCOL.md §3.4):
    // with keys, that connection is authenticated by the upstream's key (checked above); without,
    // the socket hands a routing id's messages over from one connection only, the first to claim
    // it, as it does for the decoded headers from_own_upstream() trusts.
    if (names_no_sender(result.error) && is_upstream(*me_, result.message.peer)) {
      fail_on_unreadable_message(result.message.peer, result.error);
    }
    const bool notice = result.message.header.kind == transport::MessageKind::kCompleted;
    // A value or ABSENT whose header could be read, from an upstream on its own connection, and
    // refused anyway (its version, frames, sizes, port or tag): the upstream reported it in
    // transit and the grants count it (PROTOCOL.md §3.4). Bytes that never decode name no
    // sender and are only counted.
    if (!notice && result.error != transport::DropReason::kNone &&
        result.error != transport::DropReason::kUnknownPeer && from_own_upstream(result.message)) {
      fail_on_lost_message(result.message.header, result.error);
    }
    if (result.error != transport::DropReason::kNone) continue;
    const transport::WireHeader& header = result.message.header;
    if (notice) {
      note_completed(header.from, header.tag);
      continue;
    }
    // A value's `done` is the notice that would have followed it (WIRE.md §2): taken before the
    // value is delivered, which may move the header's strings away.
    if (header.done) note_completed(header.from, *header.done);
    // Values and ABSENTs alike count towards the grants' message counts.
    Upstream& upstream = upstreams_[header.from];
    // One message per port and tag, in tag order on each port (WIRE.md §3): a second at a tag
    // already sent on that port, or one before it, cannot be matched with the counts the grants
    // carry (they count it at its tag, which this federate may have taken as complete, or count
    // it twice): the run would wait for ever, so the federate stops naming it.
    const auto [latest, first] = upstream.latest.try_emplace(header.port, header.tag);
    if (!first) {
      if (header.tag <= latest->second) {
        drops_.record(header.from, transport::DropReason::kTagInPast);
        fail_on_lost_message(header, transport::DropReason::kTagInPast);
      }
      latest->second = header.tag;
    }
    // In tag order: links whose connections carry different delays (a zero-delay link with an
    // `after` on one of its connections) interleave their ports' tags.
    upstream.received.insert(
        std::upper_bound(upstream.received.begin(), upstream.received.end(), header.tag),
        header.tag);
    std::size_t bytes = 0;  // as received: the header's sizes, checked against the frames
    for (const std::uint64_t size : header.sizes) bytes += static_cast<std::size_t>(size);
    if (header.kind == transport::MessageKind::kPortValue &&
        upstream.counters.messages != nullptr) {
      upstream.counters.messages->Increment();
      upstream.counters.bytes->Increment(static_cast<double>(bytes));
    }
    const WireTag tag = header.tag;
    const std::uint32_t port = header.port;
    std::string from;  // deliver() may move the message
    if (tracer != nullptr) from = header.from;
    deliver(result.message);
    if (tracer != nullptr) {
      tracer->record({trace::Kind::kReceive, taken_at, trace::TraceRecorder::now_ns() - taken_at,
                      tag, trace_names_.id(*tracer, id_), trace_names_.id(*tracer, from), port,
                      bytes});
    }
  }
  return true;
}

void FederateDataPlane::note_completed(const std::string& upstream, const WireTag& tag) {
  // The upstream's progress (WIRE.md §2): it comes after everything the upstream sent before it,
  // on the same connection. Not a data message: no grant counts it.
  std::optional<WireTag>& notified = upstreams_[upstream].notified;
  notified = std::max(notified.value_or(WireTag{}), tag);
  if (trace::TraceRecorder* tracer = trace::active()) {
    tracer->instant(trace::Kind::kControlReceive, tag, trace_names_.id(*tracer, "COMPLETED"),
                    trace_names_.id(*tracer, upstream));
  }
}

bool FederateDataPlane::from_own_upstream(const transport::ReceivedMessage& message) const {
  const std::string& from = message.header.from;
  return !from.empty() && from == message.peer && is_upstream(*me_, from);
}

void FederateDataPlane::fail_on_unreadable_message(const std::string& upstream,
                                                   transport::DropReason reason) const {
  throw DataLossError("federate '" + id_ + "' could not read a data message from its upstream '" +
                      upstream + "' (" + transport::drop_reason_name(reason) +
                      (key_owner_.empty()
                           ? "; it came on the connection of that upstream's routing id"
                           : "; the connection is authenticated by that upstream's key") +
                      "): its grants may count it, so the federate cannot go on");
}

bool FederateDataPlane::sent_with_own_key(const transport::ReceivedMessage& message) const {
  const auto owner = key_owner_.find(message.user_id);
  return owner != key_owner_.end() && owner->second == message.peer;
}

void FederateDataPlane::fail_on_lost_message(const transport::WireHeader& header,
                                             transport::DropReason reason) const {
  // It came from an upstream on its own connection (WIRE.md §3 step 7 passed), so the upstream
  // reported it in transit and the coordinator counts it in the grants of this federate: they
  // can never be met. Waiting would hang the run; it fails instead, naming the message.
  throw DataLossError(
      "federate '" + id_ + "' dropped a data message from '" + header.from + "' on port " +
      std::to_string(header.port) + " at tag (" + std::to_string(header.tag.time_ns()) + ", " +
      std::to_string(header.tag.microstep()) + "): " + transport::drop_reason_name(reason) +
      "; its grants count it, so the federate cannot go on");
}

bool FederateDataPlane::counts_met(const std::map<std::string, std::uint64_t>& counts,
                                   const WireTag& through) const {
  for (const auto& [upstream, expected] : counts) {
    const auto up = upstreams_.find(upstream);
    if (up == upstreams_.end()) {
      if (expected > 0) return false;  // data still in flight
      continue;
    }
    const std::deque<WireTag>& tags = up->second.received;
    const auto arrived = static_cast<std::uint64_t>(
        std::upper_bound(tags.begin(), tags.end(), through) - tags.begin());
    if (up->second.completed + arrived < expected) return false;  // data still in flight
  }
  return true;
}

bool FederateDataPlane::asked_by_input(const WireTag& tag) const {
  return std::any_of(upstreams_.begin(), upstreams_.end(), [&](const auto& entry) {
    return std::binary_search(entry.second.received.begin(), entry.second.received.end(), tag);
  });
}

WireTag FederateDataPlane::arrival_tag(const std::string& to, const WireTag& sent_at) const {
  const auto down = downstreams_.find(to);
  return down == downstreams_.end() ? sent_at : transport::delayed(sent_at, down->second.delay);
}

FederateDataPlane::Downstream* FederateDataPlane::connected(const std::string& to) {
  const auto down = downstreams_.find(to);
  return down == downstreams_.end() || !down->second.socket ? nullptr : &down->second;
}

void FederateDataPlane::report_in_transit(FederateClient& client, const std::string& to,
                                          const WireTag& arrival) {
  // Until this report reaches the coordinator, its view of this federate (LTC and NET at most the
  // tag that sends the message) keeps every grant that could cover the message from being given.
  if (in_transit_.size() == kMaxInTransitPerLtc) flush_completed(client, std::nullopt);
  in_transit_.emplace_back(to, arrival);
}

bool FederateDataPlane::send_value(const std::string& to, std::uint32_t port,
                                   const WireTag& arrival, const transport::Payload& payload,
                                   std::optional<WireTag> done) {
  Downstream* down = connected(to);
  if (down == nullptr) return false;
  if (const std::size_t cap = validator_.policy().max_message_bytes; payload.size > cap) {
    // The receiver would drop it (message_too_large) and fail the run from its side; say it here,
    // where the value was made, and to the coordinator, which ends the run naming this federate.
    throw MessageCapError(id_, to, port, payload.size, cap);
  }
  trace::Span span(trace::Kind::kSend, arrival);
  if (span.on()) trace_message(span.event(), to, port, payload.size);
  transport::WireHeader& header = header_to(*down, payload.size);
  header.tag = arrival;
  header.port = port;
  // A downstream that reads only header 2 gets the notice as a message of its own, after it.
  const bool folded = done && header.version >= transport::kFirstDoneHeaderVersion;
  if (folded) {
    header.done = done;
    trace_notice(to, *done);  // before it leaves, as for a notice of its own: it may arrive first
  }
  transport::send_wire_message(down->socket, header, &payload, 1);
  if (value_log_ != nullptr) value_log_->record(arrival, to, port, payload.data, payload.size);
  if (folded) {
    down->unnotified = false;
  } else if (done) {
    send_completed_notice_now(to, *done);
  } else {
    down->unnotified = true;
  }
  if (down->sent.messages != nullptr) {
    down->sent.messages->Increment();
    down->sent.bytes->Increment(static_cast<double>(payload.size));
  }
  return true;
}

void FederateDataPlane::send_header_only(Downstream& down, std::uint32_t port,
                                         transport::MessageKind kind, const WireTag& tag) {
  transport::WireHeader& header = header_to(down);
  header.tag = tag;
  header.port = port;
  header.kind = kind;
  transport::send_wire_message(down.socket, header, nullptr, 0);
}

transport::WireHeader& FederateDataPlane::header_to(const Downstream& down,
                                                    std::size_t payload_bytes) {
  transport::WireHeader& header = outgoing_;
  header.tag = {};
  header.port = 0;
  header.kind = transport::MessageKind::kPortValue;
  header.done.reset();
  header.version = down.reads_header;
  // Payloads over the inline cap go as frames of their own, without a copy.
  if (header.version >= transport::kFirstInlineHeaderVersion &&
      payload_bytes > validator_.policy().header_limits.max_inline_bytes) {
    header.version = transport::kFirstDoneHeaderVersion;
  }
  header.from = id_;
  return header;
}

void FederateDataPlane::trace_message(trace::Event& event, const std::string& to,
                                      std::uint32_t port, std::size_t bytes) {
  trace::TraceRecorder& tracer = *trace::active();
  event.name = trace_names_.id(tracer, id_);
  event.peer = trace_names_.id(tracer, to);
  event.port = port;
  event.bytes = bytes;
}

bool FederateDataPlane::send_absent(const std::string& to, std::uint32_t port,
                                    const WireTag& arrival) {
  Downstream* down = connected(to);
  if (down == nullptr) return false;
  trace::Span span(trace::Kind::kSend, arrival);
  if (span.on()) trace_message(span.event(), to, port, 0);
  send_header_only(*down, port, transport::MessageKind::kPortAbsent, arrival);
  if (value_log_ != nullptr) value_log_->record(arrival, to, port, nullptr, 0);
  down->unnotified = true;
  return true;
}

void FederateDataPlane::send_completed_notices() {
  for (auto& [to, down] : downstreams_) {
    if (!down.notice_due) continue;
    const WireTag tag = *down.notice_due;
    down.notice_due.reset();
    send_notice(to, down, tag);
  }
}

void FederateDataPlane::send_completed_notice_now(const std::string& to, const WireTag& tag) {
  const auto down = downstreams_.find(to);
  if (down == downstreams_.end()) return;
  down->second.unnotified = false;
  send_notice(to, down->second, tag);
}

void FederateDataPlane::send_notice(const std::string& to, Downstream& down, const WireTag& tag) {
  trace_notice(to, tag);
  if (down.socket) send_header_only(down, 0, transport::MessageKind::kCompleted, tag);
}

void FederateDataPlane::trace_notice(const std::string& to, const WireTag& tag) {
  if (trace::TraceRecorder* tracer = trace::active()) {
    tracer->instant(trace::Kind::kControlSend, tag, trace_names_.id(*tracer, "COMPLETED"),
                    trace_names_.id(*tracer, to));
  }
}

WireTag FederateDataPlane::upstream_bound() const {
  if (me_->upstreams.empty()) return kNever;
  WireTag bound = kForever;
  for (const UpstreamLink& link : me_->upstreams) {
    const auto up = upstreams_.find(link.federate);
    if (up == upstreams_.end() || !up->second.notified) return kNever;
    // It sends only at tags after the one it completed; its messages arrive that much later.
    const WireTag earliest = transport::delayed(up->second.notified->next_microstep(), link.delay);
    bound = std::min(bound, earliest.predecessor());
  }
  return bound;
}

void FederateDataPlane::complete(const WireTag& tag) {
  completed_tag_ = tag;
  for (auto& [to, down] : downstreams_) {
    if (!down.unnotified) continue;
    down.notice_due = tag;
    down.unnotified = false;
  }
  ++unreported_;
  validator_.set_completed_tag(tag);
  for (auto& [id, up] : upstreams_) {
    while (!up.received.empty() && up.received.front() <= tag) {
      up.received.pop_front();
      ++up.completed;
    }
  }
}

void FederateDataPlane::flush_completed(FederateClient& client, std::optional<WireTag> next,
                                        Reporting reporting) {
  if (unreported_ == 0 && in_transit_.empty()) return;
  // A completed tag without the next one leaves the coordinator no next tag (PROTOCOL.md §3.2).
  if (next) {
    announced_ = *next;
  } else if (unreported_ != 0) {
    announced_ = kNever;
  }
  announced_reporting_ = next ? reporting : Reporting::kEveryWait;
  client.send_completed(completed_tag_, std::move(in_transit_), next, announced_reporting_);
  in_transit_.clear();
  unreported_ = 0;
}

void FederateDataPlane::announce(FederateClient& client, const WireTag& next, Reporting reporting) {
  // The data messages sent so far are reported first, in the same frame: a NET above a data
  // message the coordinator does not know of would let it grant the receiver past it.
  if (unreported_ != 0 || !in_transit_.empty()) {
    flush_completed(client, next, reporting);
    return;
  }
  if (next == announced_ && reporting == announced_reporting_) return;
  // A tag that only a received message asks for, below the next tag the coordinator has: the
  // sender's in-transit report already lowers this federate's bound to it and gets it its grant
  // (PROTOCOL.md §3.3). Members of a zero-delay cycle still send it: their PTAG rule reads it.
  if (next < announced_ && asked_by_input(next) && !on_zero_delay_cycle_ &&
      reporting == announced_reporting_) {
    return;
  }
  client.send_next_event(next, reporting);
  announced_ = next;
  announced_reporting_ = reporting;
}

}  // namespace tagflow::coordinator
