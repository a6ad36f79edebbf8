#include "nodes/inference/inference_server.hpp"

#include <algorithm>
#include <stdexcept>

namespace tagflow::nodes {

InferenceConfig InferenceConfig::from_params(const NodeParams& params, std::uint64_t seed,
                                             int observation_size, int num_actions) {
  params.check_known({"max_batch", "max_wait", "hidden"});
  InferenceConfig c;
  c.network = {observation_size, params.get_sizes("hidden", {64, 64}), num_actions};
  c.max_batch = static_cast<std::size_t>(params.get_int("max_batch", 64, 1));
  c.max_wait = params.get_duration("max_wait", std::chrono::nanoseconds(0));
  c.seed = seed;
  c.network.validate();
  return c;
}

InferenceServer::InferenceServer(const InferenceConfig& config)
    : config_(config), policy_(config.network, config.seed) {}

void InferenceServer::on_weights(const WeightsMessage& weights) {
  if (weights.version < policy_.version()) return;
  policy_.load_weights(learning::WeightsBuffer{weights.version, weights.values});
}

std::vector<ActionBatchMessage> InferenceServer::serve(
    const std::vector<ObservationBatchMessage>& requests) {
  const auto width = static_cast<std::size_t>(config_.network.input_size);
  stacked_.clear();
  for (const auto& r : requests) {
    if (r.observation_size != width) {
      throw std::invalid_argument("inference: observation width " +
                                  std::to_string(r.observation_size) + ", network input " +
                                  std::to_string(width));
    }
    stacked_.insert(stacked_.end(), r.observations.begin(), r.observations.end());
  }
  const std::size_t rows = stacked_.size() / width;
  actions_.resize(rows);
  for (std::size_t first = 0; first < rows; first += config_.max_batch) {
    const std::size_t count = std::min(config_.max_batch, rows - first);
    policy_.act(stacked_.data() + first * width, static_cast<std::int64_t>(count),
                actions_.data() + first);
    ++forward_passes_;
  }
  rows_served_ += rows;
  std::vector<ActionBatchMessage> out;
  std::size_t row = 0;
  for (const auto& r : requests) {
    ActionBatchMessage a;
    a.source = r.source;
    a.weights_version = policy_.version();
    a.actions.assign(actions_.begin() + static_cast<std::ptrdiff_t>(row),
                     actions_.begin() + static_cast<std::ptrdiff_t>(row + r.rows()));
    row += r.rows();
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace tagflow::nodes
