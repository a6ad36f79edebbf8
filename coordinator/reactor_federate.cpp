#include "coordinator/reactor_federate.hpp"

#include <algorithm>
#include <array>

#include <sys/eventfd.h>
#include <unistd.h>

#include "coordinator/data_socket.hpp"
#include "monitoring/process_metrics.hpp"
#include "transport/curve_keys.hpp"
#include "transport/wire_socket.hpp"

namespace tagflow::coordinator {
namespace {

reactors::Tag to_reactor_tag(const WireTag& tag) {
  if (tag == transport::kForever) return reactors::Tag::forever();
  if (tag == transport::kNever) return reactors::Tag::never();
  return {tag.time_ns, tag.microstep};
}

WireTag to_wire_tag(const reactors::Tag& tag) { return {tag.time_ns(), tag.microstep()}; }

}  // namespace

ReactorFederate::ReactorFederate(const FederationSpec& spec, std::string id,
                                 ReactorFederateOptions options)
    : spec_(spec),
      id_(std::move(id)),
      options_(std::move(options)),
      context_(1),
      data_(context_, zmq::socket_type::router) {
  const FederateSpec* me = spec_.find(id_);
  if (me == nullptr) throw FederationConfigError("federate '" + id_ + "' is not in the federation");
  zap_ = prepare_data_socket(context_, data_, validator_.policy(), spec_, *me);
  try {
    data_.bind(options_.bind_endpoint);
  } catch (const zmq::error_t& e) {
    throw FederationError("federate '" + id_ + "': cannot listen for data on " +
                          options_.bind_endpoint + ": " + e.what());
  }
  data_endpoint_ = data_.get(zmq::sockopt::last_endpoint);
  for (const UpstreamLink& up : me->upstreams) completed_[up.federate] = 0;
  on_zero_delay_cycle_ = spec_.on_zero_delay_cycle(id_);
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  setup_metrics();
}

void ReactorFederate::setup_metrics() {
  monitoring::ProcessMetrics* metrics = options_.metrics;
  if (metrics == nullptr) return;
  using monitoring::Metric;
  const FederateSpec& me = *spec_.find(id_);
  for (const std::string& down : me.downstreams) {
    sent_metrics_[down] = {&metrics->counter(Metric::transport_messages_sent, {{"peer", down}}),
                           &metrics->counter(Metric::transport_sent_bytes, {{"peer", down}})};
  }
  for (const UpstreamLink& up : me.upstreams) {
    received_metrics_[up.federate] = {
        &metrics->counter(Metric::transport_messages_received, {{"peer", up.federate}}),
        &metrics->counter(Metric::transport_received_bytes, {{"peer", up.federate}})};
  }
  drops_.set_observer([metrics](const std::string& peer, transport::DropReason reason) {
    metrics
        ->counter(Metric::transport_invalid_messages,
                  {{"peer", peer}, {"reason", transport::drop_reason_name(reason)}})
        .Increment();
  });
}

ReactorFederate::~ReactorFederate() {
  client_.reset();
  outputs_.clear();
  data_.close();
  zap_.reset();
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

WireTag ReactorFederate::join(std::chrono::milliseconds timeout) {
  FederateOptions options = FederateOptions::from_spec(spec_, id_);
  options.data_endpoint =
      options_.advertised_endpoint.empty() ? data_endpoint_ : options_.advertised_endpoint;
  options.answer_stop_requests = false;  // answered with the scheduler's floor (handle_stop)
  client_ = std::make_unique<FederateClient>(context_, options);
  const ControlMessage start = client_->join(timeout);
  for (const std::string& down : spec_.find(id_)->downstreams) {
    std::string endpoint;
    for (const auto& [id, address] : start.endpoints) {
      if (id == down) endpoint = address;
    }
    zmq::socket_t socket(context_, zmq::socket_type::dealer);
    socket.set(zmq::sockopt::routing_id, id_);
    socket.set(zmq::sockopt::sndhwm, 0);
    socket.set(zmq::sockopt::linger, 2000);
    if (spec_.keys_dir) {
      transport::make_curve_client(
          socket, transport::read_key_pair(*spec_.keys_dir, id_),
          transport::read_key_pair(*spec_.keys_dir, down, true).public_key);
    }
    socket.connect(endpoint);
    outputs_.emplace(down, std::move(socket));
  }
  validator_.set_completed_tag(transport::previous_tag(start.tag));
  return start.tag;
}

void ReactorFederate::bind_input(const std::string& from, std::uint32_t port,
                                 reactors::PhysicalAction<std::string>& action) {
  if (cycle_link_from(from)) {
    throw FederationConfigError(
        "federate '" + id_ + "': the input from '" + from +
        "' is on a zero-delay cycle across federates, and an input bound with bind_input() "
        "cannot wait inside a tag for its value or ABSENT; receive it with a NetworkReceiver, or "
        "give a connection of the cycle a delay");
  }
  inputs_[{from, port}] = &action;
  validator_.allow_port(from, port);
}

bool ReactorFederate::cycle_link_from(const std::string& from) const {
  return spec_.zero_delay_cycle_link(from, id_);
}

std::size_t ReactorFederate::bind_cycle_input(const std::string& from, std::uint32_t port,
                                              reactors::PhysicalAction<std::string>& action,
                                              reactors::Reaction& deliver) {
  validator_.allow_port(from, port);
  cycle_delivers_.push_back(&deliver);
  return cycle_inputs_.add(from, port, action);
}

void ReactorFederate::bind_output(const std::string& to, std::uint32_t port,
                                  reactors::Reaction& sender) {
  if (!spec_.zero_delay_cycle_link(id_, to)) return;
  CycleOutput output;
  output.to = to;
  output.port = port;
  output.sender = &sender;
  cycle_outputs_.push_back(std::move(output));
}

std::optional<std::string> ReactorFederate::await_cycle_input(std::size_t index,
                                                              const reactors::Tag& tag,
                                                              std::size_t level) {
  const WireTag at = to_wire_tag(tag);
  if (!cycle_inputs_.known(index, at)) {
    // Whatever this federate sends on the cycle before this reaction is settled: tell the
    // downstreams now, since what they send back may be what this reaction waits for.
    push({Command::kAbsent, at, {}, 0, {}, level});
  }
  return cycle_inputs_.take(index, at);
}

void ReactorFederate::send_absents(const WireTag& tag, std::size_t below_level) {
  for (CycleOutput& output : cycle_outputs_) {
    if (output.level >= below_level || output.status_through >= tag) continue;
    const auto socket = outputs_.find(output.to);
    if (socket == outputs_.end()) continue;
    output.status_through = tag;
    transport::WireHeader header;
    header.tag = tag;
    header.from = id_;
    header.port = output.port;
    header.kind = transport::MessageKind::kPortAbsent;
    if (in_transit_.size() == kMaxInTransitPerLtc) flush_completed(std::nullopt);
    in_transit_.emplace_back(output.to, tag);  // counted by grants like a data message
    transport::send_wire_message(socket->second, header, {});
  }
}

void ReactorFederate::order_cycle_ports(reactors::Environment& env) {
  if (cycle_delivers_.empty() || cycle_outputs_.empty()) return;
  if (env.assembled()) {
    throw FederationError("federate '" + id_ +
                          "': its environment was assembled before run(); a zero-delay cycle "
                          "across federates needs run() to order its network ports first");
  }
  // Own cycle outputs first, so that this federate never waits for a cycle input before it has
  // sent what does not depend on it (hints that would make a cycle are skipped).
  for (reactors::Reaction* deliver : cycle_delivers_) {
    for (const CycleOutput& output : cycle_outputs_) env.order_before(*output.sender, *deliver);
  }
}

void ReactorFederate::push(Command command) {
  bool was_empty = false;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    was_empty = commands_.empty();
    commands_.push_back(std::move(command));
  }
  // One wake-up per batch: the network thread reads the eventfd before it takes the whole
  // queue, so a command pushed onto a non-empty queue is taken with the ones before it.
  if (!was_empty) return;
  const std::uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
}

void ReactorFederate::send(const std::string& to, std::uint32_t port, const reactors::Tag& tag,
                           std::string bytes) {
  ConnectionDelay delay;
  if (const FederateSpec* destination = spec_.find(to)) {
    for (const UpstreamLink& link : destination->upstreams) {
      if (link.federate == id_) delay = link.delay;
    }
  }
  push({Command::kSend, transport::delayed(to_wire_tag(tag), delay), to, port, std::move(bytes)});
}

void ReactorFederate::drain_commands() {
  std::uint64_t ignored = 0;
  (void)!::read(wake_fd_, &ignored, sizeof ignored);
  std::deque<Command> batch;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    batch.swap(commands_);
  }
  for (Command& command : batch) {
    switch (command.kind) {
      case Command::kNet:
        announce(command.tag);
        break;
      case Command::kStop:
        propose_stop(command.tag);
        break;
      case Command::kAbsent:
        send_absents(command.tag, command.level);
        break;
      case Command::kLtc:
        // Every cycle output not written at the completed tag is absent there.
        send_absents(command.tag, static_cast<std::size_t>(-1));
        completed_tag_ = command.tag;
        ltc_pending_ = true;
        validator_.set_completed_tag(command.tag);
        for (auto& [upstream, tags] : received_) {
          while (!tags.empty() && tags.front() <= command.tag) {
            tags.pop_front();
            ++completed_[upstream];
          }
        }
        break;
      case Command::kSend: {
        const auto socket = outputs_.find(command.to);
        if (socket == outputs_.end()) break;
        transport::WireHeader header;
        header.tag = command.tag;
        header.from = id_;
        header.port = command.port;
        // Reported with the LTC that follows (PROTOCOL.md §3.2).
        if (in_transit_.size() == kMaxInTransitPerLtc) flush_completed(std::nullopt);
        in_transit_.emplace_back(command.to, command.tag);
        const std::size_t size = command.bytes.size();
        transport::send_wire_message(socket->second, header,
                                     {transport::Payload::copy_of(command.bytes.data(), size)});
        for (CycleOutput& output : cycle_outputs_) {
          if (output.to == command.to && output.port == command.port) {
            output.status_through = std::max(output.status_through, command.tag);
          }
        }
        if (const auto counters = sent_metrics_.find(command.to); counters != sent_metrics_.end()) {
          counters->second.messages->Increment();
          counters->second.bytes->Increment(static_cast<double>(size));
        }
        break;
      }
    }
  }
  // No LTC at the end of the batch: the scheduler announces its next tag right after every tag
  // it completes (reactors/federation.hpp step 2), and announce() sends both in one frame.
}

