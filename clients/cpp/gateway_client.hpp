// GatewayClient: a C++ client of tagflow's inference service (nodes/gateway/PROTOCOL.md), written
// from the protocol document alone: a ZeroMQ DEALER socket and MessagePack maps.
//
//   tagflow::clients::GatewayClient client("tcp://127.0.0.1:7830");
//   const auto hello = client.hello();                      // agents served, widths, versions
//   auto reply = client.act({{0, obs0}, {1, obs1}});        // agent → observation
//   if (reply.ok) use(reply.actions.at(0));                 // else reply.error == "busy", ...
//
// Errors: refusals by the gateway are values (Reply::ok false, error and reason as the protocol's
// section 6); a gateway that does not answer within `timeout` throws GatewayClientError (the
// socket is then reset, so later calls start clean). One request at a time per client.
// Not thread-safe: one client per thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace zmq {
class context_t;
class socket_t;
}  // namespace zmq

namespace tagflow::clients {

class GatewayClientError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ClientOptions {
  std::chrono::milliseconds timeout{10000};
  // CURVE (all three Z85, 40 characters), when the gateway is a CURVE server.
  std::string server_public_key, public_key, secret_key;
};

struct Reply {
  bool ok = false;
  std::string error, reason;  // when !ok
  std::uint64_t id = 0;
  std::vector<std::uint32_t> accepted_versions;  // error "version": the versions the gateway speaks
  std::string busy;  // error "busy": whose limit, "client", "gateway" or "episode" (PROTOCOL.md §5)
};

struct HelloReply : Reply {
  /// The gateway's instance, new at each of its starts (PROTOCOL.md §4, step 3); 0: not said.
  std::uint64_t instance = 0;
  std::string server, env;
  std::uint32_t v = 0;  // the protocol version the gateway answered in
  std::uint32_t observation_size = 0, num_actions = 0, max_batch = 0, max_in_flight = 0;
  /// With time_input, each observation's last of observation_size floats is the client's: the
  /// episode's joint steps so far / max_episode_steps (PROTOCOL.md §4, step 1).
  bool time_input = false;
  std::uint32_t max_episode_steps = 0;
  std::map<std::uint32_t, std::string> agents;    // agent → policy
  std::map<std::string, std::uint64_t> versions;  // policy → weights version
  std::map<std::string, std::uint64_t> limits;    // PROTOCOL.md §2.1: limit → number
};

struct ActReply : Reply {
  std::map<std::uint32_t, std::int64_t> actions;    // agent → action
  std::map<std::uint32_t, std::string> policies;    // agent → policy that chose it
  std::map<std::uint32_t, std::uint64_t> versions;  // agent → its weights version
  std::optional<std::uint64_t> logged;  // a logged episode: its transitions logged so far
};

struct EpisodeReply : Reply {
  std::uint64_t episode = 0, steps = 0;
  std::uint64_t instance = 0;  // the gateway instance the episode is on (0: not said)
  bool log = false;            // episode_start: the episode's experience is logged
  std::uint64_t logged = 0;    // episode_end: transitions logged for the episode
  std::map<std::uint32_t, double> returns;
};

struct HealthReply : Reply {
  bool live = false, ready = false;
  std::uint64_t instance = 0;  // as HelloReply::instance
  std::map<std::string, std::uint64_t> versions;
};

class GatewayClient {
 public:
  explicit GatewayClient(std::string endpoint, ClientOptions options = {});
  ~GatewayClient();
  GatewayClient(const GatewayClient&) = delete;
  GatewayClient& operator=(const GatewayClient&) = delete;

