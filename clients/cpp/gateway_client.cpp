#include "clients/cpp/gateway_client.hpp"

#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>

#include <msgpack.hpp>
#include <zmq.hpp>

namespace tagflow::clients {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::uint32_t kVersion = 1;

using Packer = msgpack::packer<msgpack::sbuffer>;

std::vector<std::uint8_t> bytes(const msgpack::sbuffer& b) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(b.data());
  return {p, p + b.size()};
}

/// Whether connecting to `endpoint` takes ZMQ_IPV6 (PROTOCOL.md §1): an IPv6 address in brackets
/// (`tcp://[::1]:7830`), or a host name with IPv6 addresses and no IPv4 one. Without it ZeroMQ
/// connects over IPv4 only; with it, a name with both would be tried at its IPv6 address first,
/// which a gateway bound to an IPv4 address does not answer.
bool needs_ipv6(const std::string& endpoint) {
  const std::string scheme = "tcp://";
  if (endpoint.rfind(scheme, 0) != 0) return false;
  const std::string rest = endpoint.substr(scheme.size());
  if (!rest.empty() && rest.front() == '[') return true;
  const std::string host = rest.substr(0, rest.rfind(':'));
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0) return false;
  bool v4 = false;
  bool v6 = false;
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    v4 = v4 || a->ai_family == AF_INET;
    v6 = v6 || a->ai_family == AF_INET6;
  }
  ::freeaddrinfo(found);
  return v6 && !v4;
}

/// The common request fields: op, v, id, and `extra` more fields to follow.
void begin(Packer& p, const char* op, std::uint64_t id, std::uint32_t extra) {
  p.pack_map(3 + extra);
  p.pack("op");
  p.pack(op);
  p.pack("v");
  p.pack(kVersion);
  p.pack("id");
  p.pack(id);
}

const msgpack::object* find(const msgpack::object& map, const char* key) {
  if (map.type != msgpack::type::MAP) return nullptr;
  for (std::uint32_t i = 0; i < map.via.map.size; ++i) {
    const msgpack::object& k = map.via.map.ptr[i].key;
    if (k.type == msgpack::type::STR && k.via.str.size == std::strlen(key) &&
        std::memcmp(k.via.str.ptr, key, k.via.str.size) == 0) {
      return &map.via.map.ptr[i].val;
    }
  }
  return nullptr;
}

template <class T>
T get(const msgpack::object& map, const char* key, T fallback = T{}) {
  const msgpack::object* o = find(map, key);
  if (o == nullptr || o->is_nil()) return fallback;
  return o->as<T>();
}

msgpack::object_handle parse(const std::vector<std::uint8_t>& frame) {
  try {
    return msgpack::unpack(reinterpret_cast<const char*>(frame.data()), frame.size());
  } catch (const std::exception& e) {
    throw GatewayClientError(std::string("a reply that is not MessagePack: ") + e.what());
  }
}

void read_common(const msgpack::object& o, Reply& r) {
  r.ok = get<bool>(o, "ok");
  r.id = get<std::uint64_t>(o, "id");
  r.error = get<std::string>(o, "error");
  r.reason = get<std::string>(o, "reason");
  // An act's `versions` is its agents' weights versions; a refusal's, the protocol's.
  if (!r.ok && r.error == "version") {
    r.accepted_versions = get<std::vector<std::uint32_t>>(o, "versions");
  }
  if (!r.ok && r.error == "busy") r.busy = get<std::string>(o, "busy");
}

std::map<std::string, std::uint64_t> read_versions(const msgpack::object& o) {
  std::map<std::string, std::uint64_t> out;
  const msgpack::object* policies = find(o, "policies");
  if (policies == nullptr || policies->type != msgpack::type::MAP) return out;
  for (std::uint32_t i = 0; i < policies->via.map.size; ++i) {
    const auto& kv = policies->via.map.ptr[i];
    out[kv.key.as<std::string>()] = get<std::uint64_t>(kv.val, "version");
  }
  return out;
}

}  // namespace