void ReactorFederate::announce(const WireTag& next) {
  // The data messages sent so far are reported first, in the same frame: a NET above a data
  // message the coordinator does not know of would let it grant the receiver past it.
  if (ltc_pending_ || !in_transit_.empty()) {
    flush_completed(next);
    return;
  }
  if (next == announced_) return;
  // A tag that only a received message asks for, below the next tag the coordinator has: the
  // sender's in-transit report already lowers this federate's bound to it and gets it its grant
  // (PROTOCOL.md §3.3). Members of a zero-delay cycle still send it: their PTAG rule reads it.
  if (next < announced_ && asked_by_input(next) && !on_zero_delay_cycle_) return;
  client_->send_next_event(next);
  announced_ = next;
}

bool ReactorFederate::asked_by_input(const WireTag& tag) const {
  return std::any_of(received_.begin(), received_.end(), [&](const auto& entry) {
    return std::binary_search(entry.second.begin(), entry.second.end(), tag);
  });
}

void ReactorFederate::flush_completed(std::optional<WireTag> next) {
  if (!ltc_pending_ && in_transit_.empty() && !next) return;
  // A completed tag without the next one leaves the coordinator no next tag (PROTOCOL.md §3.2).
  if (next) {
    announced_ = *next;
  } else if (ltc_pending_) {
    announced_ = transport::kNever;
  }
  client_->send_completed(completed_tag_, std::move(in_transit_), next);
  in_transit_.clear();
  ltc_pending_ = false;
}

