#include "nodes/inference/inference_server.hpp"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "nodes/inference/inference_params.hpp"
#include "nodes/network_input.hpp"
#include "rl/learning/torchscript_policy.hpp"

namespace tagflow::nodes {
namespace {

// The last non-empty line of a LibTorch message (its traceback comes before the error).
std::string last_line(const std::string& text) {
  const std::size_t end = text.find_last_not_of("\n ");
  if (end == std::string::npos) return text;
  const std::size_t newline = text.rfind('\n', end);
  const std::size_t begin = newline == std::string::npos ? 0 : newline + 1;
  return text.substr(begin, end + 1 - begin);
}

// Why `policy` does not fit an env of `observation_size` floats and `num_actions` actions
// (empty when it does), probed on one zero observation.
std::string torchscript_mismatch(learning::TorchScriptPolicy& policy, int observation_size,
                                 int num_actions) {
  const std::vector<float> probe(static_cast<std::size_t>(observation_size), 0.0F);
  std::vector<float> scores;
  try {
    scores = policy.scores(probe.data(), 1, observation_size);
  } catch (const std::exception& e) {  // TorchScriptError, or the interpreter's own error
    return "does not run on observations of the env's width " + std::to_string(observation_size) +
           ": " + last_line(e.what());
  }
  if (scores.size() != static_cast<std::size_t>(num_actions)) {
    return "returns " + std::to_string(scores.size()) + " scores per observation, the env has " +
           std::to_string(num_actions) + " actions";
  }
  return {};
}

// Loads config.torchscript and checks it against the network's sizes; `fail` reports errors.
template <class Fail>
std::unique_ptr<learning::TorchScriptPolicy> load_policy(const InferenceConfig& config, Fail fail) {
  const std::string& path = config.torchscript;
  if (!std::filesystem::is_regular_file(path)) fail("no such file '" + path + "'");
  std::unique_ptr<learning::TorchScriptPolicy> policy;
  try {
    policy = std::make_unique<learning::TorchScriptPolicy>(path);
  } catch (const learning::TorchScriptError& e) {
    fail(e.what());
  }
  const std::string why =
      torchscript_mismatch(*policy, config.network.input_size, config.network.output_size);
  if (!why.empty()) fail("'" + path + "' " + why);
  return policy;
}

}  // namespace

InferenceConfig InferenceConfig::from_params(const NodeParams& params, std::uint64_t seed,
                                             int observation_size, int num_actions) {
  const InferenceParams p = InferenceParams::read(params);
  InferenceConfig c;
  c.network = {observation_size, p.hidden, num_actions};
  c.max_batch = p.max_batch;
  c.max_wait = p.max_wait;
  c.torchscript = p.torchscript;
  c.seed = seed;
  c.network.validate();
  if (!c.torchscript.empty()) {
    (void)load_policy(c, [&](const std::string& why) { params.fail("torchscript", why); });
  }
  return c;
}

InferenceServer::InferenceServer(const InferenceConfig& config)
    : config_(config), policy_(config.network, config.seed) {
  if (!config_.torchscript.empty()) {
    script_ = load_policy(config_, [](const std::string& why) -> void {
      throw ParamError("inference: param 'torchscript': " + why);
    });
  }
}

InferenceServer::~InferenceServer() = default;
InferenceServer::InferenceServer(InferenceServer&&) noexcept = default;
InferenceServer& InferenceServer::operator=(InferenceServer&&) noexcept = default;

void InferenceServer::on_weights(const WeightsMessage& weights) {
  if (script_) {
    ++weights_ignored_;
    return;
  }
  if (weights.version < policy_.version() && !any_version_next_) return;
  policy_.load_weights(learning::WeightsBuffer{weights.version, weights.values});
  any_version_next_ = false;
}

void InferenceServer::forward(const float* observations, std::size_t rows, std::int64_t* actions) {
  const auto count = static_cast<std::int64_t>(rows);
  if (script_) {
    const std::vector<std::int64_t> greedy =
        script_->act(observations, count, config_.network.input_size);
    std::copy(greedy.begin(), greedy.end(), actions);
  } else {
    policy_.act(observations, count, actions);
  }
  ++forward_passes_;
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
    if (r.observation_type == ObservationType::kUInt8) {
      const std::size_t at = stacked_.size();
      stacked_.resize(at + r.observations_u8.size());
      pixels_to_network_input(r.observations_u8.data(), r.observations_u8.size(),
                              stacked_.data() + at);
    } else {
      stacked_.insert(stacked_.end(), r.observations.begin(), r.observations.end());
    }
  }
  const std::size_t rows = stacked_.size() / width;
  actions_.resize(rows);
  for (std::size_t first = 0; first < rows; first += config_.max_batch) {
    const std::size_t count = std::min(config_.max_batch, rows - first);
    forward(stacked_.data() + first * width, count, actions_.data() + first);
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

void InferenceServer::enqueue(ObservationBatchMessage request, std::chrono::nanoseconds arrival) {
  if (request.observation_size != static_cast<std::size_t>(config_.network.input_size)) {
    throw std::invalid_argument("inference: observation width " +
                                std::to_string(request.observation_size) + ", network input " +
                                std::to_string(config_.network.input_size));
  }
  queued_rows_ += request.rows();
  queue_.push_back(std::move(request));
  arrivals_.push_back(arrival);
}

void InferenceServer::drop_queued_if(const std::function<bool(std::size_t index)>& drop) {
  std::size_t kept = 0;
  for (std::size_t i = 0; i < queue_.size(); ++i) {
    if (drop(i)) {
      queued_rows_ -= queue_[i].rows();
      continue;
    }
    if (kept != i) {
      queue_[kept] = std::move(queue_[i]);
      arrivals_[kept] = arrivals_[i];
    }
    ++kept;
  }
  queue_.resize(kept);
  arrivals_.resize(kept);
}

bool InferenceServer::batch_due(std::chrono::nanoseconds now) const {
  if (queue_.empty()) return false;
  return queued_rows_ >= config_.max_batch || now - arrivals_.front() >= config_.max_wait;
}

std::optional<std::chrono::nanoseconds> InferenceServer::deadline() const {
  if (queue_.empty()) return std::nullopt;
  return arrivals_.front() + config_.max_wait;
}

std::vector<ActionBatchMessage> InferenceServer::serve_queued() {
  std::vector<ObservationBatchMessage> held;
  held.swap(queue_);
  arrivals_.clear();
  queued_rows_ = 0;
  return serve(held);
}

}  // namespace tagflow::nodes