GatewayClient::GatewayClient(std::string endpoint, ClientOptions options)
    : endpoint_(std::move(endpoint)),
      ipv6_(needs_ipv6(endpoint_)),
      options_(std::move(options)),
      context_(std::make_unique<zmq::context_t>()) {
  connect();
}

GatewayClient::~GatewayClient() {
  socket_.reset();
  context_.reset();
}

void GatewayClient::connect() {
  socket_ = std::make_unique<zmq::socket_t>(*context_, zmq::socket_type::dealer);
  socket_->set(zmq::sockopt::linger, 0);
  // A socket whose connection was refused (a CURVE key the gateway does not admit) has no peer,
  // and a blocking send on it would wait forever (PROTOCOL.md §2).
  socket_->set(zmq::sockopt::sndtimeo, static_cast<int>(std::max<std::chrono::milliseconds::rep>(
                                           1, options_.timeout.count())));
  if (!options_.server_public_key.empty()) {
    socket_->set(zmq::sockopt::curve_serverkey, options_.server_public_key);
    socket_->set(zmq::sockopt::curve_publickey, options_.public_key);
    socket_->set(zmq::sockopt::curve_secretkey, options_.secret_key);
  }
  if (ipv6_) socket_->set(zmq::sockopt::ipv6, 1);
  socket_->connect(endpoint_);
}

std::vector<std::uint8_t> GatewayClient::exchange(const std::vector<std::uint8_t>& frame,
                                                  std::uint64_t id) {
  if (!socket_->send(zmq::buffer(frame), zmq::send_flags::none)) {
    connect();
    throw GatewayClientError("could not send to " + endpoint_ + " within " +
                             std::to_string(options_.timeout.count()) +
                             " ms (no connection: is it running, and does it admit this CURVE "
                             "key?)");
  }
  const Clock::time_point deadline = Clock::now() + options_.timeout;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    zmq::pollitem_t item{socket_->handle(), 0, ZMQ_POLLIN, 0};
    if (left.count() <= 0 || zmq::poll(&item, 1, left) == 0) {
      connect();  // a late reply must not answer the next request
      throw GatewayClientError("no reply from " + endpoint_ + " within " +
                               std::to_string(options_.timeout.count()) + " ms");
    }
    zmq::message_t reply;
    if (!socket_->recv(reply, zmq::recv_flags::none)) continue;
    std::vector<std::uint8_t> out(static_cast<const std::uint8_t*>(reply.data()),
                                  static_cast<const std::uint8_t*>(reply.data()) + reply.size());
    if (id == 0) return out;
    const msgpack::object_handle h = parse(out);
    // A nil id answers a request whose id the gateway could not read (PROTOCOL.md §3): with one
    // request at a time, this one.
    const msgpack::object* got = find(h.get(), "id");
    if (got == nullptr || got->is_nil() || get<std::uint64_t>(h.get(), "id") == id) return out;
    // else a stale reply: skip it
  }
}

std::vector<std::uint8_t> GatewayClient::exchange_raw(const std::vector<std::uint8_t>& frame) {
  return exchange(frame, 0);
}

HelloReply GatewayClient::hello() {
  msgpack::sbuffer b;
  Packer p(b);
  const std::uint64_t id = next_id_++;
  begin(p, "hello", id, 0);
  const msgpack::object_handle h = parse(exchange(bytes(b), id));
  const msgpack::object& o = h.get();
  HelloReply r;
  read_common(o, r);
  if (!r.ok) return r;
  if (find(o, "instance") != nullptr) r.instance = get<std::uint64_t>(o, "instance");
  r.server = get<std::string>(o, "server");
  r.env = get<std::string>(o, "env");
  r.v = get<std::uint32_t>(o, "v");
  r.observation_size = get<std::uint32_t>(o, "observation_size");
  r.num_actions = get<std::uint32_t>(o, "num_actions");
  r.time_input = get<bool>(o, "time_input");
  r.max_episode_steps = get<std::uint32_t>(o, "max_episode_steps");
  r.max_batch = get<std::uint32_t>(o, "max_batch");
  r.max_in_flight = get<std::uint32_t>(o, "max_in_flight");
  r.agents = get<std::map<std::uint32_t, std::string>>(o, "agents");
  r.versions = read_versions(o);
  r.limits = get<std::map<std::string, std::uint64_t>>(o, "limits");
  return r;
}

