// The inference kind: an inference server that answers observations with actions from the
// learner's latest weights (one policy), or a policy bank serving the policies of a multi-agent
// file, optionally with the inference service for outside programs (nodes/gateway/PROTOCOL.md).
// Its reactor and actor need LibTorch (inference_kind_torch.cpp, installed by
// nodes/kind/torch_registry.hpp).
#include "nodes/gateway/gateway_metrics.hpp"
#include "nodes/inference/inference_params.hpp"
#include "nodes/kind/process_result.hpp"
#include "nodes/kind/replica_config.hpp"
#include "nodes/node_metrics.hpp"
#include "nodes/replica_report.hpp"

namespace tagflow::nodes {

NodeKind& inference_kind();

namespace inference_kind_parts {

void configure(ReplicaConfig& r, const cluster::ClusterConfig& config, const ClusterFacts& facts) {
  if (!config.multi_agent.empty()) {
    r.network_seed = config.seed;  // policy p starts from seed + p (PolicyBankConfig)
    check_policy_bank_params(r.params, r.index);
    return;
  }
  take_learner_hidden(r, config, facts);
  (void)InferenceParams::read(r.params);  // every param, before any process starts
}

void actor_result(const ReplicaConfig& replica, const ReplicaReport& report, ReplicaResult& r) {
  if (replica.experience_linked) r.outside_transitions = report.outside_transitions.load();
}

NodeKind make_kind() {
  NodeKind k;
  k.name = "inference";
  k.inputs = {"observations", "weights"};
  k.outputs = {"actions", multi_agent_output("experience", "transitions")};
  k.count_unit = "rows";
  k.count_family = family::kInferenceRequests;
  k.hosts_policies = true;
  k.needs_torch = true;
  k.metrics = node_families({family::kInferenceRequests, family::kInferenceBatchSize,
                             family::kInferenceRequestDuration, family::kWeightsVersion});
  for (const monitoring::MetricSpec& spec : gateway::metric_families()) k.metrics.push_back(spec);
  k.configure = configure;
  k.actor_result = actor_result;
  return k;
}

}  // namespace inference_kind_parts

NodeKind& inference_kind() {
  static NodeKind kind = inference_kind_parts::make_kind();
  return kind;
}

}  // namespace tagflow::nodes
