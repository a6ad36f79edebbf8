#include "nodes/gateway/gateway_protocol.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>

#include <msgpack.hpp>

namespace tagflow::gateway {
namespace {

constexpr std::size_t kMaxFields = 16;
constexpr std::size_t kMaxStringChars = 64;

struct Failure {
  std::string code, reason;
};

const msgpack::object* field(const msgpack::object_map& map, const char* key) {
  for (std::uint32_t i = 0; i < map.size; ++i) {
    const msgpack::object& k = map.ptr[i].key;
    if (k.type == msgpack::type::STR && k.via.str.size == std::strlen(key) &&
        std::memcmp(k.via.str.ptr, key, k.via.str.size) == 0) {
      return &map.ptr[i].val;
    }
  }
  return nullptr;
}

bool read_uint(const msgpack::object& o, std::uint64_t& out) {
  if (o.type != msgpack::type::POSITIVE_INTEGER) return false;
  out = o.via.u64;
  return true;
}

/// An agent key: a non-negative integer or its decimal string.
std::optional<std::uint64_t> agent_key(const msgpack::object& o) {
  if (o.type == msgpack::type::POSITIVE_INTEGER) return o.via.u64;
  if (o.type != msgpack::type::STR || o.via.str.size == 0 || o.via.str.size > 9)
    return std::nullopt;
  std::uint64_t value = 0;
  for (std::uint32_t i = 0; i < o.via.str.size; ++i) {
    const char c = o.via.str.ptr[i];
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return value;
}

std::uint32_t checked_agent(const msgpack::object& key, const RequestShape& shape) {
  const std::optional<std::uint64_t> agent = agent_key(key);
  if (!agent) throw Failure{"malformed", "an agent key that is not an agent index"};
  if (*agent >= shape.num_agents) {
    throw Failure{"unknown_agent", "no agent " + std::to_string(*agent) + " (the env has " +
                                       std::to_string(shape.num_agents) + ")"};
  }
  return static_cast<std::uint32_t>(*agent);
}

/// Appends `count` finite floats from a bin (float32 little-endian) or an array of numbers.
void read_floats(const msgpack::object& o, std::size_t count, const std::string& what,
                 std::vector<float>& out) {
  const std::size_t start = out.size();
  if (o.type == msgpack::type::BIN) {
    if (o.via.bin.size != count * sizeof(float)) {
      const std::string expected = "expected " + std::to_string(count) + " floats (" +
                                   std::to_string(count * sizeof(float)) + " bytes)";
      if (o.via.bin.size % sizeof(float) != 0) {
        throw Failure{"width", what + " is a bin of " + std::to_string(o.via.bin.size) +
                                   " bytes, not a whole number of float32s; " + expected};
      }
      throw Failure{"width", what + " has " + std::to_string(o.via.bin.size / sizeof(float)) +
                                 " floats (" + std::to_string(o.via.bin.size) + " bytes), " +
                                 expected};
    }
    out.resize(start + count);
    std::memcpy(out.data() + start, o.via.bin.ptr, o.via.bin.size);
  } else if (o.type == msgpack::type::ARRAY) {
    if (o.via.array.size != count) {
      throw Failure{"width", what + " has " + std::to_string(o.via.array.size) +
                                 " values, expected " + std::to_string(count)};
    }
    out.reserve(start + count);
    for (std::uint32_t i = 0; i < o.via.array.size; ++i) {
      const msgpack::object& v = o.via.array.ptr[i];
      switch (v.type) {
        case msgpack::type::FLOAT32:
        case msgpack::type::FLOAT64:
          out.push_back(static_cast<float>(v.via.f64));
          break;
        case msgpack::type::POSITIVE_INTEGER:
          out.push_back(static_cast<float>(v.via.u64));
          break;
        case msgpack::type::NEGATIVE_INTEGER:
          out.push_back(static_cast<float>(v.via.i64));
          break;
        default:
          throw Failure{"malformed", what + " holds a value that is not a number"};
      }
    }
  } else {
    throw Failure{"malformed", what + " is neither a bin of float32 nor an array of numbers"};
  }
  for (std::size_t i = start; i < out.size(); ++i) {
    if (!std::isfinite(out[i])) {
      throw Failure{"nan",
                    what + " holds a NaN or infinite value at index " + std::to_string(i - start)};
    }
  }
}

void read_act(const msgpack::object_map& map, const RequestShape& shape, GatewayRequest& r) {
  if (const msgpack::object* rows = field(map, "rows")) {
    std::uint64_t k = 0;
    if (!read_uint(*rows, k) || k == 0)
      throw Failure{"malformed", "rows is not a positive integer"};
    if (k > shape.max_rows) {
      throw Failure{"too_large", "rows " + std::to_string(k) +
                                     " is above every max_batch of the gateway's policies " +
                                     std::to_string(shape.max_rows)};
    }
    r.rows = static_cast<std::uint32_t>(k);
    r.rows_given = true;
  }
  const msgpack::object* obs = field(map, "obs");
  if (obs == nullptr) throw Failure{"malformed", "act without obs"};
  const std::size_t count = static_cast<std::size_t>(r.rows) * shape.observation_size;
  if (obs->type != msgpack::type::MAP) {
    r.single = true;
    read_floats(*obs, count, "the observation", r.observations);
    return;
  }
  const msgpack::object_map& dict = obs->via.map;
  if (dict.size == 0) throw Failure{"malformed", "obs is an empty map"};
  std::vector<std::pair<std::uint32_t, const msgpack::object*>> entries;
  for (std::uint32_t i = 0; i < dict.size; ++i) {
    entries.emplace_back(checked_agent(dict.ptr[i].key, shape), &dict.ptr[i].val);
  }
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (std::size_t i = 1; i < entries.size(); ++i) {
    if (entries[i].first == entries[i - 1].first) {
      throw Failure{"malformed", "agent " + std::to_string(entries[i].first) + " appears twice"};
    }
  }
  r.observations.reserve(entries.size() * count);
  for (const auto& [agent, value] : entries) {
    r.agents.push_back(agent);
    read_floats(*value, count, "the observation of agent " + std::to_string(agent), r.observations);
  }
}

void read_episode_fields(const msgpack::object_map& map, const RequestShape& shape,
                         GatewayRequest& r) {
  if (const msgpack::object* e = field(map, "episode")) {
    std::uint64_t episode = 0;
    if (!read_uint(*e, episode)) throw Failure{"malformed", "episode is not an unsigned integer"};
    r.episode = episode;
  }
  if (const msgpack::object* i = field(map, "instance")) {
    std::uint64_t instance = 0;
    if (!read_uint(*i, instance)) throw Failure{"malformed", "instance is not an unsigned integer"};
    r.instance = instance;
  }
  if (const msgpack::object* rewards = field(map, "rewards")) {
    if (rewards->type != msgpack::type::MAP) throw Failure{"malformed", "rewards is not a map"};
    for (std::uint32_t i = 0; i < rewards->via.map.size; ++i) {
      const msgpack::object_kv& kv = rewards->via.map.ptr[i];
      double value = 0.0;
      if (kv.val.type == msgpack::type::FLOAT32 || kv.val.type == msgpack::type::FLOAT64) {
        value = kv.val.via.f64;
      } else if (kv.val.type == msgpack::type::POSITIVE_INTEGER) {
        value = static_cast<double>(kv.val.via.u64);
      } else if (kv.val.type == msgpack::type::NEGATIVE_INTEGER) {
        value = static_cast<double>(kv.val.via.i64);
      } else {
        throw Failure{"malformed", "a reward that is not a number"};
      }
      if (!std::isfinite(value)) throw Failure{"nan", "a NaN or infinite reward"};
      r.rewards.emplace_back(checked_agent(kv.key, shape), value);
    }
  }
  if (const msgpack::object* dones = field(map, "dones")) {
    if (dones->type != msgpack::type::MAP) throw Failure{"malformed", "dones is not a map"};
    for (std::uint32_t i = 0; i < dones->via.map.size; ++i) {
      const msgpack::object_kv& kv = dones->via.map.ptr[i];
      if (kv.val.type != msgpack::type::BOOLEAN)
        throw Failure{"malformed", "a done that is not a bool"};
      r.dones.emplace_back(checked_agent(kv.key, shape), kv.val.via.boolean);
    }
  }
}

std::optional<GatewayOp> parse_op(const msgpack::object& o) {
  if (o.type != msgpack::type::STR) return std::nullopt;
  const std::string op(o.via.str.ptr, std::min<std::size_t>(o.via.str.size, kMaxStringChars));
  for (const GatewayOp candidate : {GatewayOp::hello, GatewayOp::act, GatewayOp::episode_start,
                                    GatewayOp::episode_end, GatewayOp::health}) {
    if (op == to_string(candidate)) return candidate;
  }
  return std::nullopt;
}

}  // namespace

const char* to_string(GatewayOp op) {
  switch (op) {
    case GatewayOp::hello:
      return "hello";
    case GatewayOp::act:
      return "act";
    case GatewayOp::episode_start:
      return "episode_start";
    case GatewayOp::episode_end:
      return "episode_end";
    case GatewayOp::health:
      return "health";
  }
  return "?";
}

RequestLimits request_limits(const RequestShape& shape) {
  const std::size_t most_floats = static_cast<std::size_t>(shape.max_rows) * shape.observation_size;
  RequestLimits limits;
  limits.max_string_chars = kMaxStringChars;
  limits.max_map_entries = std::max<std::size_t>(shape.num_agents, kMaxFields);
  limits.max_array_entries = std::max<std::size_t>(most_floats, kMaxFields);
  limits.max_bin_bytes = most_floats * sizeof(float);
  limits.max_depth = 4;
  return limits;
}

GatewayError error_of(const GatewayRequest& request, std::string code, std::string reason) {
  return GatewayError{std::move(code), std::move(reason), std::string(to_string(request.op)),
                      request.id, std::nullopt};
}

DecodeResult decode_request(const void* data, std::size_t size, const RequestShape& shape) {
  GatewayRequest r;
  GatewayError error;
  // The id and op first, and the limits, without allocating: a refused request is answered with
  // its own id and op (PROTOCOL.md §6).
  const RequestLimits bounds = request_limits(shape);
  const RequestScan scan = scan_request(data, size, bounds);
  // An absent id reads as 0 only in a well-formed map: in bytes that are not one, it is unknown.
  if (scan.id_state == FieldState::read ||
      (scan.id_state == FieldState::absent && scan.parsed && scan.is_map)) {
    error.id = scan.id;
  }
  if (scan.op_state == FieldState::read) error.op = scan.op;
  if (scan.id_state == FieldState::unreadable) {
    error.code = "malformed";
    error.reason = scan.id_problem + ": the reply's id is nil";
    return error;
  }
  if (!scan.too_large.empty()) {
    error.code = "too_large";
    error.reason = scan.too_large;
    return error;
  }
  // The same limits bound MessagePack's allocations (the scan has checked them already).
  const msgpack::unpack_limit limits(bounds.max_array_entries, bounds.max_map_entries,
                                     bounds.max_string_chars, bounds.max_bin_bytes, /*ext=*/0,
                                     bounds.max_depth);
  try {
    if (data == nullptr || size == 0) throw Failure{"malformed", "an empty frame"};
    std::size_t offset = 0;
    const msgpack::object_handle handle =
        msgpack::unpack(static_cast<const char*>(data), size, offset, nullptr, nullptr, limits);
    if (handle.get().type != msgpack::type::MAP)
      throw Failure{"malformed", "not a MessagePack map"};
    if (offset != size) throw Failure{"malformed", "bytes after the MessagePack map"};
    const msgpack::object_map& map = handle.get().via.map;
    if (const msgpack::object* id = field(map, "id")) {
      if (!read_uint(*id, r.id)) throw Failure{"malformed", "id is not an unsigned integer"};
    }
    const msgpack::object* op = field(map, "op");
    if (op == nullptr) throw Failure{"malformed", "no op"};
    const std::optional<GatewayOp> parsed = parse_op(*op);
    if (!parsed)
      throw Failure{"unknown_op",
                    "op is not one of hello, act, episode_start, episode_end, health"};
    r.op = *parsed;
    const msgpack::object* v = field(map, "v");
    std::uint64_t version = 0;
    if (v == nullptr || !read_uint(*v, version) || version != kProtocolVersion) {
      throw Failure{"version", "this gateway speaks protocol version " +
                                   std::to_string(kProtocolVersion) + " (field v)"};
    }
    if (r.op == GatewayOp::act) read_act(map, shape, r);
    if (r.op == GatewayOp::act || r.op == GatewayOp::episode_end)
      read_episode_fields(map, shape, r);
    if (r.op == GatewayOp::episode_start) {
      if (const msgpack::object* log = field(map, "log")) {
        if (log->type != msgpack::type::BOOLEAN) throw Failure{"malformed", "log is not a bool"};
        r.log = log->via.boolean;
      }
    }
    if (r.op == GatewayOp::episode_end && !r.episode) {
      throw Failure{"malformed", "episode_end without episode"};
    }
    return r;
  } catch (const Failure& f) {
    error.code = f.code;
    error.reason = f.reason;
  } catch (const msgpack::size_overflow&) {
    error.code = "too_large";
    error.reason = "a container longer than the gateway accepts";
  } catch (const std::exception&) {
    error.code = "malformed";
    error.reason = "not a valid MessagePack frame";
  }
  return error;
}

namespace {

class Writer {
 public:
  Writer() : packer_(buffer_) {}
  msgpack::packer<msgpack::sbuffer>& p() { return packer_; }
  void key(const char* k) { packer_.pack(k); }
  /// `d` as a MessagePack float 64 whatever its value (the packer writes a whole number as an
  /// integer, and a reply's floats are floats: PROTOCOL.md §4.3).
  void float64(double d) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &d, sizeof bits);
    char bytes[9];
    bytes[0] = static_cast<char>(0xcb);
    for (int b = 0; b < 8; ++b) bytes[1 + b] = static_cast<char>((bits >> (8 * (7 - b))) & 0xFFU);
    buffer_.write(bytes, sizeof bytes);
  }
  Frame frame() const {
    return Frame(reinterpret_cast<const std::uint8_t*>(buffer_.data()),
                 reinterpret_cast<const std::uint8_t*>(buffer_.data()) + buffer_.size());
  }

