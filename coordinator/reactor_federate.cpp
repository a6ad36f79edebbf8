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
  inputs_[{from, port}] = &action;
  validator_.allow_port(from, port);
}

void ReactorFederate::push(Command command) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    commands_.push_back(std::move(command));
  }
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
        // Report the data messages sent so far first: a NET above a data message the
        // coordinator does not know of would let it grant the receiver past that message.
        flush_completed();
        client_->send_next_event(command.tag);
        break;
      case Command::kStop:
        propose_stop(command.tag);
        break;
      case Command::kLtc:
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
        if (in_transit_.size() == kMaxInTransitPerLtc) flush_completed();
        in_transit_.emplace_back(command.to, command.tag);
        const std::size_t size = command.bytes.size();
        transport::send_wire_message(socket->second, header,
                                     {transport::Payload::copy_of(command.bytes.data(), size)});
        if (const auto counters = sent_metrics_.find(command.to); counters != sent_metrics_.end()) {
          counters->second.messages->Increment();
          counters->second.bytes->Increment(static_cast<double>(size));
        }
        break;
      }
    }
  }
  flush_completed();  // one LTC per batch, with this batch's in-transit reports
}

void ReactorFederate::flush_completed() {
  if (!ltc_pending_ && in_transit_.empty()) return;
  client_->send_completed(completed_tag_, std::move(in_transit_));
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
    const auto input = inputs_.find({header.from, header.port});
    if (input == inputs_.end()) continue;
    std::string bytes;
    for (const zmq::message_t& frame : result.message.payloads) {
      bytes.append(static_cast<const char*>(frame.data()), frame.size());
    }
    if (const auto counters = received_metrics_.find(header.from);
        counters != received_metrics_.end()) {
      counters->second.messages->Increment();
      counters->second.bytes->Increment(static_cast<double>(bytes.size()));
    }
    received_[header.from].push_back(header.tag);
    input->second->schedule_at(to_reactor_tag(header.tag), std::move(bytes));
  }
}

void ReactorFederate::update_grant(reactors::Environment& env) {
  // Called after receive_data(): every value counted here was scheduled before the grant.
  const WireTag granted = client_->granted();
  if (granted > granted_to_env_) {
    for (const auto& [upstream, expected] : client_->granted_counts()) {
      const std::deque<WireTag>& tags = received_[upstream];
      const auto arrived = static_cast<std::uint64_t>(
          std::upper_bound(tags.begin(), tags.end(), granted) - tags.begin());
      if (completed_[upstream] + arrived < expected) return;  // data still in flight
    }
    granted_to_env_ = granted;
    env.grant(to_reactor_tag(granted));
  }
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
  } catch (const std::exception& e) {
    error_ = e.what();
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
  env.assemble();
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
  federate.bind_input(from, port, received);
  reaction("deliver").triggers(received).effects(out).body([this] { out.set(received.get()); });
}

NetworkSender::NetworkSender(std::string name, reactors::Environment& env,
                             ReactorFederate& federate, std::string to, std::uint32_t port)
    : Reactor(std::move(name), env) {
  reaction("send").triggers(in).body(
      [this, &federate, to = std::move(to), port] { federate.send(to, port, tag(), in.get()); });
}

}  // namespace tagflow::coordinator