  HelloReply hello();
  /// Actions for one observation per agent (float32, observation_size each).
  /// With `episode`: the rewards and dones of the previous step (PROTOCOL.md §4.2–4.3). An
  /// episode this client started is sent with the gateway instance it started on, so that a
  /// restarted gateway refuses it (`unknown_episode`) instead of taking it for a new episode
  /// of the same id.
  ActReply act(const std::map<std::uint32_t, std::vector<float>>& observations,
               std::optional<std::uint64_t> episode = std::nullopt,
               const std::map<std::uint32_t, double>& rewards = {},
               const std::map<std::uint32_t, bool>& dones = {});
  /// The same for the episode whose episode_start reply is `started`, sent with the instance it
  /// was started on (none when the gateway said none) whatever this client keeps for its id:
  /// the old episode stays refused after a restarted gateway gave its id to a new one.
  ActReply act(const std::map<std::uint32_t, std::vector<float>>& observations,
               const EpisodeReply& started, const std::map<std::uint32_t, double>& rewards = {},
               const std::map<std::uint32_t, bool>& dones = {});
  /// `log`: log the episode's experience into the cluster's replay (absent: the gateway's
  /// default).
  EpisodeReply episode_start(std::optional<bool> log = std::nullopt);
  EpisodeReply episode_end(std::uint64_t episode,
                           const std::map<std::uint32_t, double>& rewards = {},
                           const std::map<std::uint32_t, bool>& dones = {});
  /// episode_end of the episode whose episode_start reply is `started`, as act() above.
  EpisodeReply episode_end(const EpisodeReply& started,
                           const std::map<std::uint32_t, double>& rewards = {},
                           const std::map<std::uint32_t, bool>& dones = {});
  HealthReply health();

  /// The frame of an act request (what act() sends), for programs that pipeline requests on
  /// their own socket; `instance` (sent only with an `episode`): the gateway instance the
  /// episode was started on (EpisodeReply::instance).
  [[nodiscard]] static std::vector<std::uint8_t> act_request(
      std::uint64_t id, const std::map<std::uint32_t, std::vector<float>>& observations,
      std::optional<std::uint64_t> episode = std::nullopt,
      const std::map<std::uint32_t, double>& rewards = {},
      const std::map<std::uint32_t, bool>& dones = {},
      std::optional<std::uint64_t> instance = std::nullopt);

  /// Sends raw frames (any bytes) and returns the raw reply frame: for tests of bad input.
  std::vector<std::uint8_t> exchange_raw(const std::vector<std::uint8_t>& frame);

 private:
  void connect();
  ActReply act_on(const std::map<std::uint32_t, std::vector<float>>& observations,
                  std::optional<std::uint64_t> episode, std::optional<std::uint64_t> instance,
                  const std::map<std::uint32_t, double>& rewards,
                  const std::map<std::uint32_t, bool>& dones);
  EpisodeReply end_on(std::uint64_t episode, std::optional<std::uint64_t> instance,
                      const std::map<std::uint32_t, double>& rewards,
                      const std::map<std::uint32_t, bool>& dones);
  std::vector<std::uint8_t> exchange(const std::vector<std::uint8_t>& frame, std::uint64_t id);

  std::string endpoint_;
  bool ipv6_ = false;  // connect with ZMQ_IPV6 (PROTOCOL.md §1)
  ClientOptions options_;
  std::unique_ptr<zmq::context_t> context_;
  std::unique_ptr<zmq::socket_t> socket_;
  std::uint64_t next_id_ = 1;
  /// The gateway instance of each episode this client started and has not ended (at most
  /// kKeptEpisodes, the one started first forgotten first, as the gateway forgets them: by start,
  /// not by id, since a restarted gateway numbers its episodes from 1 again).
  std::optional<std::uint64_t> instance_of(std::uint64_t episode) const;
  void keep_instance(std::uint64_t episode, std::uint64_t instance);
  void forget_instance(std::uint64_t episode);
  struct KeptEpisode {
    std::uint64_t instance = 0;
    std::uint64_t started = 0;  // its place in episode_starts_
  };
  std::map<std::uint64_t, KeptEpisode> episode_instances_;
  std::map<std::uint64_t, std::uint64_t> episode_starts_;  // start order → episode
  std::uint64_t next_start_ = 0;
  static constexpr std::size_t kKeptEpisodes = 1024;
};

}  // namespace tagflow::clients
