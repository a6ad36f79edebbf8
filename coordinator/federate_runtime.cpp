#include "coordinator/federate_runtime.hpp"

#include <algorithm>
#include <array>

#include "coordinator/data_socket.hpp"
#include "transport/curve_keys.hpp"
#include "transport/wire_socket.hpp"

namespace tagflow::coordinator {

using transport::kForever;
using transport::kNever;

FederateRuntime::FederateRuntime(const FederationSpec& spec, std::string id,
                                 FederatedProgram& program, std::string data_bind)
    : spec_(spec),
      id_(std::move(id)),
      program_(program),
      context_(1),
      data_(context_, zmq::socket_type::router) {
  const FederateSpec* me = spec_.find(id_);
  if (me == nullptr) throw FederationConfigError("federate '" + id_ + "' is not in the federation");
  if (spec_.on_zero_delay_cycle(id_)) {
    throw FederationConfigError(
        "federate '" + id_ +
        "' is on a zero-delay cycle across federates, which FederateRuntime cannot run (its "
        "programs react to a whole tag at once); give a connection of the cycle a delay, or run "
        "it as a reactor program with ReactorFederate");
  }
  zap_ = prepare_data_socket(context_, data_, validator_.policy(), spec_, *me);
  data_.bind(data_bind);
  data_endpoint_ = data_.get(zmq::sockopt::last_endpoint);
  for (const auto& [upstream, port] : program_.input_ports()) {
    validator_.allow_port(upstream, port);
  }
  for (const UpstreamLink& up : me->upstreams) processed_[up.federate] = 0;
}

FederateRuntime::~FederateRuntime() {
  outputs_.clear();
  // Unread data left on the socket when its receive queue is full keeps libzmq's context from
  // terminating (its I/O thread cannot hand the queue the end marker): read it away first. The
  // bound keeps a peer that still sends from holding the federate here.
  zmq::message_t unread;
  for (int i = 0; i < 100000 && data_.recv(unread, zmq::recv_flags::dontwait); ++i) {
  }
  data_.close();
  zap_.reset();
}

WireTag FederateRuntime::next_tag() {
  WireTag next = program_.next_local_event();
  if (!pending_.empty()) next = std::min(next, pending_.begin()->first);
  return next;
}

bool FederateRuntime::receive_data() {
  // At most a batch per call: a federate far behind a fast upstream goes back to its tags and its
  // control messages (a FAILED, a stop) between batches instead of decoding the whole backlog.
  // What is left wakes the next poll, or comes with the grant that needs it.
  for (int i = 0; i < kMaxReceivedPerCall; ++i) {
    transport::ReceiveResult result =
        transport::receive_wire_message(data_, validator_, drops_, zmq::recv_flags::dontwait);
    if (!result.received) return false;
    if (result.error != transport::DropReason::kNone) {
      ++summary_.messages_dropped;
      continue;
    }
    ++summary_.messages_received;
    transport::ReceivedMessage& message = result.message;
    InputMessage input;
    input.from = message.header.from;
    input.port = message.header.port;
    for (const zmq::message_t& frame : message.payloads) {
      input.bytes.append(static_cast<const char*>(frame.data()), frame.size());
    }
    received_[input.from].push_back(message.header.tag);
    pending_[message.header.tag].push_back(std::move(input));
  }
  return true;  // more may be waiting
}

void FederateRuntime::update_safe_tag(const FederateClient& client) {
  const WireTag& granted = client.granted();
  if (granted <= safe_) return;
  for (const auto& [upstream, expected] : client.granted_counts()) {
    const std::deque<WireTag>& tags = received_[upstream];
    const auto arrived = static_cast<std::uint64_t>(
        std::upper_bound(tags.begin(), tags.end(), granted) - tags.begin());
    if (processed_[upstream] + arrived < expected) return;  // still in flight
  }
  safe_ = granted;
}

void FederateRuntime::react_at(const WireTag& tag, FederateClient& client) {
  std::vector<InputMessage> inputs;
  const auto at = pending_.find(tag);
  if (at != pending_.end()) {
    inputs = std::move(at->second);
    pending_.erase(at);
  }
  std::stable_sort(inputs.begin(), inputs.end(), [](const InputMessage& a, const InputMessage& b) {
    return std::tie(a.from, a.port) < std::tie(b.from, b.port);
  });
  for (auto& [upstream, tags] : received_) {
    while (!tags.empty() && tags.front() <= tag) {
      tags.pop_front();
      ++processed_[upstream];
    }
  }
  Outbox out;
  program_.react(tag, inputs, out);
  std::vector<std::pair<zmq::socket_t*, transport::WireHeader>> headers;
  for (Outbox::Output& output : out.outputs()) {
    const FederateSpec* destination = spec_.find(output.to);
    const auto socket = outputs_.find(output.to);
    if (destination == nullptr || socket == outputs_.end()) {
      throw FederationError("federate '" + id_ + "' sent to '" + output.to +
                            "', which is not one of its downstreams");
    }
    ConnectionDelay delay;
    for (const UpstreamLink& link : destination->upstreams) {
      if (link.federate == id_) delay = link.delay;
    }
    transport::WireHeader header;
    header.tag = transport::delayed(tag, delay);
    header.from = id_;
    header.port = output.port;
    // Reported with this tag's LTC or a later one (PROTOCOL.md §3.2): until then the
    // coordinator's view of this federate (LTC below this tag) keeps every grant that could
    // cover it from being given.
    if (in_transit_.size() == kMaxInTransitPerLtc) flush_completed(client, std::nullopt);
    in_transit_.emplace_back(output.to, header.tag);
    headers.emplace_back(&socket->second, header);
  }
  completed_ = tag;
  ++unreported_;
  // A federate about to wait reports the tag (with its next tag) before it sends the tag's data:
  // a receiver needs both, and the report's way to it, through the coordinator's grant, is one
  // hop longer than the data's.
  const WireTag next = next_tag();
  if (next > safe_ || unreported_ >= kTagsPerLtc) flush_completed(client, next);
  for (std::size_t i = 0; i < headers.size(); ++i) {
    const std::string& bytes = out.outputs()[i].bytes;
    transport::send_wire_message(*headers[i].first, headers[i].second,
                                 {transport::Payload::copy_of(bytes.data(), bytes.size())});
    ++summary_.messages_sent;
  }
  validator_.set_completed_tag(tag);
  ++summary_.tags_processed;
  summary_.last_tag = tag;
}

void FederateRuntime::flush_completed(FederateClient& client, std::optional<WireTag> next) {
  if (unreported_ == 0 && in_transit_.empty()) return;
  // A completed tag without the next one leaves the coordinator no next tag (PROTOCOL.md §3.2).
  if (next) {
    announced_ = *next;
  } else if (unreported_ != 0) {
    announced_ = kNever;
  }
  client.send_completed(completed_, std::move(in_transit_), next);
  in_transit_.clear();
  unreported_ = 0;
}

void FederateRuntime::announce(FederateClient& client, const WireTag& next) {
  if (next == announced_) return;
  // A tag that only a received message asks for, below the next tag the coordinator has: the
  // sender's in-transit report already lowers this federate's bound to it and gets it its grant
  // (PROTOCOL.md §3.3). (No member of a zero-delay cycle gets here; their PTAG rule reads it.)
  if (next < announced_ && pending_.count(next) != 0) return;
  client.send_next_event(next);
  announced_ = next;
}

void FederateRuntime::connect_outputs(const ControlMessage& start) {
  const FederateSpec* me = spec_.find(id_);
  for (const std::string& down : me->downstreams) {
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
    socket.connect(endpoint);
    outputs_.emplace(down, std::move(socket));
  }
}

FederateRunSummary FederateRuntime::run(std::chrono::milliseconds join_timeout) {
  FederateOptions options = FederateOptions::from_spec(spec_, id_);
  options.data_endpoint = data_endpoint_;
  FederateClient client(context_, options);
  const ControlMessage start = client.join(join_timeout);
  connect_outputs(start);
  validator_.set_completed_tag(transport::previous_tag(start.tag));
  std::array<zmq::pollitem_t, 2> items{
      {{client.socket().handle(), 0, ZMQ_POLLIN, 0}, {data_.handle(), 0, ZMQ_POLLIN, 0}}};
  std::uint64_t iteration = 0;
  while (true) {
    // Control messages (FAILED, stop) and a lost coordinator are noticed even by a federate
    // that never has to wait for a grant.
    const bool backlog = receive_data();
    if (++iteration % 16 == 0 || backlog) client.poll(std::chrono::milliseconds(0));
    update_safe_tag(client);
    const WireTag next = next_tag();
    client.set_stop_floor(next);
    if (client.stop_tag() && next > *client.stop_tag()) break;
    if (next == kForever && safe_ == kForever) break;
    if (next <= safe_) {
      react_at(next, client);
      continue;
    }
    flush_completed(client, next);  // about to wait: report everything done so far
    announce(client, next);
    // Every data message is reported in transit and the coordinator has this federate's next
    // tag, so a data message arriving now is followed by a grant that covers it (PROTOCOL.md
    // §4.4): unless the current grant still waits for data, only a control message can let this
    // federate go on, and waking for the data first would cost a wake-up per tag. Data is read
    // after every wake-up (at the latest after the poll's timeout).
    const bool grant_has_its_data = safe_ == client.granted();
    const bool control_only = grant_has_its_data && announced_ != kNever;
    zmq::poll(items.data(), control_only ? 1 : items.size(), std::chrono::milliseconds(50));
    client.poll(std::chrono::milliseconds(0));
  }
  flush_completed(client, std::nullopt);
  client.resign();
  // What arrived while it waited for control messages only is read (and garbage counted) too.
  for (int batch = 0; batch < 16 && receive_data(); ++batch) {
  }
  summary_.messages_dropped = drops_.total();
  return summary_;
}

}  // namespace tagflow::coordinator
