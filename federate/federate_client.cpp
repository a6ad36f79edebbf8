#include "federate/federate_client.hpp"

#include <algorithm>

#include "transport/curve_keys.hpp"
#include "transport/local_links.hpp"

namespace tagflow::coordinator {
namespace {

using Clock = std::chrono::steady_clock;

void secure(zmq::socket_t& socket, const FederateOptions& options) {
  if (!options.keys_dir) return;
  const transport::CurveKeyPair mine = transport::read_key_pair(*options.keys_dir, options.id);
  const transport::CurveKeyPair server =
      transport::read_key_pair(*options.keys_dir, "coordinator", true);
  transport::make_curve_client(socket, mine, server.public_key);
}

}  // namespace

FederateOptions FederateOptions::from_spec(const FederationSpec& spec, const std::string& id) {
  const FederateSpec* federate = spec.find(id);
  if (federate == nullptr) {
    throw FederationConfigError("federate '" + id + "' is not in the federation");
  }
  FederateOptions options;
  options.id = id;
  options.coordinator_endpoint = spec.address;
  options.upstreams = federate->upstreams;
  options.downstreams = federate->downstreams;
  options.heartbeat_timeout = spec.heartbeat_timeout;
  options.keys_dir = spec.keys_dir;
  options.file_digest = spec.file_digest;
  return options;
}

FederateClient::FederateClient(zmq::context_t& context, FederateOptions options)
    : options_(std::move(options)), context_(context), socket_(context, zmq::socket_type::dealer) {
  socket_.set(zmq::sockopt::routing_id, options_.id);
  socket_.set(zmq::sockopt::linger, 1000);
  secure(socket_, options_);
  const std::string endpoint = transport::nearest_endpoint(options_.coordinator_endpoint);
  transport::set_ipv6_for(socket_, endpoint);
  socket_.connect(endpoint);
  zmq::socket_t heartbeat(context_, zmq::socket_type::dealer);
  heartbeat.set(zmq::sockopt::routing_id, options_.id + "#hb");
  heartbeat.set(zmq::sockopt::linger, 0);
  secure(heartbeat, options_);
  transport::set_ipv6_for(heartbeat, endpoint);
  heartbeat.connect(endpoint);
  heartbeat_thread_ = std::thread(&FederateClient::heartbeat_loop, this, std::move(heartbeat));
}

FederateClient::~FederateClient() {
  stopping_.store(true, std::memory_order_relaxed);
  heartbeat_thread_.join();
}

void FederateClient::heartbeat_loop(zmq::socket_t heartbeat) {
  const auto interval = std::max(std::chrono::milliseconds(1), options_.heartbeat_timeout / 4);
  const std::string beat = encode_control(ControlMessage{});
  Clock::time_point last_reply = Clock::now();
  bool heard = false;  // a coordinator that never answered is the join timeout's business
  Clock::time_point next_beat = Clock::now();
  zmq::pollitem_t item{heartbeat.handle(), 0, ZMQ_POLLIN, 0};
  while (!stopping_.load(std::memory_order_relaxed)) {
    const Clock::time_point now = Clock::now();
    if (now >= next_beat) {
      heartbeat.send(zmq::buffer(beat), zmq::send_flags::dontwait);
      next_beat = now + interval;
    }
    zmq::poll(&item, 1, std::min(interval, std::chrono::milliseconds(50)));
    zmq::message_t reply;
    while (heartbeat.recv(reply, zmq::recv_flags::dontwait)) {
      last_reply = Clock::now();
      heard = true;
    }
    if (heard && Clock::now() - last_reply > options_.heartbeat_timeout) {
      coordinator_lost_.store(true, std::memory_order_release);
    }
  }
}

void FederateClient::check_coordinator() const {
  if (coordinator_lost_.load(std::memory_order_acquire)) {
    throw FederationError("federate '" + options_.id + "': the coordinator at " +
                          options_.coordinator_endpoint + " did not answer heartbeats for " +
                          std::to_string(options_.heartbeat_timeout.count()) + " ms");
  }
}

void FederateClient::trace_control(trace::Kind kind, const ControlMessage& message,
                                   std::size_t bytes) {
  trace::TraceRecorder* tracer = trace::active();
  if (tracer == nullptr) return;
  tracer->instant(kind, carried_tag(message),
                  trace_names_.id(*tracer, control_type_name(message.type)),
                  trace_names_.id(*tracer, "coordinator"), 0, bytes);
}

void FederateClient::send(const ControlMessage& message) {
  const std::string frame = encode_control(message);
  trace_control(trace::Kind::kControlSend, message, frame.size());  // before: never after receipt
  (void)send_frame(frame, zmq::send_flags::none);
}

bool FederateClient::send_frame(const std::string& frame, zmq::send_flags flags) {
  ++sends_;
  return socket_.send(zmq::buffer(frame), flags).has_value();
}

ControlMessage join_message(const FederateOptions& options) {
  ControlMessage join;
  join.type = ControlType::kJoin;
  join.version = options.protocol_version;
  join.federate = options.id;
  join.upstreams = options.upstreams;
  join.downstreams = options.downstreams;
  join.endpoints = {{options.id, options.data_endpoint}};
  return join;
}

ControlMessage FederateClient::join(std::chrono::milliseconds timeout,
                                    const std::function<void()>& while_waiting) {
  const ControlMessage join = join_message(options_);
  // Without waiting, as the repeats below: a refused CURVE handshake can tear the connection down
  // before this first JOIN goes out, and a blocking send would then wait for a coordinator that
  // may never come (one that ended, say). Not sent now: the loop tries again at once.
  const std::string frame = encode_control(join);
  trace_control(trace::Kind::kControlSend, join, frame.size());
  const Clock::time_point deadline = Clock::now() + timeout;
  Clock::time_point sent =
      send_frame(frame, zmq::send_flags::dontwait) ? Clock::now() : Clock::now() - kJoinRepeat;
  while (!start_) {
    // Again every kJoinRepeat until START or REFUSED: a JOIN written to the connection of a
    // coordinator that was going away is lost with it, and ZeroMQ does not resend it on the
    // connection it makes to the next one (PROTOCOL.md §2.1).
    if (Clock::now() - sent >= kJoinRepeat) {
      // Without waiting: with no connection up (a refused CURVE handshake tears it down) a
      // blocking send would never return, and the timeout below must still end the wait.
      // Traced like the first: the coordinator may read both, and each receive has its send.
      trace_control(trace::Kind::kControlSend, join, frame.size());
      (void)send_frame(frame, zmq::send_flags::dontwait);
      sent = Clock::now();
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      throw FederationError("federate '" + options_.id + "': no START from the coordinator at " +
                            options_.coordinator_endpoint + " within " +
                            std::to_string(timeout.count()) +
                            " ms (is it running, and are the CURVE keys right?)");
    }
    poll(std::min(left, std::chrono::milliseconds(while_waiting ? 20 : 100)));
    if (while_waiting) while_waiting();
  }
  // Hosts that run different files would run different clusters under one digest.
  if (!options_.file_digest.empty() && !start_->file_digest.empty() &&
      start_->file_digest != options_.file_digest) {
    const std::string why = "its cluster file (digest " + options_.file_digest +
                            ") is not the coordinator's (digest " + start_->file_digest +
                            "): run the same file on every host";
    report_failure(why);
    throw FederationError("federate '" + options_.id + "': " + why);
  }
  return *start_;
}

void FederateClient::send_next_event(const WireTag& tag, Reporting reporting) {
  ControlMessage message = make_tag_message(ControlType::kNextEvent, tag);
  message.reporting = reporting;
  send(message);
}

void FederateClient::send_completed(const WireTag& tag) {
  send(make_tag_message(ControlType::kCompleted, tag));
}

void FederateClient::send_completed(const WireTag& tag,
                                    std::vector<std::pair<std::string, WireTag>> in_transit,
                                    std::optional<WireTag> next, Reporting reporting) {
  ControlMessage message = make_tag_message(ControlType::kCompleted, tag);
  message.in_transit = std::move(in_transit);
  message.next = next;
  message.reporting = next ? reporting : Reporting::kEveryWait;
  send(message);
}

void FederateClient::send_in_transit(const std::string& destination, const WireTag& tag) {
  ControlMessage message = make_tag_message(ControlType::kInTransit, tag);
  message.federate = destination;
  send(message);
}

void FederateClient::send_stop_request(const WireTag& proposal) {
  send(make_tag_message(ControlType::kStopRequest, proposal));
}

void FederateClient::send_stop_reply(const WireTag& proposal) {
  send(make_tag_message(ControlType::kStopReply, proposal));
}

void FederateClient::send_checkpoint_written(const WireTag& tag, std::uint64_t bytes,
                                             std::uint64_t checksum) {
  ControlMessage message = make_tag_message(ControlType::kCheckpointWritten, tag);
  message.part_bytes = bytes;
  message.part_checksum = checksum;
  send(message);
}

void FederateClient::send_resumed(const WireTag& tag) {
  send(make_tag_message(ControlType::kResumed, tag));
}

void FederateClient::resign() {
  ControlMessage message;
  message.type = ControlType::kResign;
  send(message);
  // A connection closed with messages unread in its receive queue is reset rather than closed
  // (TCP sends RST), and a coordinator behind on its reading lost this RESIGN that way, over TCP
  // and over the Unix-socket twins alike: it then declared this federate gone.
  // Until it reads the RESIGN it may still send grants and notices here; after, nothing more
  // (PROTOCOL.md §5 rule 6). From version 7 on it says when it has read it: FINISHED (or FAILED,
  // when the run ended first), the last message it sends here. Before, the connection is read
  // until it has been quiet for kResignQuiet, at most a heartbeat period: a coordinator stalled
  // longer than that (a loaded machine) still lost the RESIGN.
  const bool answered = options_.protocol_version >= kFirstFinishedVersion;
  const Clock::time_point deadline =
      Clock::now() + (answered ? options_.heartbeat_timeout : options_.heartbeat_timeout / 4);
  Clock::time_point last = Clock::now();
  zmq::message_t frame;
  while (!coordinator_lost_.load(std::memory_order_acquire)) {
    const Clock::time_point now = Clock::now();
    if (now >= deadline || (!answered && now - last >= kResignQuiet)) return;
    const auto left =
        answered ? deadline - now : std::min(deadline - now, kResignQuiet - (now - last));
    // In steps of at most 100 ms, to see a coordinator that stopped answering heartbeats.
    const auto wait = std::min(std::chrono::duration_cast<std::chrono::milliseconds>(left),
                               std::chrono::milliseconds(100));
    zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, std::max(wait, std::chrono::milliseconds(1)));
    while (socket_.recv(frame, zmq::recv_flags::dontwait)) {
      last = Clock::now();
      if (!answered) continue;
      const std::optional<ControlMessage> last_word = decode_control(frame.data(), frame.size());
      if (last_word &&
          (last_word->type == ControlType::kFinished || last_word->type == ControlType::kFailed)) {
        trace_control(trace::Kind::kControlReceive, *last_word, frame.size());
        return;
      }
    }
  }
}

