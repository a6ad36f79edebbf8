#include "hosts/reactor/wire_ports.hpp"

#include "hosts/reactor/federate_checkpoint.hpp"

#include <cstdio>
#include <map>
#include <stdexcept>

namespace tagflow::hosts {
namespace {

using nodes::ActionBatchMessage;
using nodes::AgentActionsMessage;
using nodes::AgentObservationsMessage;
using nodes::Encoded;
using nodes::ObservationBatchMessage;
using nodes::PriorityUpdateMessage;
using nodes::SampleBatchList;
using nodes::TransitionsMessage;
using nodes::WeightsMessage;

template <typename T>
class WireReceiver : public reactors::Reactor {
 public:
  reactors::PhysicalAction<transport::Payload> received{"received", this};
  reactors::Output<Encoded<T>> out{"out", this};

  WireReceiver(std::string name, reactors::Environment& env, coordinator::ReactorFederate& federate,
               const std::string& from, std::uint32_t port, std::string input_port,
               nodes::NodeMetrics* metrics)
      : reactors::Reactor(std::move(name), env) {
    federate.bind_input(from, port, received);
    reaction("deliver").triggers(received).effects(out).body(
        [this, from, input_port = std::move(input_port), metrics] {
          std::string error;
          Encoded<T> value = nodes::decode_encoded<T>(received.get(), &error);
          if (!value) {
            if (metrics != nullptr) metrics->add_rejected_input(input_port);
            if (!logged_) {
              logged_ = true;
              std::fprintf(stderr,
                           "%s: dropped a value from '%s' that does not decode: %s (further ones "
                           "on this input are counted, not logged)\n",
                           this->name().c_str(), from.c_str(), error.c_str());
            }
            return;
          }
          out.set(std::move(value));
        });
  }

 private:
  bool logged_ = false;
};

template <typename T>
class WireSender : public reactors::Reactor {
 public:
  reactors::Input<Encoded<T>> in{"in", this};

  WireSender(std::string name, reactors::Environment& env, coordinator::ReactorFederate& federate,
             std::string to, std::uint32_t port, std::optional<std::chrono::nanoseconds> extra,
             FederateCheckpoint* checkpoint)
      : reactors::Reactor(std::move(name), env) {
    reaction("send").triggers(in).body(
        [this, &federate, to = std::move(to), port, extra, checkpoint] {
          const reactors::Tag at = extra ? tag().delayed(*extra) : tag();
          const transport::Payload& bytes = in.get()->bytes();  // the writer's encoding, shared
          federate.send(to, port, at, bytes);
          if (checkpoint != nullptr) {
            checkpoint->record_sent(to, port, tag(), federate.arrival_tag(to, at), bytes);
          }
        });
  }
};

const std::map<std::string, std::uint32_t>& port_codes() {
  static const std::map<std::string, std::uint32_t> codes = {{"transitions", 1},  {"priorities", 2},
                                                             {"batches", 3},      {"weights", 4},
                                                             {"observations", 5}, {"actions", 6}};
  return codes;
}

template <typename Fn>
reactors::PortBase& by_type(const std::string& port, bool agents, Fn&& fn) {
  if (agents && port == "observations") return fn(static_cast<AgentObservationsMessage*>(nullptr));
  if (agents && port == "actions") return fn(static_cast<AgentActionsMessage*>(nullptr));
  if (port == "transitions" || port == "experience") {
    return fn(static_cast<TransitionsMessage*>(nullptr));  // experience: inference → replay
  }
  if (port == "priorities") return fn(static_cast<PriorityUpdateMessage*>(nullptr));
  if (port == "batches") return fn(static_cast<SampleBatchList*>(nullptr));
  if (port == "weights") return fn(static_cast<WeightsMessage*>(nullptr));
  if (port == "observations") return fn(static_cast<ObservationBatchMessage*>(nullptr));
  if (port == "actions") return fn(static_cast<ActionBatchMessage*>(nullptr));
  throw std::invalid_argument("no wire encoding for port '" + port + "'");
}

}  // namespace

std::uint32_t wire_port(const std::string& input_port, std::size_t channel) {
  const auto it = port_codes().find(input_port);
  if (it == port_codes().end())
    throw std::invalid_argument("no wire port for '" + input_port + "'");
  if (channel > 0xFFFF) throw std::invalid_argument("more than 65536 channels on " + input_port);
  return (it->second << 16) | static_cast<std::uint32_t>(channel);
}

reactors::PortBase& add_wire_input(reactors::Environment& env,
                                   coordinator::ReactorFederate& federate,
                                   const std::string& input_port, std::size_t channel,
                                   const std::string& from, bool agents,
                                   nodes::NodeMetrics* metrics) {
  const std::uint32_t port = wire_port(input_port, channel);
  const std::string name = "wire_in_" + input_port + "_" + std::to_string(channel);
  return by_type(input_port, agents, [&](auto* type) -> reactors::PortBase& {
    using T = std::remove_pointer_t<decltype(type)>;
    return env.add<WireReceiver<T>>(name, federate, from, port, input_port, metrics).out;
  });
}

reactors::PortBase& add_wire_output(reactors::Environment& env,
                                    coordinator::ReactorFederate& federate,
                                    const std::string& output_port, const std::string& to,
                                    const std::string& input_port, std::size_t channel,
                                    std::optional<std::chrono::nanoseconds> extra_delay,
                                    bool agents, FederateCheckpoint* checkpoint) {
  const std::uint32_t port = wire_port(input_port, channel);
  const std::string name =
      "wire_out_" + output_port + "_" + to + "_" + input_port + "_" + std::to_string(channel);
  return by_type(output_port, agents, [&](auto* type) -> reactors::PortBase& {
    using T = std::remove_pointer_t<decltype(type)>;
    return env.add<WireSender<T>>(name, federate, to, port, extra_delay, checkpoint).in;
  });
}

}  // namespace tagflow::hosts
