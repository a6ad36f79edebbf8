// libFuzzer target: the inference service's request decoder (nodes/gateway/PROTOCOL.md), the one
// decoder that reads frames from programs outside the cluster. The first three bytes choose the
// env's shape (observation_size 1-32, agents 1-8, max_rows 1-16); the rest is the request frame.
//
// Beyond "no crash, no sanitizer report": decode_request() never throws; a refusal carries one of
// the codes the protocol lets the decoder give (section 6), a reason, and encodes to a reply; an
// accepted request keeps every rule the decoder promises (agents ascending and in the env,
// rows × width floats per agent, all finite, rows within max_rows, finite rewards).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <variant>

#include "nodes/gateway/gateway_protocol.hpp"

namespace tg = tagflow::gateway;

namespace {

void check_refusal(const tg::GatewayError& error) {
  // The codes that need only the frame and the env's shape; the rest (busy, not_served, ...) are
  // the gateway's.
  static const std::set<std::string> kDecoderCodes = {
      "malformed", "version", "unknown_op", "unknown_agent", "width", "nan", "too_large"};
  if (kDecoderCodes.count(error.code) == 0) std::abort();
  if (error.reason.empty()) std::abort();
  if (tg::encode_error(error).empty()) std::abort();
}

void check_request(const tg::GatewayRequest& request, const tg::RequestShape& shape) {
  for (const auto& [agent, reward] : request.rewards) {
    if (agent >= shape.num_agents || !std::isfinite(reward)) std::abort();
  }
  for (const auto& done : request.dones) {
    if (done.first >= shape.num_agents) std::abort();
  }
  if (request.op != tg::GatewayOp::act) return;
  if (request.rows == 0 || request.rows > shape.max_rows) std::abort();
  if (!request.rows_given && request.rows != 1) std::abort();
  // A bare observation names no agent: the gateway gives it its one agent.
  std::size_t agents = 1;
  if (request.single) {
    if (!request.agents.empty()) std::abort();
  } else {
    if (request.agents.empty()) std::abort();
    if (!std::is_sorted(request.agents.begin(), request.agents.end()) ||
        std::adjacent_find(request.agents.begin(), request.agents.end()) != request.agents.end()) {
      std::abort();
    }
    if (request.agents.back() >= shape.num_agents) std::abort();
    agents = request.agents.size();
  }
  const std::size_t floats = agents * std::size_t{request.rows} * shape.observation_size;
  if (request.observations.size() != floats) std::abort();
  for (const float value : request.observations) {
    if (!std::isfinite(value)) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;
  tg::RequestShape shape;
  shape.observation_size = 1U + data[0] % 32U;
  shape.num_agents = 1U + data[1] % 8U;
  shape.max_rows = 1U + data[2] % 16U;
  const tg::DecodeResult result = tg::decode_request(data + 3, size - 3, shape);
  if (const auto* error = std::get_if<tg::GatewayError>(&result)) {
    check_refusal(*error);
  } else {
    check_request(std::get<tg::GatewayRequest>(result), shape);
  }
  return 0;
}
