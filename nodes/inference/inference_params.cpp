#include "nodes/inference/inference_params.hpp"

#include "common/bind_address.hpp"
#include "nodes/cluster/cluster_config.hpp"
#include "nodes/cluster/service_endpoints.hpp"

namespace tagflow::nodes {
namespace {

/// max_batch and max_wait, bounded as a policy's are (policies.NAME, configs/README.md).
void read_batching(const NodeParams& params, InferenceParams& p) {
  const std::int64_t rows = params.get_int("max_batch", 64, 1);
  if (rows > cluster::kMaxBatchRows) {
    params.fail("max_batch",
                "at most " + std::to_string(cluster::kMaxBatchRows) + " rows per forward pass");
  }
  p.max_batch = static_cast<std::size_t>(rows);
  p.max_wait = params.get_duration("max_wait", std::chrono::nanoseconds(0));
  if (p.max_wait > cluster::kMaxBatchWait) {
    params.fail("max_wait",
                "at most 24 hours (1440m): it is how long a request may wait for a batch");
  }
}

}  // namespace

InferenceParams InferenceParams::read(const NodeParams& params) {
  params.check_known({"max_batch", "max_wait", "hidden", "torchscript"});
  InferenceParams p;
  p.hidden = params.get_sizes("hidden", p.hidden);
  read_batching(params, p);
  p.torchscript = params.get_string("torchscript", "");
  return p;
}

void check_policy_bank_params(const NodeParams& params, int replica_index) {
  params.check_known({"max_batch", "max_wait", "gateway_port", "gateway_bind", "max_in_flight",
                      "max_queue", "max_clients", "gateway_keys", "gateway_clients",
                      "log_experience", "max_experience"});
  InferenceParams batching;
  read_batching(params, batching);
  (void)params.get_bool("log_experience", false);
  (void)params.get_int("max_experience", 65536, 1);
  (void)params.get_int("max_in_flight", 8, 1);
  (void)params.get_int("max_queue", 1024, 1);
  (void)params.get_int("max_clients", 4096, 1);
  if (params.has("gateway_port") && params.get_int("gateway_port", 0, 1) + replica_index > 65535) {
    params.fail("gateway_port", std::to_string(params.get_int("gateway_port", 0, 1)) +
                                    " + the replica index is above 65535");
  }
  if (const std::string problem = zmq_bind_problem(gateway_bind(params)); !problem.empty()) {
    params.fail("gateway_bind", problem);
  }
  const bool keys = !params.get_string("gateway_keys", "").empty();
  const bool clients = !params.get_string("gateway_clients", "").empty();
  if (keys != clients) {
    params.fail(keys ? "gateway_clients" : "gateway_keys",
                "gateway_keys (a key directory) and gateway_clients (the names of the client "
                "keys it admits) go together");
  }
}

std::string gateway_bind(const NodeParams& params) {
  return params.get_string("gateway_bind", cluster::kDefaultGatewayBind);
}

}  // namespace tagflow::nodes
