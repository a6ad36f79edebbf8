#include "nodes/kind/torch_replica_config.hpp"

#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "monitoring/process_metrics.hpp"
#include "nodes/gateway/policy_bank_backend.hpp"
#include "nodes/inference/inference_params.hpp"
#include "transport/curve_keys.hpp"
#include "transport/tcp_endpoint.hpp"

namespace tagflow::nodes {

nodes::LearnerConfig learner_config(const ReplicaConfig& replica) {
  int joint_agents = 0;
  if (!replica.policies.empty()) {
    const cluster::PolicyConfig& policy =
        replica.agents.policies.at(static_cast<std::size_t>(replica.policies.front()));
    if (policy.joint_transitions) joint_agents = static_cast<int>(policy.agents.size());
  }
  return nodes::LearnerConfig::from_params(replica.params, replica.network_seed,
                                           replica.observation_size, replica.num_actions,
                                           joint_agents);
}

nodes::InferenceConfig inference_config(const ReplicaConfig& replica) {
  return nodes::InferenceConfig::from_params(replica.params, replica.network_seed,
                                             replica.observation_size, replica.num_actions);
}

nodes::PolicyBankConfig policy_bank_config(const ReplicaConfig& replica) {
  nodes::check_policy_bank_params(replica.params, replica.index);
  nodes::PolicyBankConfig c;
  c.agents = replica.agents;
  c.hosted = replica.policies;
  c.seed = replica.network_seed;
  return c;
}

std::optional<gateway::GatewayConfig> gateway_config(const ReplicaConfig& replica) {
  const nodes::NodeParams& params = replica.params;
  if (!params.has("gateway_port") || replica.policies.empty()) return std::nullopt;
  gateway::GatewayConfig c;
  nodes::check_policy_bank_params(params, replica.index);
  const std::int64_t port = params.get_int("gateway_port", 0, 1);
  c.endpoint = transport::tcp_endpoint(nodes::gateway_bind(params), port + replica.index);
  c.max_batch = static_cast<std::uint32_t>(params.get_int("max_batch", 64, 1));
  c.max_wait = params.get_duration("max_wait", std::chrono::nanoseconds(0));
  for (const int policy : replica.policies) {
    const cluster::PolicyConfig& p = replica.agents.policies.at(static_cast<std::size_t>(policy));
    if (p.max_batch || p.max_wait) c.policy_batching[policy] = {p.max_batch, p.max_wait};
  }
  c.max_in_flight = static_cast<std::uint32_t>(params.get_int("max_in_flight", 8, 1));
  c.max_queue = static_cast<std::size_t>(params.get_int("max_queue", 1024, 1));
  c.max_clients = static_cast<std::size_t>(params.get_int("max_clients", 4096, 1));
  c.log_by_default = params.get_bool("log_experience", false);
  c.max_experience = static_cast<std::size_t>(params.get_int("max_experience", 65536, 1));
  c.replayed_policies = replica.replayed_policies;  // used once `experience` is set (linked)
  const std::string keys = params.get_string("gateway_keys", "");
  const std::string clients = params.get_string("gateway_clients", "");
  if (!keys.empty()) {
    try {
      c.curve_secret_key = transport::read_key_pair(keys, "gateway").secret_key;
      std::stringstream names(clients);
      for (std::string name; std::getline(names, name, ',');) {
        name.erase(0, name.find_first_not_of(' '));
        name.erase(name.find_last_not_of(' ') + 1);
        if (!name.empty()) {
          c.allowed_client_keys.insert(transport::read_key_pair(keys, name, true).public_key);
        }
      }
    } catch (const std::exception& e) {
      params.fail("gateway_keys", e.what());
    }
  }
  return c;
}

std::unique_ptr<gateway::ServiceGateway> start_gateway(const ReplicaConfig& replica,
                                                       const gateway::GatewayConfig& config,
                                                       const nodes::PolicyBankConfig& bank,
                                                       monitoring::ProcessMetrics* metrics) {
  std::map<std::string, std::vector<int>> servers;  // the replicas of this group
  const std::string prefix = replica.group->name + "-";
  for (const auto& [name, policies] : replica.replica_policies) {
    if (name.rfind(prefix, 0) == 0) servers[name] = policies;
  }
  nodes::PolicyBankConfig served = bank;  // outside requests: many rows of a policy per pass
  served.rows_per_pass = config.largest_batch();
  auto backend = std::make_unique<gateway::PolicyBankBackend>(replica.name, served, servers);
  std::unique_ptr<gateway::ServiceGateway> gateway;
  try {
    gateway = std::make_unique<gateway::ServiceGateway>(
        config, std::move(backend), metrics,
        [](const std::string& line) { std::cerr << line << "\n"; });
  } catch (const std::runtime_error& e) {
    std::cerr << e.what() << " (no inference service; /health/ready stays 503)\n";
    return nullptr;
  }
  std::cerr << replica.name << ": inference service on " << gateway->endpoint()
            << " (nodes/gateway/PROTOCOL.md)\n";
  if (metrics != nullptr) metrics->set_ready(true);
  return gateway;
}

}  // namespace tagflow::nodes