 private:
  msgpack::sbuffer buffer_;
  msgpack::packer<msgpack::sbuffer> packer_;
};

/// The fields every reply starts with: op and id (nil when the request's could not be read), ok.
void header(Writer& w, std::size_t fields, const std::optional<std::string>& op,
            std::optional<std::uint64_t> id, bool ok) {
  w.p().pack_map(static_cast<std::uint32_t>(fields + 3));
  w.key("op");
  if (op) {
    w.p().pack(*op);
  } else {
    w.p().pack_nil();
  }
  w.key("id");
  if (id) {
    w.p().pack(*id);
  } else {
    w.p().pack_nil();
  }
  w.key("ok");
  w.p().pack(ok);
}

void header(Writer& w, std::size_t fields, GatewayOp op, std::uint64_t id) {
  header(w, fields, std::string(to_string(op)), id, true);
}

void pack_policies(Writer& w, const std::vector<PolicyStatus>& policies) {
  w.p().pack_map(static_cast<std::uint32_t>(policies.size()));
  for (const PolicyStatus& s : policies) {
    w.p().pack(s.name);
    w.p().pack_map(5);
    w.key("version");
    w.p().pack(s.version);
    w.key("loaded");
    w.p().pack(s.loaded);
    w.key("max_batch");
    w.p().pack(s.max_batch);
    w.key("max_wait_us");
    w.p().pack(s.max_wait_us);
    w.key("replay");
    w.p().pack(s.replay);
  }
}

void pack_limits(Writer& w, const HelloInfo& info) {
  const RequestLimits& l = info.limits;
  const std::pair<const char*, std::uint64_t> entries[] = {
      {"max_frame_bytes", info.max_frame_bytes},
      {"max_frames", kMaxClientFrames},
      {"max_string_chars", l.max_string_chars},
      {"max_map_entries", l.max_map_entries},
      {"max_array_entries", l.max_array_entries},
      {"max_bin_bytes", l.max_bin_bytes},
      {"max_depth", l.max_depth},
      {"max_rows", info.max_rows},
      {"max_in_flight", info.max_in_flight},
      {"max_queue", info.max_queue},
      {"max_queue_bytes", info.max_queue_bytes},
      {"max_open_episodes", info.max_open_episodes},
      {"max_clients", info.max_clients},
  };
  w.p().pack_map(static_cast<std::uint32_t>(std::size(entries)));
  for (const auto& [name, value] : entries) {
    w.key(name);
    w.p().pack(value);
  }
}

}  // namespace

