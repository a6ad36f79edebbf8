#include "coordinator/reactor_federate.hpp"

#include <algorithm>
#include <array>

#include <sys/eventfd.h>
#include <unistd.h>

#include "coordinator/data_socket.hpp"
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

ReactorFederate::ReactorFederate(const FederationSpec& spec, std::string id)
    : spec_(spec), id_(std::move(id)), context_(1), data_(context_, zmq::socket_type::router) {
  const FederateSpec* me = spec_.find(id_);
  if (me == nullptr) throw FederationConfigError("federate '" + id_ + "' is not in the federation");
  zap_ = prepare_data_socket(context_, data_, validator_.policy(), spec_, *me);
  data_.bind("tcp://127.0.0.1:*");
  for (const UpstreamLink& up : me->upstreams) completed_[up.federate] = 0;
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
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
  options.data_endpoint = data_.get(zmq::sockopt::last_endpoint);
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
        client_->send_next_event(command.tag);
        scheduler_started_ = true;
        break;
      case Command::kLtc:
        client_->send_completed(command.tag);
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
        client_->send_in_transit(command.to, command.tag);
        transport::send_wire_message(
            socket->second, header,
            {transport::Payload::copy_of(command.bytes.data(), command.bytes.size())});
        break;
      }
    }
  }
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
    received_[header.from].push_back(header.tag);
    input->second->schedule_at(to_reactor_tag(header.tag), std::move(bytes));
  }
}

void ReactorFederate::update_grant(reactors::Environment& env) {
  // Environment::run() sets the scheduler's grant to the initial one when it starts, so a grant
  // given earlier would be lost: wait for the scheduler's first NET, sent once it runs.
  if (!scheduler_started_) return;
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
      if (const auto& stop = client_->stop_tag()) env.stop_at(to_reactor_tag(*stop));
    }
    drain_commands();  // the last tag's outputs and LTC
  } catch (const std::exception& e) {
    error_ = e.what();
    // The run is over: stop, and lift the barrier so the scheduler can reach the stop tag.
    env.request_stop();
    env.grant(reactors::Tag::forever());
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
