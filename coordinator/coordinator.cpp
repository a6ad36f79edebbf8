#include "coordinator/coordinator.hpp"

#include <algorithm>
#include <array>
#include <csignal>
#include <cstring>
#include <set>
#include <sstream>

#include <spdlog/spdlog.h>

#include "common/log_text.hpp"
#include "monitoring/process_metrics.hpp"
#include "transport/connection_guard.hpp"
#include "transport/curve_keys.hpp"
#include "transport/drop_reason.hpp"
#include "transport/local_links.hpp"
#include "transport/socket_wait.hpp"

namespace tagflow::coordinator {
namespace {

/// The largest control frame the coordinator accepts (PROTOCOL.md §1).
constexpr std::size_t kMaxControlBytes = std::size_t{64} << 10;

constexpr const char* kHeartbeatSuffix = "#hb";
constexpr const char* kLauncherSuffix = "#up";  // a launcher speaking for a federate (§8)
constexpr std::size_t kSuffixLength = 3;
constexpr std::size_t kMaxBatch = 256;  // messages handled before grants are recomputed

bool has_suffix(const std::string& identity, const char* suffix) {
  return identity.size() > kSuffixLength &&
         identity.compare(identity.size() - kSuffixLength, kSuffixLength, suffix) == 0;
}

bool is_heartbeat_identity(const std::string& identity) {
  return has_suffix(identity, kHeartbeatSuffix);
}

bool is_launcher_identity(const std::string& identity) {
  return has_suffix(identity, kLauncherSuffix);
}

std::string describe_links(const std::vector<UpstreamLink>& ups,
                           const std::vector<std::string>& downs) {
  std::ostringstream out;
  out << "upstreams [";
  for (const UpstreamLink& u : ups) {
    out << " " << u.federate << "(" << (u.delay ? std::to_string(*u.delay) + "ns" : "no delay")
        << ")";
  }
  out << " ], downstreams [";
  for (const std::string& d : downs) out << " " << d;
  out << " ]";
  return out.str();
}

bool same_links(std::vector<UpstreamLink> a, std::vector<UpstreamLink> b) {
  const auto by_id = [](const UpstreamLink& x, const UpstreamLink& y) {
    return x.federate < y.federate;
  };
  std::sort(a.begin(), a.end(), by_id);
  std::sort(b.begin(), b.end(), by_id);
  return a == b;
}

/// How the stop message names the signal that stopped the coordinator.
std::string signal_name(int signal) {
  switch (signal) {
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "signal " + std::to_string(signal);
  }
}

}  // namespace

Coordinator::Coordinator(FederationSpec spec)
    : spec_(std::move(spec)),
      context_(1),
      router_(context_, zmq::socket_type::router),
      grants_(spec_),
      members_(spec_.federates.size()),
      stop_waiting_(spec_.federates.size(), false) {
  resuming_ = spec_.start_tag != WireTag(0, 0);
  router_.set(zmq::sockopt::linger, 1000);
  router_.set(zmq::sockopt::maxmsgsize, static_cast<std::int64_t>(kMaxControlBytes));
  router_.set(zmq::sockopt::router_mandatory, false);
  // Without CURVE anyone may connect: a connection guard bounds what ZeroMQ holds for them
  // (transport/WIRE.md §3.1), told of each connection by this socket's one monitor.
  // ACCEPTED also says a descriptor's earlier connection is over (read_closed_connections()).
  // HANDSHAKE_FAILED_PROTOCOL: a handshake that failed before the key check (no CURVE, another
  // server key), counted as a refused one.
  closed_events_ = transport::monitor_events(
      context_, router_,
      ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL,
      "coordinator-closed");
  if (!spec_.keys_dir) {
    transport::ConnectionLimits limits = transport::limits_for_messages(kMaxControlBytes, 0);
    limits.socket_name = "the coordinator";
    guard_ = std::make_unique<transport::ConnectionGuard>(limits);
  }
  if (spec_.keys_dir) {
    std::set<std::string> allowed;
    for (const FederateSpec& f : spec_.federates) {
      const std::string key = transport::read_key_pair(*spec_.keys_dir, f.id, true).public_key;
      allowed.insert(key);
      key_owner_[key] = f.id;
    }
    zap_ = std::make_unique<transport::ZapAuthenticator>(context_, std::move(allowed),
                                                         "the coordinator");
    transport::make_curve_server(router_, transport::read_key_pair(*spec_.keys_dir, "coordinator"));
  }
}

Coordinator::~Coordinator() {
  guard_.reset();
  (void)zmq_socket_monitor(router_.handle(), nullptr, 0);
  closed_events_.close();
  twin_.remove();  // while router_ still holds the TCP port (local_links.hpp)
  router_.close();
  zap_.reset();
}

void Coordinator::set_metrics(monitoring::ProcessMetrics* metrics) {
  if (metrics == nullptr) return;
  using monitoring::Metric;
  metrics_.tag_advances = &metrics->counter(Metric::coordinator_tag_advances);
  metrics_.report_requests = &metrics->counter(Metric::coordinator_report_requests);
  metrics_.grant_latency = &metrics->histogram(Metric::coordinator_grant_latency);
  metrics_.federates = &metrics->gauge(Metric::coordinator_federates);
  metrics_.failures = &metrics->counter(Metric::coordinator_federate_failures);
  for (std::size_t i = 0; i < members_.size(); ++i) {
    const monitoring::Labels peer{{"peer", grants_.id_of(i)}};
    members_[i].heartbeats = &metrics->counter(Metric::coordinator_heartbeats, peer);
    members_[i].silences = &metrics->counter(Metric::coordinator_silences, peer);
    members_[i].silence_seconds = &metrics->counter(Metric::coordinator_silence_seconds, peer);
    members_[i].sent = &metrics->counter(Metric::transport_messages_sent, peer);
    members_[i].sent_bytes = &metrics->counter(Metric::transport_sent_bytes, peer);
    members_[i].received = &metrics->counter(Metric::transport_messages_received, peer);
    members_[i].received_bytes = &metrics->counter(Metric::transport_received_bytes, peer);
  }
  // Refused CURVE handshakes (a key not in the allow-list): the sender is nobody the spec names.
  if (zap_) {
    prometheus::Counter* refused = &metrics->counter(
        Metric::transport_invalid_messages,
        {{"peer", "unknown"},
         {"reason", transport::drop_reason_name(transport::DropReason::kRefusedHandshake)}});
    zap_->set_refused_observer([refused] { refused->Increment(); });
  }
  // Dropped control messages by sender and reason. A sender that is no federate of the spec is
  // labelled "unknown", so a stranger cannot grow the number of series; a federate of the spec
  // by its id, from the identity it sent under (not the drop table's name, which past 256 names
  // is "(other)" for everyone).
  drops_.set_identity_observer([this, metrics](const std::string& identity,
                                               const std::string& /*peer*/,
                                               transport::DropReason reason) {
    const std::size_t index = member_of(identity);
    const std::string peer = index < members_.size() ? grants_.id_of(index) : "unknown";
    metrics
        ->counter(Metric::transport_invalid_messages,
                  {{"peer", peer}, {"reason", transport::drop_reason_name(reason)}})
        .Increment();
  });
}

std::size_t Coordinator::member_of(const std::string& identity) const {
  const bool suffixed = is_heartbeat_identity(identity) || is_launcher_identity(identity);
  return grants_.index_of(suffixed ? identity.substr(0, identity.size() - kSuffixLength)
                                   : identity);
}

void Coordinator::count_received(std::size_t index, std::size_t bytes) {
  if (index >= members_.size() || members_[index].received == nullptr) return;
  members_[index].received->Increment();
  members_[index].received_bytes->Increment(static_cast<double>(bytes));
}

std::uint64_t Coordinator::refused_handshakes() const { return zap_ ? zap_->refused_count() : 0; }

std::string Coordinator::bind(const std::string& endpoint) {
  // A host's address may be a name, which ZeroMQ connects to but does not bind.
  const std::string at = transport::bindable_endpoint(endpoint.empty() ? spec_.address : endpoint);
  transport::set_ipv6_for(router_, at);
  router_.bind(at);
  std::string bound = router_.get(zmq::sockopt::last_endpoint);
  // Federates and launchers on this machine connect to its Unix-socket twin (WIRE.md §1.1).
  twin_.adopt(transport::bind_local_twin(router_, bound));
  return bound;
}

void Coordinator::send(const std::string& identity, const ControlMessage& message) {
  const std::string frame = encode_control(message);
  if (trace::TraceRecorder* tracer = trace::active();
      tracer != nullptr && !is_heartbeat_identity(identity)) {
    // Recorded before it leaves, so that it never seems to arrive before it was sent.
    tracer->instant(trace::Kind::kControlSend, carried_tag(message),
                    trace_names_.id(*tracer, control_type_name(message.type)),
                    trace_names_.id(*tracer, identity), 0, frame.size());
  }
  router_.send(zmq::buffer(identity), zmq::send_flags::sndmore | zmq::send_flags::dontwait);
  router_.send(zmq::buffer(frame), zmq::send_flags::dontwait);
  const std::size_t index = member_of(identity);
  if (index < members_.size() && members_[index].sent != nullptr) {
    members_[index].sent->Increment();
    members_[index].sent_bytes->Increment(static_cast<double>(frame.size()));
  }
}

void Coordinator::broadcast(const ControlMessage& message) {
  for (const Member& m : members_) {
    if (m.joined && !m.resigned) send(m.identity, message);
  }
}

void Coordinator::refuse(const std::string& identity, const std::string& why,
                         const std::optional<std::string>& logged) {
  drops_.record(identity, transport::DropReason::kRefusedJoin);
  // Both texts come from the peer: escaped, and one line per peer (PeerLogBudget).
  if (log_budget_.allow(identity)) {
    spdlog::error(
        "coordinator: refused '{}': {} (further refusals of this peer are counted, not "
        "logged)",
        escape_for_log(identity), logged ? *logged : escape_for_log(why, 1024));
  }
  ControlMessage refusal;
  refusal.type = ControlType::kRefused;
  refusal.text = why;
  send(identity, refusal);
}

bool Coordinator::handle_join(const std::string& identity, const ControlMessage& join,
                              const std::string& address, int fd) {
  if (join.version < kOldestProtocolVersion || join.version > kProtocolVersion) {
    refuse(identity, "federate '" + join.federate + "' speaks protocol version " +
                         std::to_string(join.version) + "; this coordinator speaks version " +
                         std::to_string(kProtocolVersion) + " and accepts versions " +
                         std::to_string(kOldestProtocolVersion) + " to " +
                         std::to_string(kProtocolVersion));
    return false;
  }
  const std::size_t index = grants_.index_of(join.federate);
  if (index == grants_.size()) {
    std::string known;
    for (const FederateSpec& f : spec_.federates) known += " " + f.id;
    refuse(identity, "federate '" + join.federate +
                         "': unknown federate id (this federation has:" + known + ")");
    return false;
  }
  if (identity != join.federate) {
    refuse(identity, "federate '" + join.federate + "': must connect with routing id '" +
                         join.federate + "'");
    return false;
  }
  Member& member = members_[index];
  // Before START a federate whose first connection closed may come back on a new one: its JOIN
  // to a coordinator that went away may never have arrived anywhere else (§2.1). That connection
  // itself, not any of the member's: its heartbeats go on beside it.
  const bool rejoin = member.joined && !started_ && member.join_closed;
  if (member.joined && fd >= 0 && fd == member.join_fd) return true;  // repeated until START
  // After START, a JOIN on a new connection from a federate that has sent nothing since START:
  // START went to its first connection as that one closed, and was lost with it (the federate
  // JOINs until START comes). ZeroMQ delivers this JOIN only once the first connection is gone.
  // The others were told its data endpoint in START: it must be the same.
  const std::string endpoint =
      join.endpoints.empty() ? std::string() : join.endpoints.front().second;
  const bool missed_start = member.joined && started_ && !member.spoke_since_start && fd >= 0 &&
                            fd != member.join_fd && endpoint == member.endpoint;
  if (member.joined && !rejoin && !missed_start) {
    // A second claim on an id: one of the two may not be the real federate, so the refusal (sent
    // and logged) names where each came from.
    refuse(identity, "federate '" + join.federate + "' has already joined (first from " +
                         member.address + ", now again from " + address + ")");
    return false;
  }
  const FederateSpec& expected = spec_.federates[index];
  std::vector<std::string> downs = join.downstreams;
  std::vector<std::string> expected_downs = expected.downstreams;
  std::sort(downs.begin(), downs.end());
  std::sort(expected_downs.begin(), expected_downs.end());
  if (!same_links(join.upstreams, expected.upstreams) || downs != expected_downs) {
    refuse(identity, "federate '" + join.federate +
                         "': its neighbour structure disagrees with the federation: it declared " +
                         describe_links(join.upstreams, join.downstreams) + ", expected " +
                         describe_links(expected.upstreams, expected.downstreams));
    return false;
  }
  member.identity = identity;
  member.address = address;
  member.version = join.version;
  member.endpoint = endpoint;
  member.last_seen = Clock::now();
  member.join_fd = fd;
  member.join_closed = false;
  member.closed_at.reset();
  if (rejoin) {
    spdlog::info("coordinator: '{}' joined again from {} on a new connection", join.federate,
                 address);
    return true;
  }
  if (missed_start) {
    spdlog::info(
        "coordinator: '{}' joined again from {} on a new connection after START; "
        "START again",
        join.federate, address);
    send(identity, start_message(member));
    // The grants that followed START went the same way: the newest ones, in the order sent.
    for (const ControlMessage& grant : member.unheard_grants) send(identity, grant);
    return true;
  }
  member.joined = true;
  if (member.held_report) {
    spdlog::info(
        "coordinator: '{}' joined after a launcher reported its process dead: the report "
        "was about the process of an earlier run, and is dropped",
        join.federate);
    member.held_report.reset();
  }
  ++joined_count_;
  if (metrics_.federates != nullptr) metrics_.federates->Increment();
  spdlog::info("coordinator: '{}' joined from {} ({}/{})", join.federate, address, joined_count_,
               members_.size());
  if (joined_count_ == members_.size()) {
    for (const Member& m : members_) send(m.identity, start_message(m));
    started_ = true;
    spdlog::info("coordinator: all federates joined; start tag {}", spec_.start_tag.time_ns());
  }
  return true;
}

ControlMessage Coordinator::start_message(const Member& to) const {
  ControlMessage start = make_tag_message(ControlType::kStart, spec_.start_tag);
  for (std::size_t i = 0; i < members_.size(); ++i) {
    start.endpoints.emplace_back(grants_.id_of(i), members_[i].endpoint);
    // Which data header each federate reads (§2.5); a version-3 federate's START has no list.
    if (to.version >= kFirstDoneVersion) {
      start.versions.emplace_back(grants_.id_of(i), members_[i].version);
    }
  }
  // Its file's digest, for the federate to compare with its own (§2.3).
  if (to.version >= kFirstFileDigestVersion) start.file_digest = spec_.file_digest;
  return start;
}

void Coordinator::handle_stop(std::size_t federate, const ControlMessage& message) {
  if (stop_granted_) return;
  const bool first = !stop_proposal_.has_value();
  stop_proposal_ = first ? message.tag : std::max(*stop_proposal_, message.tag);
  earliest_proposal_ = first ? message.tag : std::min(*earliest_proposal_, message.tag);
  if (first) {
    ControlMessage ask = make_tag_message(ControlType::kStopRequest, message.tag);
    for (std::size_t i = 0; i < members_.size(); ++i) {
      if (i == federate || members_[i].resigned) continue;
      stop_waiting_[i] = true;
      send(members_[i].identity, ask);
    }
  }
  stop_waiting_[federate] = false;
  if (std::none_of(stop_waiting_.begin(), stop_waiting_.end(), [](bool w) { return w; })) {
    stop_granted_ = true;
    ControlMessage granted = make_tag_message(ControlType::kStopGranted, *stop_proposal_);
    granted.proposal = *earliest_proposal_;
    broadcast(granted);
  }
}

void Coordinator::send_floor() {
  constexpr auto kFloorInterval = std::chrono::milliseconds(500);
  const Clock::time_point now = Clock::now();
  if (stop_granted_ || now - floor_sent_at_ < kFloorInterval) return;
  // A federate proposes a stop (or answers a request) only at a tag it has not started, so every
  // proposal still to come is after its LTC: after the earliest LTC of them all (§5.1).
  WireTag floor = transport::kForever;
  for (std::size_t i = 0; i < members_.size(); ++i) {
    if (!members_[i].resigned) floor = std::min(floor, grants_.last_completed(i));
  }
  if (earliest_proposal_) floor = std::min(floor, *earliest_proposal_);
  if (floor == transport::kForever || floor <= floor_) return;
  floor_ = floor;
  floor_sent_at_ = now;
  const ControlMessage message = make_tag_message(ControlType::kFloor, floor);
  for (const Member& member : members_) {
    if (!member.resigned && member.version >= kFirstFloorVersion) send(member.identity, message);
  }
}

void Coordinator::handle(const std::string& identity, const zmq::message_t& frame, int fd) {
  ++stats_.messages_handled;
  const ControlDecodeResult decoded = decode_control_explained(frame.data(), frame.size());
  if (!decoded.message) {
    handle_malformed(identity, decoded);
    return;
  }
  const ControlMessage& message = *decoded.message;
  if (!key_owner_.empty() && !key_matches(identity, frame)) {
    // ZAP admitted the key, but it belongs to another federate (§7): refused, whatever it sent.
    refuse(identity, "federate '" + escape_for_log(identity) +
                         "': the key this connection authenticated with belongs to federate '" +
                         key_owner_of(frame) + "', which may join only as itself");
    return;
  }
  count_received(member_of(identity), frame.size());
  if (fd >= 0 && member_of(identity) < members_.size() && !on_known_connection(identity, fd)) {
    // The monitor reports a connection's close before its descriptor is freed, so an earlier
    // connection's close on this descriptor is waiting by now: read first, it is not this one's.
    read_closed_connections(Clock::now());
  }
  if (trace::TraceRecorder* tracer = trace::active();
      tracer != nullptr && !is_heartbeat_identity(identity)) {
    tracer->instant(trace::Kind::kControlReceive, carried_tag(message),
                    trace_names_.id(*tracer, control_type_name(message.type)),
                    trace_names_.id(*tracer, identity), 0, frame.size());
  }
  if (message.type == ControlType::kJoin && !is_heartbeat_identity(identity) &&
      !is_launcher_identity(identity)) {
    // Before note_connection(): whether the member's first connection closed decides a JOIN
    // that comes again on a new one (§2.1).
    if (handle_join(identity, message,
                    peer_address_for_log(zmq_msg_gets(frame.handle(), "Peer-Address")), fd)) {
      note_connection(identity, fd);
    }
    return;
  }
  note_connection(identity, fd);
  if (is_heartbeat_identity(identity)) {
    handle_heartbeat(identity, message);
  } else if (is_launcher_identity(identity)) {
    handle_launcher(identity, member_of(identity), message);
  } else {
    handle_member(identity, message);
  }
}

void Coordinator::handle_heartbeat(const std::string& identity, const ControlMessage& message) {
  const std::string id = identity.substr(0, identity.size() - 3);
  const std::size_t index = grants_.index_of(id);
  if (index == grants_.size() || message.type != ControlType::kHeartbeat) return;
  if (members_[index].joined) heard_from(index, Clock::now());
  if (members_[index].heartbeats != nullptr) members_[index].heartbeats->Increment();
  send(identity, message);
}

void Coordinator::handle_member(const std::string& identity, const ControlMessage& message) {
  const std::size_t index = grants_.index_of(identity);
  if (index == grants_.size() || !members_[index].joined || members_[index].resigned) {
    drops_.record(identity, transport::DropReason::kUnknownPeer);
    return;
  }
  heard_from(index, Clock::now());
  if (started_ && !members_[index].spoke_since_start) {
    members_[index].spoke_since_start = true;
    members_[index].unheard_grants.clear();
  }
  ++members_[index].messages;
  switch (message.type) {
    case ControlType::kNextEvent:
      grants_.on_next_event(index, message.tag);
      time_grant(index, message.tag);
      note_reporting(index, message.reporting);
      break;
    case ControlType::kCompleted:
      note_reporting(index, message.reporting);
      for (const auto& [destination, tag] : message.in_transit) {
        note_in_transit(identity, index, destination, tag);
      }
      grants_.on_completed(index, message.tag, message.next);
      if (message.next) time_grant(index, *message.next);
      break;
    case ControlType::kInTransit:
      note_in_transit(identity, index, message.federate, message.tag);
      break;
    case ControlType::kStopRequest:
    case ControlType::kStopReply:
      handle_stop(index, message);
      break;
    case ControlType::kResign:
      handle_resign(identity, index);
      break;
    case ControlType::kHeartbeat:
      break;
    case ControlType::kCheckpointWritten:
      handle_checkpoint_written(identity, index, message);
      break;
    case ControlType::kResumed:
      handle_resumed(identity, index, message.tag);
      break;
    case ControlType::kFailed:
      // The federate cannot go on (e.g. a data message its grant counts was dropped, §3.4): the
      // run ends now, naming it, instead of waiting for its heartbeats to stop.
      note_failure(index,
                   "federate '" + identity + "' failed: " + escape_for_log(message.text, 1024));
      break;
    default:
      drops_.record(identity, transport::DropReason::kUnknownKind);
      break;
  }
}

void Coordinator::note_in_transit(const std::string& identity, std::size_t federate,
                                  const std::string& destination, const WireTag& tag) {
  const std::size_t to = grants_.index_of(destination);
  if (to == grants_.size() || !grants_.on_in_transit(federate, to, tag)) {
    drops_.record(identity, transport::DropReason::kUnknownPeer);
  }
}

void Coordinator::handle_resign(const std::string& identity, std::size_t federate) {
  grants_.on_resigned(federate);
  members_[federate].resigned = true;
  ++resigned_count_;
  spdlog::info("coordinator: '{}' resigned", identity);
  if (stop_proposal_ && !stop_granted_ && stop_waiting_[federate]) {
    handle_stop(federate, make_tag_message(ControlType::kStopReply, *stop_proposal_));
  }
  // The last message it is sent: it may close its control connection once it reads this, with
  // nothing left unread (PROTOCOL.md §5 rule 6).
  if (members_[federate].version >= kFirstFinishedVersion) {
    ControlMessage finished;
    finished.type = ControlType::kFinished;
    send(identity, finished);
  }
}

void Coordinator::handle_resumed(const std::string& identity, std::size_t federate,
                                 const WireTag& tag) {
  Member& member = members_[federate];
  if (!resuming_ || member.resumed) {
    drops_.record(identity, transport::DropReason::kUnknownKind);
    return;
  }
  if (tag != spec_.start_tag) {
    note_failure(federate, "federate '" + identity + "' failed: it resumed at logical time " +
                               std::to_string(tag.time_ns()) + " ns, but the run resumes at " +
                               std::to_string(spec_.start_tag.time_ns()) + " ns");
    return;
  }
  member.resumed = true;
  ++resumed_count_;
  if (resumed_count_ == members_.size()) {
    spdlog::info("coordinator: every federate resumed from the checkpoint at {} ns",
                 spec_.start_tag.time_ns());
  }
}

void Coordinator::handle_checkpoint_written(const std::string& identity, std::size_t federate,
                                            const ControlMessage& message) {
  if (!checkpoint_sink_) {
    drops_.record(identity, transport::DropReason::kUnknownKind);
    return;
  }
  try {
    checkpoint_sink_(identity, message);
  } catch (const std::exception& e) {
    note_failure(federate, std::string("checkpoint failed: ") + e.what());
  }
}

void Coordinator::note_failure(std::size_t federate, const std::string& why) {
  if (peer_failure_) return;
  peer_failure_ = why;
  peer_failure_index_ = federate;
}

void Coordinator::handle_launcher(const std::string& identity, std::size_t index,
                                  const ControlMessage& message) {
  if (index >= members_.size()) {
    drops_.record(identity, transport::DropReason::kUnknownPeer);
    return;
  }
  const std::string& id = grants_.id_of(index);
  if (message.type == ControlType::kFailed && message.federate == id) {
    // The launcher saw the federate's process die: no need to wait for its heartbeats to stop.
    Member& member = members_[index];
    const std::string why = "federate '" + id + "' failed: " + escape_for_log(message.text, 1024);
    if (member.joined) {
      if (!member.resigned) note_failure(index, why);
    } else if (!member.held_report) {
      // Not joined yet: the report may be the last run's, sent as that run failed and delivered
      // to this coordinator, which took over the port (a restart). Its federate joining shows it.
      member.held_report.emplace(why, Clock::now());
    }
    return;
  }
  if (message.type == ControlType::kClockRequest) {
    // A launcher of another host aligning its trace's clock with this one (§8.4).
    ControlMessage clock;
    clock.type = ControlType::kClock;
    clock.clock_ns = trace::TraceRecorder::now_ns();
    send(identity, clock);
    return;
  }
  if (message.type == ControlType::kTracePart) {
    const TraceReceipt receipt = trace_sink_
                                     ? trace_sink_(id, message)
                                     : TraceReceipt{false, "this coordinator stores no traces", 0};
    if (!receipt.stored) {
      refuse(identity, "trace file '" + message.process + "': " + receipt.text);
      return;
    }
    ControlMessage stored;
    stored.type = ControlType::kTraceStored;
    stored.process = message.process;
    stored.offset = receipt.stored_bytes;
    send(identity, stored);
    return;
  }
  if (message.type != ControlType::kResult) {
    drops_.record(identity, transport::DropReason::kUnknownKind);
    return;
  }
  const ResultReceipt receipt = result_sink_
                                    ? result_sink_(id, message.process, message.text)
                                    : ResultReceipt{false, "this coordinator stores no results"};
  if (!receipt.stored) {
    refuse(identity, "result of process '" + message.process + "': " + receipt.text);
    return;
  }
  spdlog::info("coordinator: stored the result of process '{}' (from '{}')",
               escape_for_log(message.process), id);
  ControlMessage stored;
  stored.type = ControlType::kResultStored;
  stored.process = message.process;
  stored.text = receipt.text;
  send(identity, stored);
}

void Coordinator::handle_malformed(const std::string& identity,
                                   const ControlDecodeResult& decoded) {
  const std::size_t index = member_of(identity);
  const bool member = index < members_.size() && members_[index].joined;
  // A peer that has not joined (or a stranger) is told why, so a client with a malformed JOIN
  // fails at once instead of waiting out its join timeout. A joined federate's control and
  // heartbeat connections get no reply (a REFUSED there would end it for a frame it may not
  // have sent): the frame is dropped, counted and logged once.
  if (!member && !is_heartbeat_identity(identity)) {
    const std::string prefix =
        "federate '" + escape_for_log(identity) + "': malformed control message: ";
    refuse(identity, prefix + decoded.error, prefix + escape_for_log(decoded.error, 1024));
    return;
  }
  drops_.record(identity, transport::DropReason::kMalformedControl);
  if (log_budget_.allow(identity)) {
    spdlog::warn(
        "coordinator: dropped a malformed control message from '{}': {} (further ones "
        "from this peer are counted, not logged)",
        escape_for_log(identity), escape_for_log(decoded.error, 1024));
  }
}

std::string Coordinator::key_owner_of(const zmq::message_t& frame) const {
  // The ZAP handler sets the connection's User-Id to the client's public key (Z85).
  const char* key = zmq_msg_gets(frame.handle(), "User-Id");
  if (key == nullptr) return "";
  const auto owner = key_owner_.find(key);
  return owner == key_owner_.end() ? "" : owner->second;
}

bool Coordinator::key_matches(const std::string& identity, const zmq::message_t& frame) const {
  const std::size_t index = member_of(identity);
  return index < members_.size() && key_owner_of(frame) == grants_.id_of(index);
}

void Coordinator::time_grant(std::size_t index, const WireTag& next) {
  if (metrics_.grant_latency == nullptr) return;
  if (next <= grants_.last_grant(index)) {
    metrics_.grant_latency->Observe(0.0);  // granted already (ahead of it, §4.4)
  } else if (!members_[index].waiting_since) {
    members_[index].waiting_since = Clock::now();
  }
}

void Coordinator::note_reporting(std::size_t index, Reporting said) {
  Member& member = members_[index];
  member.reporting = said;
  member.asked = false;
  grants_.set_deferring(index, member.reporting == Reporting::kMayDefer);
}

void Coordinator::keep_unheard(Member& member, const ControlMessage& grant) {
  // A TAG covers every grant at or below its tag (its counts are totals); a PTAG covers the
  // PTAGs before it. So at most a TAG and a later PTAG are kept.
  std::vector<ControlMessage>& kept = member.unheard_grants;
  kept.erase(std::remove_if(kept.begin(), kept.end(),
                            [&grant](const ControlMessage& earlier) {
                              return grant.type == ControlType::kGrant
                                         ? earlier.tag <= grant.tag
                                         : earlier.type == ControlType::kProvisional;
                            }),
             kept.end());
  kept.push_back(grant);
}

void Coordinator::send_grants() {
  for (GrantDecision& grant : grants_.take_new_grants()) {
    ControlMessage message = make_tag_message(
        grant.provisional ? ControlType::kProvisional : ControlType::kGrant, grant.tag);
    message.counts = std::move(grant.counts);
    Member& member = members_[grant.federate];
    send(member.identity, message);
    if (!member.spoke_since_start) keep_unheard(member, message);
    ++stats_.grants_sent;
    ++member.grants;
    if (metrics_.tag_advances != nullptr) metrics_.tag_advances->Increment();
    if (member.waiting_since) {
      const std::chrono::duration<double> waited = Clock::now() - *member.waiting_since;
      metrics_.grant_latency->Observe(waited.count());
      member.waiting_since.reset();
    }
  }
}

void Coordinator::request_reports() {
  // Only a federate that expects no notices needs this coordinator's grant; the others wait for
  // their upstreams' notices, and their NET here may be long past.
  bool needed = false;
  for (std::size_t i = 0; i < members_.size() && !needed; ++i) {
    const Member& m = members_[i];
    needed = m.joined && !m.resigned && m.reporting == Reporting::kEveryWait &&
             grants_.waits_for_grant(i);
  }
  if (!needed) return;
  ControlMessage request;
  request.type = ControlType::kReportRequest;
  for (Member& m : members_) {
    if (!m.joined || m.resigned || m.reporting != Reporting::kMayDefer || m.asked) continue;
    send(m.identity, request);
    m.asked = true;
    ++stats_.report_requests;
    if (metrics_.report_requests != nullptr) metrics_.report_requests->Increment();
  }
}

std::size_t Coordinator::find_silent(Clock::time_point now) const {
  for (std::size_t i = 0; i < members_.size(); ++i) {
    const Member& m = members_[i];
    if (m.joined && !m.resigned && now - m.last_seen > spec_.heartbeat_timeout) return i;
  }
  return members_.size();
}

bool Coordinator::on_known_connection(const std::string& identity, int fd) const {
  const auto it = connection_identity_.find(fd);
  return it != connection_identity_.end() && it->second == identity;
}

void Coordinator::note_connection(const std::string& identity, int fd) {
  // A launcher's connection may close after one exchange (§8): only the federate's own count.
  if (is_launcher_identity(identity)) return;
  const std::size_t index = member_of(identity);
  if (index >= members_.size()) return;
  members_[index].closed_at.reset();  // heard from: on this or a new connection
  // Most messages come on a known connection; handle() read the monitor before any other.
  if (fd < 0 || on_known_connection(identity, fd)) return;
  if (closed_descriptors_.count(fd) != 0) {
    // Its connection closed before this message was read: heard from, but gone, from now.
    members_[index].closed_at = Clock::now();
    connection_identity_.erase(fd);
    return;
  }
  connection_identity_[fd] = identity;
}

void Coordinator::read_closed_connections(Clock::time_point now) {
  std::uint16_t kind = 0;
  std::uint32_t value = 0;
  while (transport::read_monitor_event(closed_events_, kind, value)) {
    if (kind == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL) {
      // With CURVE a refusal like ZAP's; without, counted with the guard's drops.
      if (zap_) zap_->note_failed_handshake(value);
      if (guard_) guard_->failed_handshake(value);
      continue;
    }
    const auto fd = static_cast<int>(value);
    if (kind == ZMQ_EVENT_ACCEPTED) {
      if (guard_) guard_->accepted(fd);
      closed_descriptors_.erase(fd);  // a new connection on it
      continue;
    }
    if (kind != ZMQ_EVENT_DISCONNECTED) continue;
    if (guard_) guard_->ended(fd);
    // Until the next ACCEPTED on it, what still comes on this descriptor was sent before the
    // close (a stranger's connection, or messages of a member's that wait unread).
    closed_descriptors_.insert(fd);
    // A JOIN on the next connection that gets this descriptor is one on a new connection, not
    // the closed one's JOIN repeated (§2.2).
    for (Member& m : members_) {
      if (m.join_fd == fd) {
        m.join_fd = -1;
        m.join_closed = true;
      }
    }
    const auto it = connection_identity_.find(fd);
    if (it == connection_identity_.end()) continue;
    const std::size_t index = member_of(it->second);
    connection_identity_.erase(it);  // the descriptor may be another connection's next
    if (index < members_.size() && members_[index].joined && !members_[index].resigned &&
        !members_[index].closed_at) {
      members_[index].closed_at = now;
    }
  }
}

std::size_t Coordinator::find_gone(Clock::time_point now) const {
  // A live federate whose connection broke is heard from again on the reconnected one within a
  // heartbeat period (heartbeat_timeout / 4) and ZeroMQ's reconnect interval.
  const auto grace = spec_.heartbeat_timeout / 4 + std::chrono::milliseconds(200);
  for (std::size_t i = 0; i < members_.size(); ++i) {
    const Member& m = members_[i];
    if (m.joined && !m.resigned && m.closed_at && now - *m.closed_at > grace) return i;
  }
  return members_.size();
}

Coordinator::Clock::duration Coordinator::held_report_window() const {
  return std::min<Clock::duration>(std::chrono::seconds(10), spec_.join_timeout);
}

std::size_t Coordinator::find_held_report(Clock::time_point now, bool failing) const {
  for (std::size_t i = 0; i < members_.size(); ++i) {
    const Member& m = members_[i];
    if (!m.joined && m.held_report &&
        (failing || now - m.held_report->second >= held_report_window())) {
      return i;
    }
  }
  return members_.size();
}

void Coordinator::heard_from(std::size_t index, Clock::time_point now) {
  Member& m = members_[index];
  const auto gap = now - m.last_seen;
  if (gap > spec_.heartbeat_timeout * 3 / 8) {  // 1.5 heartbeat periods
    const double seconds = std::chrono::duration<double>(gap).count();
    ++stats_.silences;
    stats_.silence_seconds += seconds;
    auto& mine = stats_.silences_by_federate[grants_.id_of(index)];
    ++mine.first;
    mine.second += seconds;
    if (m.silences != nullptr) {
      m.silences->Increment();
      m.silence_seconds->Increment(seconds);
    }
    spdlog::warn(
        "coordinator: '{}' was silent for {:.3f} s (a slow or broken link, or a stalled "
        "process), and is back",
        grants_.id_of(index), seconds);
  }
  m.last_seen = now;
}

void Coordinator::count_failure() {
  if (metrics_.failures == nullptr) return;
  metrics_.failures->Increment();
  metrics_.federates->Decrement();
}

CoordinatorResult Coordinator::result_so_far() const {
  CoordinatorResult result = stats_;
  for (std::size_t i = 0; i < members_.size(); ++i) {
    result.traffic_by_federate[grants_.id_of(i)] = {members_[i].grants, members_[i].messages};
  }
  return result;
}

CoordinatorResult Coordinator::fail(std::vector<std::string> who, const std::string& why) {
  CoordinatorResult result = result_so_far();
  result.ok = false;
  result.failed = std::move(who);
  result.error = why;
  ControlMessage failed;
  failed.type = ControlType::kFailed;
  failed.federate = result.failed.empty() ? std::string() : result.failed.front();
  failed.text = why;
  broadcast(failed);
  spdlog::error("coordinator: {}", why);
  return result;
}

bool Coordinator::receive_batch() {
  zmq::message_t identity;
  zmq::message_t frame;
  for (std::size_t handled = 0; handled < kMaxBatch; ++handled) {
    if (!router_.recv(identity, zmq::recv_flags::dontwait)) {
      if (guard_) (void)guard_->check(drops_);
      return true;
    }
    if (router_.get(zmq::sockopt::rcvmore) == 0) continue;
    (void)router_.recv(frame, zmq::recv_flags::none);
    std::size_t wire_bytes = transport::zmtp_frame_bytes(frame.size());
    const char* fd_text = zmq_msg_gets(frame.handle(), "__fd");
    const int fd = fd_text != nullptr ? std::atoi(fd_text) : -1;  // what ZMQ_SRCFD reads
    while (router_.get(zmq::sockopt::rcvmore) != 0) {
      (void)router_.recv(frame);
      wire_bytes += transport::zmtp_frame_bytes(frame.size());
    }
    if (guard_ && fd >= 0) guard_->note_read(fd, identity.to_string(), wire_bytes);
    handle(identity.to_string(), frame, fd);
  }
  return false;
}

bool Coordinator::collect_results(std::chrono::milliseconds timeout,
                                  const std::function<bool()>& complete) {
  const Clock::time_point deadline = Clock::now() + timeout;
  zmq::pollitem_t item{router_.handle(), 0, ZMQ_POLLIN, 0};
  while (!complete() && Clock::now() < deadline &&
         stop_requested_.load(std::memory_order_relaxed) == 0) {
    zmq::poll(&item, 1, std::chrono::milliseconds(50));
    (void)receive_batch();
  }
  return complete();
}

Coordinator::Readable Coordinator::wait_for_sockets(std::chrono::milliseconds limit) {
  bool router_read_out = false;  // asked every time: the coordinator sends on it between waits
  std::array<transport::WatchedSocket, 2> sockets{
      {{router_, router_read_out}, {closed_events_, closed_read_out_}}};
  (void)transport::wait_for_input(sockets, -1, limit);
  return {sockets[0].readable, sockets[1].readable};
}

CoordinatorResult Coordinator::run() {
  const Clock::time_point join_deadline = Clock::now() + spec_.join_timeout;
  const auto tick = std::max(std::chrono::milliseconds(1), spec_.heartbeat_timeout / 8);
  while (true) {
    const Readable readable = wait_for_sockets(tick);
    // Only what the wait found readable is read: a read with nothing waiting costs ZeroMQ a
    // system call, and what arrives after the wait makes the next one return at once.
    bool caught_up = true;  // every message that had arrived is handled
    if (readable.router) {
      caught_up = receive_batch();
    } else if (guard_) {
      (void)guard_->check(drops_);
    }
    if (readable.closed) {
      read_closed_connections(Clock::now());
      closed_read_out_ = true;  // read until it had no event left
    }
    if (peer_failure_) {
      count_failure();
      return fail({grants_.id_of(peer_failure_index_)}, *peer_failure_);
    }
    if (granting()) {
      send_grants();
      request_reports();
      send_floor();
    }
    if (resigned_count_ == members_.size()) {
      CoordinatorResult result = result_so_far();
      result.ok = true;
      spdlog::info("coordinator: every federate resigned; run finished");
      return result;
    }
    const Clock::time_point now = Clock::now();
    // A federate's heartbeats may wait unread behind a backlog: a coordinator that has not caught
    // up calls no one silent, unless it has been behind for a whole heartbeat timeout (a flood
    // must not hide a death for ever).
    if (caught_up) behind_since_.reset();
    if (!caught_up && !behind_since_) behind_since_ = now;
    const bool may_judge = caught_up || now - *behind_since_ > spec_.heartbeat_timeout;
    const std::size_t silent = may_judge ? find_silent(now) : members_.size();
    const std::size_t gone = find_gone(now);
    const bool join_timed_out = !started_ && now > join_deadline;
    // A federate whose process a launcher reported dead before it joined: when the run fails
    // anyway (its host's launcher stops the others, whose connections then close; or the join
    // timeout), or its hold ran out, that report says why.
    if (const std::size_t held = find_held_report(
            now, silent < members_.size() || gone < members_.size() || join_timed_out);
        held < members_.size()) {
      // Not joined: counted as a failure, but it was never among the joined federates.
      if (metrics_.failures != nullptr) metrics_.failures->Increment();
      return fail({grants_.id_of(held)}, members_[held].held_report->first);
    }
    if (silent < members_.size()) {
      const std::string id = grants_.id_of(silent);
      count_failure();
      return fail({id}, "federate '" + id + "' failed: no message or heartbeat for more than " +
                            std::to_string(spec_.heartbeat_timeout.count()) + " ms");
    }
    if (gone < members_.size()) {
      const std::string id = grants_.id_of(gone);
      count_failure();
      return fail({id}, "federate '" + id +
                            "' failed: its connection to the coordinator closed and it was not "
                            "heard from again (its process, or its host, is gone)");
    }
    if (join_timed_out) {
      std::vector<std::string> missing;
      std::string names;
      for (std::size_t i = 0; i < members_.size(); ++i) {
        if (members_[i].joined) continue;
        missing.push_back(grants_.id_of(i));
        names += " '" + grants_.id_of(i) + "'";
      }
      return fail(missing, "federate(s)" + names + " never joined within " +
                               std::to_string(spec_.join_timeout.count()) + " ms");
    }
    if (const int stop = stop_requested_.load(std::memory_order_relaxed); stop != 0) {
      return fail({}, "coordinator stopped " + (stop > 0 ? "by " + signal_name(stop) + " " : "") +
                          "before the run finished");
    }
  }
}

}  // namespace tagflow::coordinator