Frame encode_error(const GatewayError& error) {
  Writer w;
  const bool version = error.code == "version";
  header(w, 2 + (version ? 1 : 0) + (error.busy ? 1 : 0), error.op, error.id, false);
  w.key("error");
  w.p().pack(error.code);
  w.key("reason");
  w.p().pack(error.reason);
  if (version) {
    w.key("versions");
    w.p().pack_array(1);
    w.p().pack(kProtocolVersion);
  }
  if (error.busy) {
    w.key("busy");
    w.p().pack(*error.busy);
  }
  return w.frame();
}

Frame encode_hello(std::uint64_t id, const HelloInfo& info) {
  Writer w;
  header(w, 14, GatewayOp::hello, id);
  w.key("v");
  w.p().pack(kProtocolVersion);
  w.key("instance");
  w.p().pack(info.instance);
  w.key("server");
  w.p().pack(info.server);
  w.key("env");
  w.p().pack(info.env);
  w.key("observation_size");
  w.p().pack(info.observation_size);
  w.key("num_actions");
  w.p().pack(info.num_actions);
  w.key("time_input");
  w.p().pack(info.time_input);
  w.key("max_episode_steps");
  w.p().pack(info.max_episode_steps);
  w.key("agents");
  w.p().pack_map(static_cast<std::uint32_t>(info.agents.size()));
  for (const auto& [agent, policy] : info.agents) {
    w.p().pack(agent);
    w.p().pack(policy);
  }
  w.key("policies");
  pack_policies(w, info.policies);
  w.key("max_batch");
  w.p().pack(info.max_batch);
  w.key("max_wait_us");
  w.p().pack(info.max_wait_us);
  w.key("max_in_flight");
  w.p().pack(info.max_in_flight);
  w.key("limits");
  pack_limits(w, info);
  return w.frame();
}