void ReactorFederate::receive_data() {
  while (true) {
    transport::ReceiveResult result =
        transport::receive_wire_message(data_, validator_, drops_, zmq::recv_flags::dontwait);
    if (!result.received) return;
    if (result.error != transport::DropReason::kNone) continue;
    const transport::WireHeader& header = result.message.header;
    const std::optional<std::size_t> cycle_input = cycle_inputs_.find(header.from, header.port);
    const auto input = inputs_.find({header.from, header.port});
    if (!cycle_input && input == inputs_.end()) continue;
    // Values and ABSENTs alike count towards the grants' message counts.
    received_[header.from].push_back(header.tag);
    if (header.kind == transport::MessageKind::kPortAbsent) {
      if (cycle_input) cycle_inputs_.on_arrival(*cycle_input, header.tag, std::nullopt);
      continue;
    }
    std::string bytes;
    for (const zmq::message_t& frame : result.message.payloads) {
      bytes.append(static_cast<const char*>(frame.data()), frame.size());
    }
    if (const auto counters = received_metrics_.find(header.from);
        counters != received_metrics_.end()) {
      counters->second.messages->Increment();
      counters->second.bytes->Increment(static_cast<double>(bytes.size()));
    }
    if (cycle_input) {
      cycle_inputs_.on_arrival(*cycle_input, header.tag, std::move(bytes));
    } else {
      input->second->schedule_at(to_reactor_tag(header.tag), std::move(bytes));
    }
  }
}

