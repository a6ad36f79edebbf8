#include "hosts/reactor/wire_ports.hpp"

#include <cstdio>
#include <map>
#include <stdexcept>

namespace tagflow::hosts {
namespace {

using nodes::ActionBatchMessage;
using nodes::Bytes;
using nodes::ObservationBatchMessage;
using nodes::PriorityUpdateMessage;
using nodes::SampleBatchMessage;
using nodes::TransitionsMessage;
using nodes::WeightsMessage;

using SampleBatchList = std::vector<SampleBatchMessage>;

Bytes encode_value(const SampleBatchList& value) { return encode_batch_list(value); }
template <typename T>
Bytes encode_value(const T& value) {
  return encode(value);
}
bool decode_value(const Bytes& bytes, SampleBatchList& out, std::string* error) {
  return decode_batch_list(bytes, out, error);
}
template <typename T>
bool decode_value(const Bytes& bytes, T& out, std::string* error) {
  return decode(bytes, out, error);
}

template <typename T>
class WireReceiver : public reactors::Reactor {
 public:
  reactors::PhysicalAction<std::string> received{"received", this};
  reactors::Output<reactors::Shared<T>> out{"out", this};

  WireReceiver(std::string name, reactors::Environment& env, coordinator::ReactorFederate& federate,
               const std::string& from, std::uint32_t port)
      : reactors::Reactor(std::move(name), env) {
    federate.bind_input(from, port, received);
    reaction("deliver").triggers(received).effects(out).body([this] {
      const std::string& text = received.get();
      const Bytes bytes(text.begin(), text.end());
      T value;
      std::string error;
      if (!decode_value(bytes, value, &error)) {
        std::fprintf(stderr, "%s: dropped a value that does not decode: %s\n", this->name().c_str(),
                     error.c_str());
        return;
      }
      out.set(reactors::make_shared_value<T>(std::move(value)));
    });
  }
};

template <typename T>
class WireSender : public reactors::Reactor {
 public:
  reactors::Input<reactors::Shared<T>> in{"in", this};

  WireSender(std::string name, reactors::Environment& env, coordinator::ReactorFederate& federate,
             std::string to, std::uint32_t port, std::optional<std::chrono::nanoseconds> extra)
      : reactors::Reactor(std::move(name), env) {
    reaction("send").triggers(in).body([this, &federate, to = std::move(to), port, extra] {
      const Bytes bytes = encode_value(*in.get());
      const reactors::Tag at = extra ? tag().delayed(*extra) : tag();
      federate.send(to, port, at, std::string(bytes.begin(), bytes.end()));
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
reactors::PortBase& by_type(const std::string& port, Fn&& fn) {
  if (port == "transitions") return fn(static_cast<TransitionsMessage*>(nullptr));
  if (port == "priorities") return fn(static_cast<PriorityUpdateMessage*>(nullptr));
  if (port == "batches") return fn(static_cast<SampleBatchList*>(nullptr));
  if (port == "weights") return fn(static_cast<WeightsMessage*>(nullptr));
  if (port == "observations") return fn(static_cast<ObservationBatchMessage*>(nullptr));
  if (port == "actions") return fn(static_cast<ActionBatchMessage*>(nullptr));
  throw std::invalid_argument("no wire encoding for port '" + port + "'");
}

void put_u64(Bytes& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
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
                                   const std::string& from) {
  const std::uint32_t port = wire_port(input_port, channel);
  const std::string name = "wire_in_" + input_port + "_" + std::to_string(channel);
  return by_type(input_port, [&](auto* type) -> reactors::PortBase& {
    using T = std::remove_pointer_t<decltype(type)>;
    return env.add<WireReceiver<T>>(name, federate, from, port).out;
  });
}

reactors::PortBase& add_wire_output(reactors::Environment& env,
                                    coordinator::ReactorFederate& federate,
                                    const std::string& output_port, const std::string& to,
                                    const std::string& input_port, std::size_t channel,
                                    std::optional<std::chrono::nanoseconds> extra_delay) {
  const std::uint32_t port = wire_port(input_port, channel);
  const std::string name =
      "wire_out_" + output_port + "_" + to + "_" + input_port + "_" + std::to_string(channel);
  return by_type(output_port, [&](auto* type) -> reactors::PortBase& {
    using T = std::remove_pointer_t<decltype(type)>;
    return env.add<WireSender<T>>(name, federate, to, port, extra_delay).in;
  });
}

Bytes encode_batch_list(const std::vector<SampleBatchMessage>& batches) {
  Bytes out;
  const auto count = static_cast<std::uint32_t>(batches.size());
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(count >> (8 * i)));
  for (const SampleBatchMessage& b : batches) {
    const Bytes one = encode(b);
    put_u64(out, one.size());
    out.insert(out.end(), one.begin(), one.end());
  }
  return out;
}

bool decode_batch_list(const Bytes& bytes, std::vector<SampleBatchMessage>& out,
                       std::string* error) {
  out.clear();
  const auto fail = [error](const std::string& why) {
    if (error != nullptr) *error = "batch list: " + why;
    return false;
  };
  if (bytes.size() < 4) return fail("truncated count");
  std::uint32_t count = 0;
  for (int i = 0; i < 4; ++i) count |= static_cast<std::uint32_t>(bytes[i]) << (8 * i);
  std::size_t at = 4;
  for (std::uint32_t b = 0; b < count; ++b) {
    if (bytes.size() - at < 8) return fail("truncated length of batch " + std::to_string(b));
    std::uint64_t size = 0;
    for (int i = 0; i < 8; ++i) size |= static_cast<std::uint64_t>(bytes[at + i]) << (8 * i);
    at += 8;
    if (bytes.size() - at < size) return fail("truncated batch " + std::to_string(b));
    const Bytes one(bytes.begin() + static_cast<std::ptrdiff_t>(at),
                    bytes.begin() + static_cast<std::ptrdiff_t>(at + size));
    at += size;
    SampleBatchMessage batch;
    std::string why;
    if (!decode(one, batch, &why)) return fail("batch " + std::to_string(b) + ": " + why);
    out.push_back(std::move(batch));
  }
  if (at != bytes.size()) return fail("trailing bytes");
  return true;
}

}  // namespace tagflow::hosts