std::vector<std::uint8_t> GatewayClient::act_request(
    std::uint64_t id, const std::map<std::uint32_t, std::vector<float>>& observations,
    std::optional<std::uint64_t> episode, const std::map<std::uint32_t, double>& rewards,
    const std::map<std::uint32_t, bool>& dones, std::optional<std::uint64_t> instance) {
  msgpack::sbuffer b;
  Packer p(b);
  const bool with_instance = episode && instance;
  begin(p, "act", id,
        1 + (episode ? 1 : 0) + (with_instance ? 1 : 0) + (rewards.empty() ? 0 : 1) +
            (dones.empty() ? 0 : 1));
  p.pack("obs");
  p.pack_map(static_cast<std::uint32_t>(observations.size()));
  for (const auto& [agent, values] : observations) {
    p.pack(agent);
    const auto size = static_cast<std::uint32_t>(values.size() * sizeof(float));
    p.pack_bin(size);
    p.pack_bin_body(reinterpret_cast<const char*>(values.data()), size);
  }
  if (episode) {
    p.pack("episode");
    p.pack(*episode);
  }
  if (with_instance) {
    p.pack("instance");
    p.pack(*instance);
  }
  if (!rewards.empty()) {
    p.pack("rewards");
    p.pack(rewards);
  }
  if (!dones.empty()) {
    p.pack("dones");
    p.pack(dones);
  }
  return bytes(b);
}

namespace {

/// The instance an episode_start reply names (none: the gateway said none).
std::optional<std::uint64_t> started_on(const EpisodeReply& started) {
  return started.instance != 0 ? std::optional<std::uint64_t>(started.instance) : std::nullopt;
}

}  // namespace

ActReply GatewayClient::act(const std::map<std::uint32_t, std::vector<float>>& observations,
                            std::optional<std::uint64_t> episode,
                            const std::map<std::uint32_t, double>& rewards,
                            const std::map<std::uint32_t, bool>& dones) {
  return act_on(observations, episode,
                episode ? instance_of(*episode) : std::optional<std::uint64_t>(), rewards, dones);
}

ActReply GatewayClient::act(const std::map<std::uint32_t, std::vector<float>>& observations,
                            const EpisodeReply& started,
                            const std::map<std::uint32_t, double>& rewards,
                            const std::map<std::uint32_t, bool>& dones) {
  return act_on(observations, started.episode, started_on(started), rewards, dones);
}

ActReply GatewayClient::act_on(const std::map<std::uint32_t, std::vector<float>>& observations,
                               std::optional<std::uint64_t> episode,
                               std::optional<std::uint64_t> instance,
                               const std::map<std::uint32_t, double>& rewards,
                               const std::map<std::uint32_t, bool>& dones) {
  const std::uint64_t id = next_id_++;
  const msgpack::object_handle h =
      parse(exchange(act_request(id, observations, episode, rewards, dones, instance), id));
  const msgpack::object& o = h.get();
  ActReply r;
  read_common(o, r);
  // An `unknown_episode` keeps the instance: a retry is refused too, instead of going out
  // without it and landing in a restarted gateway's episode of that id.
  if (!r.ok) return r;
  r.actions = get<std::map<std::uint32_t, std::int64_t>>(o, "actions");
  r.policies = get<std::map<std::uint32_t, std::string>>(o, "policies");
  r.versions = get<std::map<std::uint32_t, std::uint64_t>>(o, "versions");
  if (find(o, "logged") != nullptr) r.logged = get<std::uint64_t>(o, "logged");
  return r;
}