Frame encode_act(const GatewayRequest& request, const ActAnswer& answer) {
  Writer w;
  const std::size_t rows = request.rows;
  const auto pack_actions = [&](std::size_t a) {
    if (!request.rows_given) {
      w.p().pack(answer.actions[a]);
      return;
    }
    w.p().pack_array(static_cast<std::uint32_t>(rows));
    for (std::size_t r = 0; r < rows; ++r) w.p().pack(answer.actions[a * rows + r]);
  };
  // With `rows: k` every value is an array of k (PROTOCOL.md §4.2): an agent's rows run on one
  // version of its policy, so its policy and version repeat k times.
  const auto pack_each_row = [&](const auto& value) {
    if (!request.rows_given) {
      w.p().pack(value);
      return;
    }
    w.p().pack_array(static_cast<std::uint32_t>(rows));
    for (std::size_t r = 0; r < rows; ++r) w.p().pack(value);
  };
  header(w, answer.logged ? 4 : 3, GatewayOp::act, request.id);
  if (answer.logged) {
    w.key("logged");
    w.p().pack(*answer.logged);
  }
  if (request.single) {
    w.key("action");
    pack_actions(0);
    w.key("policy");
    pack_each_row(answer.policies.at(0));
    w.key("version");
    pack_each_row(answer.versions.at(0));
    return w.frame();
  }
  const auto n = static_cast<std::uint32_t>(answer.agents.size());
  w.key("actions");
  w.p().pack_map(n);
  for (std::size_t a = 0; a < n; ++a) {
    w.p().pack(answer.agents[a]);
    pack_actions(a);
  }
  w.key("policies");
  w.p().pack_map(n);
  for (std::size_t a = 0; a < n; ++a) {
    w.p().pack(answer.agents[a]);
    pack_each_row(answer.policies[a]);
  }
  w.key("versions");
  w.p().pack_map(n);
  for (std::size_t a = 0; a < n; ++a) {
    w.p().pack(answer.agents[a]);
    pack_each_row(answer.versions[a]);
  }
  return w.frame();
}

