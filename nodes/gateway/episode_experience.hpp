// EpisodeExperience: the transitions of one logged episode of the inference service
// (PROTOCOL.md §4.3), assembled from what its client sends. Pure: no sockets, no threads.
//
// Per agent, a step is *open* from the reply to an act that held the agent's observation (obs_t,
// the action chosen and the weights version that chose it) until a later request completes it
// into one transition (obs_t, action_t, reward, obs_{t+1}, terminated):
//   - an act holding the agent's next observation: obs_{t+1} is that observation, not terminal;
//   - `dones[agent]: true` (on an act or on episode_end): terminal, obs_{t+1} = the agent's
//     observation in that act, or obs_t when that request holds none;
//   - episode_end: every step still open, terminal, obs_{t+1} = obs_t (the client sends no final
//     observation; the flag makes the learner not bootstrap from it).
// Rewards (`rewards` of any later request, summed) belong to the open step of their agent; an
// agent absent from an act keeps its step open. Observations are written as the agent's policy
// sees them (GatewayModel::write_input), so the learner trains on what the gateway evaluates.
//
// check() refuses, with a reason, a request that names an agent without an open step in its
// rewards or dones, or that holds several rows per agent; it changes nothing. Not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nodes/gateway/gateway_backend.hpp"
#include "nodes/gateway/gateway_protocol.hpp"
#include "nodes/messages.hpp"

namespace tagflow::gateway {

class EpisodeExperience {
 public:
  /// `model` must outlive this.
  explicit EpisodeExperience(const GatewayModel& model);

  /// "" when complete() may take `request`; otherwise why not.
  [[nodiscard]] std::string check(const GatewayRequest& request) const;
  /// Completes the steps that `request` completes — an act, or the episode's end when `end` —
  /// and appends the transitions to out[policy] (out is resized to one message per policy).
  /// Returns the number of transitions appended.
  std::size_t complete(const GatewayRequest& request, bool end,
                       std::vector<nodes::TransitionsMessage>& out);
  /// Opens a step for every agent of an answered act (one row per agent, request order): its
  /// observation (observation_size floats each), the action and the version that chose it.
  void open(const std::vector<std::uint32_t>& agents, const std::vector<float>& observations,
            const std::vector<std::int64_t>& actions, const std::vector<std::uint64_t>& versions);
  /// Agents with an open step.
  [[nodiscard]] std::size_t open_steps() const;

 private:
  struct Step {
    bool open = false;
    std::vector<float> observation;
    std::int64_t action = 0;
    double reward = 0.0;
    std::uint64_t version = 0;
  };
  void finish(std::uint32_t agent, const float* next, bool terminated,
              std::vector<nodes::TransitionsMessage>& out);

  const GatewayModel* model_;
  std::vector<Step> steps_;  // by agent
};

}  // namespace tagflow::gateway