void FederateClient::report_failure(const std::string& reason) noexcept {
  try {
    ControlMessage message;
    message.type = ControlType::kFailed;
    message.federate = options_.id;
    message.text = reason;  // encode_control cuts it to the 256 bytes a receiver reads
    const std::string frame = encode_control(message);
    (void)send_frame(frame, zmq::send_flags::dontwait);
  } catch (const std::exception&) {
    // The run is failing anyway; the coordinator then sees this federate's heartbeats stop.
  }
}

bool FederateClient::poll(std::chrono::milliseconds timeout) {
  if (timeout.count() > 0) {  // without a wait, the receives below look just as far
    zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, timeout);
  }
  bool any = false;
  zmq::message_t frame;
  while (socket_.recv(frame, zmq::recv_flags::dontwait)) {
    any = true;
    const std::optional<ControlMessage> message = decode_control(frame.data(), frame.size());
    if (message) {
      trace_control(trace::Kind::kControlReceive, *message, frame.size());
      apply(*message);
    }
  }
  check_coordinator();
  return any;
}

void FederateClient::apply(const ControlMessage& message) {
  switch (message.type) {
    case ControlType::kStart:
      start_ = message;
      break;
    case ControlType::kRefused:
      throw FederationError("federate '" + options_.id +
                            "': the coordinator refused to admit it: " + message.text);
    case ControlType::kGrant:
      if (message.tag > granted_) {
        granted_ = message.tag;
        for (const auto& [id, count] : message.counts) counts_[id] = count;
      }
      break;
    case ControlType::kProvisional:
      if (message.tag > provisional_) {
        provisional_ = message.tag;
        for (const auto& [id, count] : message.counts) provisional_counts_[id] = count;
      }
      break;
    case ControlType::kStopRequest:
      if (options_.answer_stop_requests) {
        send_stop_reply(std::max(message.tag, stop_floor_));
      } else {
        stop_request_ = std::max(message.tag, stop_request_.value_or(message.tag));
      }
      break;
    case ControlType::kStopGranted:
      stop_tag_ = message.tag;
      stop_proposal_ = message.proposal;
      break;
    case ControlType::kFailed:
      throw FederationError("federate '" + options_.id + "': the run failed: " + message.text);
    case ControlType::kReportRequest:
      report_requested_ = true;
      break;
    case ControlType::kFloor:
      cutoff_floor_ = std::max(cutoff_floor_, message.tag);
      break;
    default:
      break;
  }
}

}  // namespace tagflow::coordinator