bool ReactorFederate::counts_met(const std::map<std::string, std::uint64_t>& counts,
                                 const WireTag& through) {
  for (const auto& [upstream, expected] : counts) {
    const std::deque<WireTag>& tags = received_[upstream];
    const auto arrived = static_cast<std::uint64_t>(
        std::upper_bound(tags.begin(), tags.end(), through) - tags.begin());
    if (completed_[upstream] + arrived < expected) return false;  // data still in flight
  }
  return true;
}

void ReactorFederate::update_grant(reactors::Environment& env) {
  // Called after receive_data(): every value counted here was scheduled before the grant.
  const WireTag granted = client_->granted();
  if (granted > tag_applied_ && counts_met(client_->granted_counts(), granted)) {
    tag_applied_ = granted;
    cycle_inputs_.known_through(granted);
    if (granted > granted_to_env_) {
      granted_to_env_ = granted;
      env.grant(to_reactor_tag(granted));
    }
  }
  // PTAG(g): nothing more arrives below g; at g only the cycle's outputs may. The tag may run,
  // its cycle inputs' deliver reactions waiting inside it for their status (§3.7).
  const WireTag provisional = client_->provisional();
  if (provisional <= granted_to_env_) return;
  const WireTag below = transport::previous_tag(provisional);
  if (!counts_met(client_->provisional_counts(), below)) return;
  cycle_inputs_.known_through(below);
  cycle_inputs_.provisional(provisional);  // the deliver reactions run at g, before the grant
  granted_to_env_ = provisional;
  env.grant(to_reactor_tag(provisional));
}

void ReactorFederate::propose_stop(const WireTag& floor) {
  if (stop_tag_) return;  // decided already
  if (asked_) {
    client_->send_stop_reply(std::max(*asked_, floor));
    asked_.reset();
  } else if (!proposed_) {
    client_->send_stop_request(floor);
  }
  proposed_ = true;
}

void ReactorFederate::handle_stop(reactors::Environment& env) {
  if (const std::optional<WireTag> asked = client_->take_stop_request()) {
    // Another federate proposed a stop: ask the scheduler for its floor (it calls the
    // stop_requested hook at its next advance and holds there); the reply goes in propose_stop.
    asked_ = asked;
    env.request_stop();
  }
  if (!stop_applied_ && client_->stop_tag()) {
    stop_applied_ = true;
    stop_tag_ = client_->stop_tag();
    stop_proposal_ = client_->stop_proposal();
    env.stop_at(to_reactor_tag(*stop_tag_));
  }
}

