#include "federate/federate_runtime.hpp"

#include <algorithm>
#include <array>

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
      plane_(context_, spec_, id_, data_bind) {
  if (spec_.on_zero_delay_cycle(id_)) {
    throw FederationConfigError(
        "federate '" + id_ +
        "' is on a zero-delay cycle across federates, which FederateRuntime cannot run (its "
        "programs react to a whole tag at once); give a connection of the cycle a delay, or run "
        "it as a reactor program with ReactorFederate");
  }
  for (const auto& [upstream, port] : program_.input_ports()) plane_.allow_input(upstream, port);
}

FederateRuntime::~FederateRuntime() = default;

WireTag FederateRuntime::next_tag() {
  WireTag next = program_.next_local_event();
  if (!pending_.empty()) next = std::min(next, pending_.begin()->first);
  return next;
}

bool FederateRuntime::receive_data() {
  return plane_.receive([this](transport::ReceivedMessage& message) {
    ++summary_.messages_received;
    InputMessage input;
    input.from = message.header.from;
    input.port = message.header.port;
    const transport::Payload bytes = transport::take_payload(message);
    input.bytes.assign(static_cast<const char*>(bytes.data), bytes.size);
    pending_[message.header.tag].push_back(std::move(input));
  });
}

void FederateRuntime::update_safe_tag(const FederateClient& client) {
  const WireTag& granted = client.granted();
  if (granted <= safe_) return;
  if (plane_.counts_met(client.granted_counts(), granted)) safe_ = granted;
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
  Outbox out;
  program_.react(tag, inputs, out);
  std::vector<WireTag> arrivals;
  for (const Outbox::Output& output : out.outputs()) {
    if (!plane_.sends_to(output.to)) {
      throw FederationError("federate '" + id_ + "' sent to '" + output.to +
                            "', which is not one of its downstreams");
    }
    arrivals.push_back(plane_.arrival_tag(output.to, tag));
    // Reported with this tag's LTC or a later one (PROTOCOL.md §3.2): until then the
    // coordinator's view of this federate (LTC below this tag) keeps every grant that could
    // cover it from being given.
    plane_.report_in_transit(client, output.to, arrivals.back());
  }
  plane_.complete(tag);
  // A federate about to wait reports the tag (with its next tag) before it sends the tag's data:
  // a receiver needs both, and the report's way to it, through the coordinator's grant, is one
  // hop longer than the data's.
  const WireTag next = next_tag();
  if (next > safe_ || plane_.unreported_tags() >= kTagsPerLtc) plane_.flush_completed(client, next);
  for (std::size_t i = 0; i < arrivals.size(); ++i) {
    Outbox::Output& output = out.outputs()[i];
    (void)plane_.send_value(output.to, output.port, arrivals[i],
                            transport::Payload::owning(std::move(output.bytes)));
    ++summary_.messages_sent;
  }
  ++summary_.tags_processed;
  summary_.last_tag = tag;
}

FederateRunSummary FederateRuntime::run(std::chrono::milliseconds join_timeout) {
  FederateOptions options = FederateOptions::from_spec(spec_, id_);
  options.data_endpoint = plane_.endpoint();
  FederateClient client(context_, options);
  const ControlMessage start = client.join(join_timeout, [this] { plane_.watch_connections(); });
  plane_.connect(start, options.protocol_version);
  std::array<zmq::pollitem_t, 2> items{
      {{client.socket().handle(), 0, ZMQ_POLLIN, 0}, {plane_.socket().handle(), 0, ZMQ_POLLIN, 0}}};
  std::uint64_t iteration = 0;
  while (true) {
    // Control messages (FAILED, stop) and a lost coordinator are noticed even by a federate
    // that never has to wait for a grant.
    bool backlog = false;
    try {
      backlog = receive_data();
    } catch (const DataLossError& e) {
      client.report_failure(e.what());
      throw;
    }
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
    plane_.announce(client, next);  // about to wait: report everything done so far
    // Every data message is reported in transit and the coordinator has this federate's next
    // tag, so a data message arriving now is followed by a grant that covers it (PROTOCOL.md
    // §4.4): unless the current grant still waits for data, only a control message can let this
    // federate go on, and waking for the data first would cost a wake-up per tag. Data is read
    // after every wake-up (at the latest after the poll's timeout).
    const bool grant_has_its_data = safe_ == client.granted();
    const bool control_only = grant_has_its_data && plane_.announced() != kNever;
    zmq::poll(items.data(), control_only ? 1 : items.size(), std::chrono::milliseconds(50));
    client.poll(std::chrono::milliseconds(0));
  }
  plane_.flush_completed(client, std::nullopt);
  client.resign();
  // What arrived while it waited for control messages only is read (and garbage counted) too.
  // (It has resigned: a message it would drop can no longer hold anything up.)
  try {
    for (int batch = 0; batch < 16 && receive_data(); ++batch) {
    }
  } catch (const DataLossError&) {
  }
  summary_.messages_dropped = plane_.drops().total();
  return summary_;
}

}  // namespace tagflow::coordinator