Frame encode_episode_start(std::uint64_t id, std::uint64_t episode, bool log,
                           std::uint64_t instance) {
  Writer w;
  header(w, 3, GatewayOp::episode_start, id);
  w.key("episode");
  w.p().pack(episode);
  w.key("instance");
  w.p().pack(instance);
  w.key("log");
  w.p().pack(log);
  return w.frame();
}

Frame encode_episode_end(std::uint64_t id, std::uint64_t episode, std::uint64_t steps,
                         const std::map<std::uint32_t, double>& returns, std::uint64_t logged,
                         std::uint64_t instance) {
  Writer w;
  header(w, 5, GatewayOp::episode_end, id);
  w.key("logged");
  w.p().pack(logged);
  w.key("episode");
  w.p().pack(episode);
  w.key("instance");
  w.p().pack(instance);
  w.key("steps");
  w.p().pack(steps);
  w.key("returns");
  w.p().pack_map(static_cast<std::uint32_t>(returns.size()));
  for (const auto& [agent, total] : returns) {
    w.p().pack(agent);
    w.float64(total);
  }
  return w.frame();
}

Frame encode_health(std::uint64_t id, bool ready, const std::vector<PolicyStatus>& policies,
                    std::uint64_t instance) {
  Writer w;
  header(w, 4, GatewayOp::health, id);
  w.key("instance");
  w.p().pack(instance);
  w.key("live");
  w.p().pack(true);
  w.key("ready");
  w.p().pack(ready);
  w.key("policies");
  pack_policies(w, policies);
  return w.frame();
}

}  // namespace tagflow::gateway