void ReactorFederate::network_loop(reactors::Environment& env) {
  std::array<zmq::pollitem_t, 3> items{{{client_->socket().handle(), 0, ZMQ_POLLIN, 0},
                                        {data_.handle(), 0, ZMQ_POLLIN, 0},
                                        {nullptr, wake_fd_, ZMQ_POLLIN, 0}}};
  try {
    while (!done_.load(std::memory_order_acquire)) {
      zmq::poll(items.data(), items.size(), std::chrono::milliseconds(20));
      drain_commands();
      receive_data();
      client_->poll(std::chrono::milliseconds(0));
      update_grant(env);
      handle_stop(env);
    }
    drain_commands();  // the last tag's outputs and LTC
    flush_completed(std::nullopt);
  } catch (const std::exception& e) {
    error_ = e.what();
    cycle_inputs_.abort();  // a deliver reaction waiting for a cycle input gives up
    // The run is over: stop now, without waiting for grants or a stop decision.
    env.stop_without_grant();
  }
}

void ReactorFederate::run(reactors::Environment& env) {
  if (!client_) throw FederationError("federate '" + id_ + "': run() before join()");
  reactors::FederationHooks hooks;
  hooks.next_event_tag = [this](reactors::Tag next) {
    push({Command::kNet, to_wire_tag(next), {}, 0, {}});
  };
  hooks.tag_complete = [this](reactors::Tag tag) {
    push({Command::kLtc, to_wire_tag(tag), {}, 0, {}});
  };
  hooks.stop_requested = [this](reactors::Tag proposed) {
    push({Command::kStop, to_wire_tag(proposed), {}, 0, {}});
  };
  env.enable_tag_barrier(reactors::Tag::never());
  env.set_federation_hooks(std::move(hooks));
  order_cycle_ports(env);
  env.assemble();
  for (CycleOutput& output : cycle_outputs_) output.level = output.sender->level();
  std::thread network([this, &env] { network_loop(env); });
  env.run();
  done_.store(true, std::memory_order_release);
  network.join();
  if (!error_.empty()) throw FederationError(error_);
  client_->resign();
}

std::optional<reactors::Tag> ReactorFederate::stop_proposal() const {
  if (!stop_proposal_) return std::nullopt;
  return to_reactor_tag(*stop_proposal_);
}

std::optional<reactors::Tag> ReactorFederate::granted_stop_tag() const {
  if (!stop_tag_) return std::nullopt;
  return to_reactor_tag(*stop_tag_);
}

NetworkReceiver::NetworkReceiver(std::string name, reactors::Environment& env,
                                 ReactorFederate& federate, const std::string& from,
                                 std::uint32_t port)
    : Reactor(std::move(name), env) {
  reactors::Reaction& deliver = reaction("deliver").triggers(received).effects(out);
  if (!federate.cycle_link_from(from)) {
    federate.bind_input(from, port, received);
    deliver.body([this] { out.set(received.get()); });
    return;
  }
  // On a zero-delay cycle: the value (or its absence) comes from the federate, maybe later in
  // the tag; the action only makes this reaction run at the tag.
  const std::size_t index = federate.bind_cycle_input(from, port, received, deliver);
  deliver.body([this, &federate, &deliver, index] {
    if (std::optional<std::string> value =
            federate.await_cycle_input(index, tag(), deliver.level())) {
      out.set(std::move(*value));
    }
  });
}

NetworkSender::NetworkSender(std::string name, reactors::Environment& env,
                             ReactorFederate& federate, std::string to, std::uint32_t port)
    : Reactor(std::move(name), env) {
  reactors::Reaction& sender = reaction("send").triggers(in);
  federate.bind_output(to, port, sender);
  sender.body(
      [this, &federate, to = std::move(to), port] { federate.send(to, port, tag(), in.get()); });
}

}  // namespace tagflow::coordinator
