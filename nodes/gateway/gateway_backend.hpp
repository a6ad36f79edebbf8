// GatewayBackend: what a ServiceGateway computes actions with — the plug point between the
// gateway (sockets, batching, limits) and a policy evaluator (PolicyBankBackend over a PolicyBank,
// or a test's own).
//
// Contract: model() is fixed for the backend's life. serve() gets requests that the gateway has
// already checked (rows of served agents only, each with its own policy, observation widths right)
// and returns one answer per request, in order, with the policy and weights version of every row;
// it may throw std::exception when a policy fails to run (the gateway then serves each request of
// the batch again alone, and answers those that fail alone with `internal` errors). load_weights()
// loads newer weights for a served policy (older or equal versions are ignored). refresh(), called
// between passes about once a second, may reload what changed on disk (a policy's TorchScript file)
// and returns a line for the log, or "". Every method is called from the gateway's one thread only:
// a backend needs no locking.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nodes/cluster/cluster_config.hpp"
#include "nodes/messages.hpp"

namespace tagflow::gateway {

/// The env and the policies a gateway serves.
struct GatewayModel {
  std::string server;  // the replica's name, e.g. inference-0
  std::string env;
  std::uint32_t num_agents = 0, observation_size = 0, num_actions = 0;
  bool time_input = false;  // the observation's last float is the episode's elapsed fraction
  std::uint32_t max_episode_steps = 0;
  std::vector<std::string> policy_names;   // every policy of the cluster file, by index
  std::vector<int> agent_policy;           // agent → policy index
  std::vector<std::string> policy_server;  // policy index → a replica hosting it ("" if none)
  std::vector<int> hosted;                 // the policies served here (ascending)
  /// By policy: its input adds the agent's one-hot (nodes/multi_agent/agent_input.hpp); empty:
  /// no policy does.
  std::vector<bool> agent_id_input;

  /// Floats of policy `policy`'s input: the observation, plus num_agents with agent_id_input.
  [[nodiscard]] std::uint32_t input_size(int policy) const;
  /// Writes policy `policy`'s input for `agent` (input_size(policy) floats) to `out`.
  void write_input(int policy, std::uint32_t agent, const float* observation, float* out) const;

  [[nodiscard]] bool serves_policy(int policy) const;
  [[nodiscard]] bool serves_agent(std::uint32_t agent) const;
};

/// The model of a multi-agent file's replica `server` hosting `hosted`.
[[nodiscard]] GatewayModel make_gateway_model(const std::string& server,
                                              const cluster::MultiAgentConfig& agents,
                                              const std::vector<int>& hosted);

class GatewayBackend {
 public:
  virtual ~GatewayBackend() = default;
  [[nodiscard]] virtual const GatewayModel& model() const = 0;
  [[nodiscard]] virtual std::vector<nodes::AgentActionsMessage> serve(
      const std::vector<nodes::AgentObservationsMessage>& requests) = 0;
  virtual void load_weights(int policy, const nodes::WeightsMessage& weights) = 0;
  [[nodiscard]] virtual std::uint64_t version(int policy) const = 0;
  [[nodiscard]] virtual std::string refresh() { return {}; }
};

}  // namespace tagflow::gateway