EpisodeReply GatewayClient::episode_start(std::optional<bool> log) {
  msgpack::sbuffer b;
  Packer p(b);
  const std::uint64_t id = next_id_++;
  begin(p, "episode_start", id, log ? 1 : 0);
  if (log) {
    p.pack("log");
    p.pack(*log);
  }
  const msgpack::object_handle h = parse(exchange(bytes(b), id));
  EpisodeReply r;
  read_common(h.get(), r);
  if (!r.ok) return r;
  r.episode = get<std::uint64_t>(h.get(), "episode");
  r.log = get<bool>(h.get(), "log");
  if (find(h.get(), "instance") != nullptr) {
    r.instance = get<std::uint64_t>(h.get(), "instance");
    keep_instance(r.episode, r.instance);
  }
  return r;
}

EpisodeReply GatewayClient::episode_end(std::uint64_t episode,
                                        const std::map<std::uint32_t, double>& rewards,
                                        const std::map<std::uint32_t, bool>& dones) {
  return end_on(episode, instance_of(episode), rewards, dones);
}

EpisodeReply GatewayClient::episode_end(const EpisodeReply& started,
                                        const std::map<std::uint32_t, double>& rewards,
                                        const std::map<std::uint32_t, bool>& dones) {
  return end_on(started.episode, started_on(started), rewards, dones);
}

EpisodeReply GatewayClient::end_on(std::uint64_t episode, std::optional<std::uint64_t> instance,
                                   const std::map<std::uint32_t, double>& rewards,
                                   const std::map<std::uint32_t, bool>& dones) {
  msgpack::sbuffer b;
  Packer p(b);
  const std::uint64_t id = next_id_++;
  begin(p, "episode_end", id,
        1 + (instance ? 1 : 0) + (rewards.empty() ? 0 : 1) + (dones.empty() ? 0 : 1));
  p.pack("episode");
  p.pack(episode);
  if (instance) {
    p.pack("instance");
    p.pack(*instance);
  }
  if (!rewards.empty()) {
    p.pack("rewards");
    p.pack(rewards);
  }
  if (!dones.empty()) {
    p.pack("dones");
    p.pack(dones);
  }
  const msgpack::object_handle h = parse(exchange(bytes(b), id));
  const msgpack::object& o = h.get();
  EpisodeReply r;
  read_common(o, r);
  // Ended: no request of it will be sent again (a refused one keeps its instance for a retry).
  // What this client keeps for the id is forgotten only when it is this episode's.
  if (r.ok && instance_of(episode) == instance) forget_instance(episode);
  if (!r.ok) return r;
  r.episode = get<std::uint64_t>(o, "episode");
  if (find(o, "instance") != nullptr) r.instance = get<std::uint64_t>(o, "instance");
  r.steps = get<std::uint64_t>(o, "steps");
  r.returns = get<std::map<std::uint32_t, double>>(o, "returns");
  r.logged = get<std::uint64_t>(o, "logged");
  return r;
}

HealthReply GatewayClient::health() {
  msgpack::sbuffer b;
  Packer p(b);
  const std::uint64_t id = next_id_++;
  begin(p, "health", id, 0);
  const msgpack::object_handle h = parse(exchange(bytes(b), id));
  const msgpack::object& o = h.get();
  HealthReply r;
  read_common(o, r);
  r.live = get<bool>(o, "live");
  if (find(o, "instance") != nullptr) r.instance = get<std::uint64_t>(o, "instance");
  r.ready = get<bool>(o, "ready");
  r.versions = read_versions(o);
  return r;
}

std::optional<std::uint64_t> GatewayClient::instance_of(std::uint64_t episode) const {
  const auto it = episode_instances_.find(episode);
  if (it == episode_instances_.end()) return std::nullopt;
  return it->second.instance;
}

void GatewayClient::keep_instance(std::uint64_t episode, std::uint64_t instance) {
  forget_instance(episode);  // an id the gateway gives again (after a restart) starts anew
  const std::uint64_t started = next_start_++;
  episode_instances_[episode] = KeptEpisode{instance, started};
  episode_starts_[started] = episode;
  if (episode_instances_.size() > kKeptEpisodes) forget_instance(episode_starts_.begin()->second);
}

void GatewayClient::forget_instance(std::uint64_t episode) {
  const auto it = episode_instances_.find(episode);
  if (it == episode_instances_.end()) return;
  episode_starts_.erase(it->second.started);
  episode_instances_.erase(it);
}

}  // namespace tagflow::clients
