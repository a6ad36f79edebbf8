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

/// One field of a message: its elements exactly as sent (a float's bits, an integer's value), so
/// that two fields compare bit for bit and print without rounding.
struct Field {
  enum Type { kFloat, kSigned, kUnsigned };
  std::string name;
  Type type = kUnsigned;
  std::vector<std::uint64_t> raw;  // float: its 32 bits; signed: two's complement

  [[nodiscard]] std::string element(std::size_t i, bool with_bits) const {
    char text[64];
    switch (type) {
      case kFloat: {
        const auto bits = static_cast<std::uint32_t>(raw[i]);
        float value = 0;
        std::memcpy(&value, &bits, sizeof value);
        if (with_bits) {
          std::snprintf(text, sizeof text, "%.9g (bits %08" PRIx32 ")", static_cast<double>(value),
                        bits);
        } else {
          std::snprintf(text, sizeof text, "%.9g", static_cast<double>(value));
        }
        break;
      }
      case kSigned:
        std::snprintf(text, sizeof text, "%" PRId64, static_cast<std::int64_t>(raw[i]));
        break;
      case kUnsigned:
        std::snprintf(text, sizeof text, "%" PRIu64, raw[i]);
        break;
    }
    return text;
  }
};

template <class T>
Field field(const std::string& name, const std::vector<T>& values) {
  Field f;
  f.name = name;
  f.raw.reserve(values.size());
  if constexpr (std::is_same_v<T, float>) {
    f.type = Field::kFloat;
    for (const float v : values) {
      std::uint32_t bits = 0;
      std::memcpy(&bits, &v, sizeof bits);
      f.raw.push_back(bits);
    }
  } else if constexpr (std::is_signed_v<T>) {
    f.type = Field::kSigned;
    for (const T v : values)
      f.raw.push_back(static_cast<std::uint64_t>(static_cast<std::int64_t>(v)));
  } else {
    f.type = Field::kUnsigned;
    for (const T v : values) f.raw.push_back(static_cast<std::uint64_t>(v));
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
  out.push_back(scalar(prefix + "observation_size", m.observation_size));
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
                  scalar("observation_size", m.observation_size),
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
      d.fields = {scalar("source", m.source), scalar("observation_size", m.observation_size),
                  field("observations", m.observations),
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
      d.fields = {scalar("source", m.source), scalar("observation_size", m.observation_size),
                  field("agents", m.agents), field("policies", m.policies),
                  field("observations", m.observations)};
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
    d.error = std::to_string(size) + " bytes, unknown type (magic " + hex;
    if (std::all_of(magic.begin(), magic.end(), [](char c) { return c >= 0x20 && c < 0x7f; })) {
      d.error += ", \"" + magic + "\"";
    }
    d.error += ")";
    return d;
  }
  if (d.type.empty()) d.error = "'" + magic + "' bytes that do not decode: " + error;
  return d;
}

/// Where two byte strings first differ, for payloads whose fields cannot say it.
std::string first_differing_byte(const std::uint8_t* a, std::size_t a_size, const std::uint8_t* b,
                                 std::size_t b_size) {
  const std::size_t n = std::min(a_size, b_size);
  std::size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  char text[160];
  if (i < n) {
    std::snprintf(text, sizeof text, "byte %zu: 0x%02x against 0x%02x (%zu and %zu bytes)", i, a[i],
                  b[i], a_size, b_size);
  } else {
    std::snprintf(text, sizeof text,
                  "the same first %zu bytes; the %s run's has %zu bytes more past them", n,
                  a_size > b_size ? "first" : "second", a_size > b_size ? a_size - n : b_size - n);
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
    if (f.raw.empty()) continue;
    text += "\n    " + f.name + " (" + std::to_string(f.raw.size()) + "):";
    for (std::size_t i = 0; i < f.raw.size() && i < 4; ++i) text += " " + f.element(i, false);
    if (f.raw.size() > 4) text += " ...";
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
    return "cannot compare the fields (" + (da.type.empty() ? da.error : db.error) +
           "); the bytes differ at " + first_differing_byte(a, a_size, b, b_size);
  }
  bool same_type = da.fields.size() == db.fields.size();
  for (std::size_t f = 0; same_type && f < da.fields.size(); ++f) {
    same_type = da.fields[f].name == db.fields[f].name;
  }
  if (!same_type) return "different types: " + da.type + " and " + db.type;
  for (std::size_t f = 0; f < da.fields.size(); ++f) {
    const Field& x = da.fields[f];
    const Field& y = db.fields[f];
    const std::size_t n = std::min(x.raw.size(), y.raw.size());
    for (std::size_t i = 0; i < n; ++i) {
      if (x.raw[i] != y.raw[i]) {
        return x.name + "[" + std::to_string(i) + "]: " + x.element(i, true) + " against " +
               y.element(i, true);
      }
    }
    if (x.raw.size() != y.raw.size()) {
      return x.name + ": " + std::to_string(x.raw.size()) + " elements against " +
             std::to_string(y.raw.size());
    }
  }
  return "every decoded field is the same; the encodings differ at " +
         first_differing_byte(a, a_size, b, b_size);
}

std::string wire_port_name(std::uint32_t port) {
  static const char* const kNames[] = {"",        "transitions",  "priorities", "batches",
                                       "weights", "observations", "actions"};
  const std::uint32_t code = port >> 16U;
  if (code == 0 || code > 6) return "port " + std::to_string(port);
  return std::string(kNames[code]) + "[" + std::to_string(port & 0xffffU) + "]";
}

std::string message_cap_advice(std::uint32_t port) {
  std::string smaller;
  switch (port >> 16U) {
    case 1:  // transitions
    case 5:  // observations
    case 6:  // actions
      smaller = "fewer envs per sampler (`num_envs`; more `replicas` instead)";
      break;
    case 2:  // priorities
    case 3:  // batches
      smaller = "a smaller replay `batch_size` or `max_batches_per_call`";
      break;
    case 4:  // weights
      smaller = "a smaller network (`hidden`)";
      break;
    default:
      smaller = "smaller values";
      break;
  }
  return "the cluster file asks for values larger than one message between processes carries: " +
         smaller +
         ", or both ends in one process (a `process:` group, configs/README.md, or "
         "`--placement single`)";
}

}  // namespace tagflow::nodes
