#include "nodes/message_text.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <vector>

#include "nodes/messages.hpp"

namespace tagflow::nodes {
namespace {

/// One field of a message, its elements as numbers (floats keep their bits in `bits`).
struct Field {
  std::string name;
  std::vector<double> values;
  std::vector<std::uint32_t> bits;  // float32 fields only
};

template <class T>
Field field(const std::string& name, const std::vector<T>& values) {
  Field f{name, {}, {}};
  f.values.reserve(values.size());
  for (const T& v : values) {
    f.values.push_back(static_cast<double>(v));
    if constexpr (std::is_same_v<T, float>) {
      std::uint32_t bits = 0;
      std::memcpy(&bits, &v, sizeof bits);
      f.bits.push_back(bits);
    }
  }
  return f;
}

template <class T>
Field scalar(const std::string& name, T value) {
  return field(name, std::vector<T>{value});
}

struct Decoded {
  std::string type;  // "" when the bytes do not decode
  std::string error;
  std::vector<Field> fields;
};

void add_batch(std::vector<Field>& out, const std::string& prefix, const SampleBatchMessage& m) {
  out.push_back(field(prefix + "keys", m.keys));
  out.push_back(field(prefix + "observations", m.observations));
  out.push_back(field(prefix + "observations_u8", m.observations_u8));
  out.push_back(field(prefix + "actions", m.actions));
  out.push_back(field(prefix + "rewards", m.rewards));
  out.push_back(field(prefix + "terminated", m.terminated));
  out.push_back(field(prefix + "next_observations", m.next_observations));
  out.push_back(field(prefix + "next_observations_u8", m.next_observations_u8));
  out.push_back(field(prefix + "importance_weights", m.importance_weights));
  out.push_back(field(prefix + "weights_versions", m.weights_versions));
}

Decoded decode_fields(const std::uint8_t* data, std::size_t size) {
  Decoded d;
  if (size < 4) {
    d.error = std::to_string(size) + " bytes, too short for a message";
    return d;
  }
  const std::string magic(reinterpret_cast<const char*>(data), 4);
  std::string error;
  if (magic == "TFtr") {
    TransitionsMessage m;
    if (decode(data, size, m, &error)) {
      d.type = "Transitions (" + std::to_string(m.rows()) + " rows)";
      d.fields = {scalar("weights_version", m.weights_version),
                  field("observations", m.observations),
                  field("observations_u8", m.observations_u8),
                  field("actions", m.actions),
                  field("rewards", m.rewards),
                  field("terminated", m.terminated),
                  field("next_observations", m.next_observations),
                  field("next_observations_u8", m.next_observations_u8)};
    }
  } else if (magic == "TFsb") {
    SampleBatchList list;
    if (decode(data, size, list, &error)) {
      d.type = "SampleBatch list (" + std::to_string(list.size()) + " batches)";
      for (std::size_t i = 0; i < list.size(); ++i) {
        add_batch(d.fields, "batch[" + std::to_string(i) + "].", list[i]);
      }
    }
  } else if (magic == "TFpu") {
    PriorityUpdateMessage m;
    if (decode(data, size, m, &error)) {
      d.type = "PriorityUpdate (" + std::to_string(m.keys.size()) + " keys)";
      d.fields = {field("keys", m.keys), field("priorities", m.priorities)};
    }
  } else if (magic == "TFwt") {
    WeightsMessage m;
    if (decode(data, size, m, &error)) {
      d.type = "Weights (version " + std::to_string(m.version) + ", " +
               std::to_string(m.values.size()) + " values)";
      d.fields = {scalar("version", m.version), field("values", m.values)};
    }
  } else if (magic == "TFob") {
    ObservationBatchMessage m;
    if (decode(data, size, m, &error)) {
      d.type = "ObservationBatch (" + std::to_string(m.rows()) + " rows)";
      d.fields = {scalar("source", m.source), field("observations", m.observations),
                  field("observations_u8", m.observations_u8)};
    }
  } else if (magic == "TFac") {
    ActionBatchMessage m;
    if (decode(data, size, m, &error)) {
      d.type = "ActionBatch (" + std::to_string(m.actions.size()) + " actions)";
      d.fields = {scalar("source", m.source), scalar("weights_version", m.weights_version),
                  field("actions", m.actions)};
    }
  } else if (magic == "TFmo" || magic == "TFms") {
    AgentObservationsMessage m;
    if (decode(data, size, m, &error)) {
      d.type = "AgentObservations (" + std::to_string(m.rows()) + " rows)";
      d.fields = {scalar("source", m.source), field("agents", m.agents),
                  field("policies", m.policies), field("observations", m.observations)};
    }
  } else if (magic == "TFma") {
    AgentActionsMessage m;
    if (decode(data, size, m, &error)) {
      d.type = "AgentActions (" + std::to_string(m.rows()) + " rows)";
      d.fields = {scalar("source", m.source), field("agents", m.agents),
                  field("policies", m.policies), field("versions", m.versions),
                  field("actions", m.actions)};
    }
  } else {
    char hex[16];
    std::snprintf(hex, sizeof hex, "%02x%02x%02x%02x", data[0], data[1], data[2], data[3]);
    d.error = std::to_string(size) + " bytes of an unknown type (magic " + hex + ")";
    return d;
  }
  if (d.type.empty()) d.error = "'" + magic + "' bytes that do not decode: " + error;
  return d;
}

std::string number(const Field& f, std::size_t i) {
  char text[64];
  if (!f.bits.empty()) {
    std::snprintf(text, sizeof text, "%.9g (bits %08" PRIx32 ")", f.values[i], f.bits[i]);
  } else {
    std::snprintf(text, sizeof text, "%.17g", f.values[i]);
  }
  return text;
}

}  // namespace

std::string describe_payload(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return "ABSENT (no value at this tag)";
  const Decoded d = decode_fields(data, size);
  if (d.type.empty()) return d.error;
  std::string text = d.type + ", " + std::to_string(size) + " bytes";
  for (const Field& f : d.fields) {
    if (f.values.empty()) continue;
    text += "\n    " + f.name + " (" + std::to_string(f.values.size()) + "):";
    for (std::size_t i = 0; i < f.values.size() && i < 4; ++i) {
      char value[32];
      std::snprintf(value, sizeof value, " %.9g", f.values[i]);
      text += value;
    }
    if (f.values.size() > 4) text += " ...";
  }
  return text;
}

std::string first_difference(const std::uint8_t* a, std::size_t a_size, const std::uint8_t* b,
                             std::size_t b_size) {
  if (a_size == b_size && (a_size == 0 || std::memcmp(a, b, a_size) == 0)) {
    return "byte for byte the same";
  }
  if (a_size == 0 || b_size == 0) {
    return a_size == 0 ? "absent in the first run, a value in the second"
                       : "a value in the first run, absent in the second";
  }
  const Decoded da = decode_fields(a, a_size);
  const Decoded db = decode_fields(b, b_size);
  if (da.type.empty() || db.type.empty()) {
    return "cannot compare: " + (da.type.empty() ? da.error : db.error);
  }
  if (da.fields.size() != db.fields.size())
    return "different types: " + da.type + " and " + db.type;
  for (std::size_t f = 0; f < da.fields.size(); ++f) {
    const Field& x = da.fields[f];
    const Field& y = db.fields[f];
    if (x.name != y.name) return "different types: " + da.type + " and " + db.type;
    const std::size_t n = std::min(x.values.size(), y.values.size());
    for (std::size_t i = 0; i < n; ++i) {
      const bool same = x.bits.empty() ? x.values[i] == y.values[i] : x.bits[i] == y.bits[i];
      if (!same) {
        return x.name + "[" + std::to_string(i) + "]: " + number(x, i) + " against " + number(y, i);
      }
    }
    if (x.values.size() != y.values.size()) {
      return x.name + ": " + std::to_string(x.values.size()) + " elements against " +
             std::to_string(y.values.size());
    }
  }
  return "every decoded field is the same; the encodings differ";
}

std::string wire_port_name(std::uint32_t port) {
  static const char* const kNames[] = {"",        "transitions",  "priorities", "batches",
                                       "weights", "observations", "actions"};
  const std::uint32_t code = port >> 16U;
  if (code == 0 || code > 6) return "port " + std::to_string(port);
  return std::string(kNames[code]) + "[" + std::to_string(port & 0xffffU) + "]";
}

}  // namespace tagflow::nodes
