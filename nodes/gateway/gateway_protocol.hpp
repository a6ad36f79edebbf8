// The inference service protocol's messages (nodes/gateway/PROTOCOL.md): requests decoded from one
// MessagePack frame, replies encoded into one. Pure functions: no sockets, no threads, no policy.
//
// decode_request() checks everything that needs only the frame and the env's shape: the limits of
// PROTOCOL.md §2.1 (request_scan.hpp, before MessagePack allocates for anything), the map and its
// field types, the version, the op, agent indices, observation widths, NaN and infinities, and
// `rows` against max_rows. Whether an agent is served by this gateway is the gateway's check. Bad
// bytes are a normal event: every failure is a GatewayError value (code and reason, as in the
// protocol's section 6, with the request's `id` and `op` whenever they could be read), never an
// exception. Thread-safe (no shared state).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "nodes/gateway/request_scan.hpp"

namespace tagflow::gateway {

inline constexpr std::uint32_t kProtocolVersion = 1;
/// Frames of one request as the client sends it: the request, after at most two envelope frames
/// (a REQ socket's empty delimiter, a DEALER's own), PROTOCOL.md §2.
inline constexpr std::size_t kMaxClientFrames = 3;

enum class GatewayOp { hello, act, episode_start, episode_end, health };
[[nodiscard]] const char* to_string(GatewayOp op);

/// What a request may hold, from the env and the gateway's settings.
struct RequestShape {
  std::uint32_t observation_size = 0;
  std::uint32_t num_agents = 0;
  std::uint32_t max_rows = 64;  // `rows` of one act request (the gateway's max_batch)
};

/// The limits a request of `shape` must keep (PROTOCOL.md §2.1).
[[nodiscard]] RequestLimits request_limits(const RequestShape& shape);

struct GatewayRequest {
  GatewayOp op = GatewayOp::hello;
  std::uint64_t id = 0;
  // act: the agents in ascending order, and their observations: agent-major, rows per agent.
  std::vector<std::uint32_t> agents;
  std::vector<float> observations;  // agents.size() × rows × observation_size
  std::uint32_t rows = 1;
  bool rows_given = false;  // `rows` was in the request: the reply holds arrays
  bool single = false;      // obs was one observation, not a map (the gateway serves one agent)
  // act, episode_end
  std::optional<std::uint64_t> episode;
  /// The gateway instance the episode was started on (episode_start's `instance`); absent: any.
  std::optional<std::uint64_t> instance;
  std::vector<std::pair<std::uint32_t, double>> rewards;
  std::vector<std::pair<std::uint32_t, bool>> dones;
  // episode_start: log the episode's experience (absent: the gateway's default)
  std::optional<bool> log;
};

/// A refusal. `op` and `id` are the request's when they could be read (an absent `id` reads as
/// 0); the reply carries nil for each that could not (PROTOCOL.md §6).
struct GatewayError {
  std::string code;  // the protocol's error code: malformed, version, ...
  std::string reason;
  std::optional<std::string> op;  // as the request spelled it (unknown_op: the unknown one)
  std::optional<std::uint64_t> id;
  /// `busy` only: whose limit it is (§5): "client" (its max_in_flight), "gateway" (max_queue or
  /// max_queue_bytes), "episode" (an act of the logged episode is unanswered).
  std::optional<std::string> busy;
};

/// The refusal of a decoded request: its own op and id.
[[nodiscard]] GatewayError error_of(const GatewayRequest& request, std::string code,
                                    std::string reason);

using DecodeResult = std::variant<GatewayRequest, GatewayError>;

/// Decodes one request frame.
[[nodiscard]] DecodeResult decode_request(const void* data, std::size_t size,
                                          const RequestShape& shape);

/// One policy as the hello and health replies show it.
struct PolicyStatus {
  std::string name;
  std::uint64_t version = 0;
  bool loaded = false;
  std::uint32_t max_batch = 0;    // rows of this policy per forward pass
  std::uint64_t max_wait_us = 0;  // how long a request of this policy may wait for a batch
  bool replay = false;  // its logged transitions reach a replay (else dropped, counted: §4.3)
};

struct HelloInfo {
  std::uint64_t instance = 0;  // this gateway's start (PROTOCOL.md §4, step 3)
  std::string server, env;
  std::uint32_t observation_size = 0, num_actions = 0;
  bool time_input = false;  // the client appends the episode's elapsed fraction (§4, step 1)
  std::uint32_t max_episode_steps = 0;
  std::vector<std::pair<std::uint32_t, std::string>> agents;  // agent → policy name, served here
  std::vector<PolicyStatus> policies;
  std::uint32_t max_batch = 0, max_in_flight = 0;
  std::uint64_t max_wait_us = 0;
  RequestLimits limits;        // what one request may hold (§2.1)
  std::uint32_t max_rows = 0;  // `rows` of one act (the largest max_batch of its policies)
  std::uint64_t max_frame_bytes = 0, max_queue = 0, max_queue_bytes = 0, max_open_episodes = 0;
  std::uint64_t max_clients = 0;  // connections kept (the quietest beyond are closed)
};

/// The answer to one act request: per agent (request order), `rows` actions, policy, version.
struct ActAnswer {
  std::vector<std::uint32_t> agents;
  std::vector<std::string> policies;    // per agent (every row of an agent runs on one version)
  std::vector<std::uint64_t> versions;  // per agent
  std::vector<std::int64_t> actions;    // agents × rows
  std::optional<std::uint64_t> logged;  // a logged episode: its transitions logged so far
};

using Frame = std::vector<std::uint8_t>;

[[nodiscard]] Frame encode_error(const GatewayError& error);
[[nodiscard]] Frame encode_hello(std::uint64_t id, const HelloInfo& info);
[[nodiscard]] Frame encode_act(const GatewayRequest& request, const ActAnswer& answer);
[[nodiscard]] Frame encode_episode_start(std::uint64_t id, std::uint64_t episode, bool log,
                                         std::uint64_t instance);
[[nodiscard]] Frame encode_episode_end(std::uint64_t id, std::uint64_t episode, std::uint64_t steps,
                                       const std::map<std::uint32_t, double>& returns,
                                       std::uint64_t logged, std::uint64_t instance);
[[nodiscard]] Frame encode_health(std::uint64_t id, bool ready,
                                  const std::vector<PolicyStatus>& policies,
                                  std::uint64_t instance);

}  // namespace tagflow::gateway
