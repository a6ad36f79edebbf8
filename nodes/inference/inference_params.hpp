// The inference server's params as a cluster file gives them, read and range-checked without
// LibTorch, so that `tagflow up` refuses a bad inference param before any process starts
// (hosts/replica_params_check.hpp); InferenceConfig::from_params (inference_server.hpp) and the
// policy bank's configuration (nodes/kind/torch_replica_config.hpp) build on these.
// Errors: ParamError naming the node, the param and its line. Pure; thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "nodes/node_params.hpp"

namespace tagflow::nodes {

struct InferenceParams {
  std::vector<int> hidden{64, 64};
  std::size_t max_batch = 64;  // >= 1
  std::chrono::nanoseconds max_wait{0};
  std::string torchscript;  // a file to serve instead of the learner's weights (loaded
                            // and checked against the env by the process that serves it)

  /// A single-policy server: max_batch, max_wait, hidden, torchscript; refuses others.
  static InferenceParams read(const NodeParams& params);
};

/// The params of an inference replica serving a multi-agent cluster's policies: max_batch,
/// max_wait and the service gateway's gateway_port (+ the replica's index ≤ 65535),
/// gateway_bind, max_in_flight, max_queue, gateway_keys and gateway_clients (together or not at
/// all); refuses others.
void check_policy_bank_params(const NodeParams& params, int replica_index);

/// The address a gateway binds: `gateway_bind` (default 127.0.0.1), checked by
/// check_policy_bank_params().
[[nodiscard]] std::string gateway_bind(const NodeParams& params);

}  // namespace tagflow::nodes
