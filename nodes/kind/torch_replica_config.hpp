// The LibTorch halves of a ReplicaConfig (nodes/kind/replica_config.hpp): the learner's and the
// inference server's configurations, built the same way for both modes from the replica's
// params, the env's network shape and the cluster seed. Links LibTorch (through the node kinds'
// configs); torch-free hosts never include it.
// Errors: nodes::ParamError for a bad param (naming node and param; a TorchScript file that does
// not load or does not fit the env). Pure functions; thread-safe.
#pragma once

#include <memory>
#include <optional>

#include "nodes/gateway/service_gateway.hpp"
#include "nodes/inference/inference_server.hpp"
#include "nodes/inference/policy_bank.hpp"
#include "nodes/kind/replica_config.hpp"
#include "nodes/learner/learner_server.hpp"

namespace tagflow::nodes {

/// The configuration of learner replica `replica` (kind learner).
[[nodiscard]] nodes::LearnerConfig learner_config(const ReplicaConfig& replica);

/// The configuration of inference replica `replica` (kind inference).
[[nodiscard]] nodes::InferenceConfig inference_config(const ReplicaConfig& replica);

/// The policy bank of inference replica `replica` in a multi-agent cluster (replica.policies
/// non-empty): its policies, with max_batch and max_wait checked like a single-policy server's.
[[nodiscard]] nodes::PolicyBankConfig policy_bank_config(const ReplicaConfig& replica);

/// The inference service gateway of inference replica `replica` (nodes/gateway/PROTOCOL.md):
/// nullopt unless the group has `gateway_port` and the replica hosts policies. Replica i listens
/// on gateway_bind (127.0.0.1 by default) : gateway_port + i; max_batch, max_wait, max_in_flight
/// and max_queue are its limits; log_experience (false) makes episodes logged unless they say
/// otherwise, max_experience (65536) bounds the logged transitions waiting for the replay (the
/// binding makes the queue when the replica's `experience` port is linked). With `gateway_keys:
/// DIR` and `gateway_clients: "a,b"` it is a CURVE server with DIR/gateway.key that admits only the
/// public keys DIR/a.pub, DIR/b.pub (pairs from `tagflow keys generate DIR --name gateway --name a
/// --name b`).
[[nodiscard]] std::optional<gateway::GatewayConfig> gateway_config(const ReplicaConfig& replica);

/// Starts the gateway of inference replica `replica` (both modes): its own PolicyBank of the
/// replica's policies (`bank`, with up to the largest max_batch rows of a policy per pass), the
/// other replicas of its group named in refusals, refusals logged to stderr, and `metrics` (may be
/// null) marked ready once it serves. Weights the replica loads must be handed to offer_weights().
/// A port that cannot be bound is reported on stderr and gives null: the replica runs on without
/// its service (not ready), as it does without a metrics endpoint.
[[nodiscard]] std::unique_ptr<gateway::ServiceGateway> start_gateway(
    const ReplicaConfig& replica, const gateway::GatewayConfig& config,
    const nodes::PolicyBankConfig& bank, monitoring::ProcessMetrics* metrics);

}  // namespace tagflow::nodes

namespace tagflow::hosts {
using nodes::gateway_config;
using nodes::inference_config;
using nodes::learner_config;
using nodes::policy_bank_config;
using nodes::start_gateway;
}  // namespace tagflow::hosts
