#include "nodes/inference/inference_reactor.hpp"

#include <chrono>
#include <stdexcept>

namespace tagflow::nodes {

InferenceReactor::InferenceReactor(std::string name, reactors::Environment& env,
                                   const InferenceConfig& config, const InferencePortWidths& widths)
    : reactors::Reactor(std::move(name), env),
      observations("observations", this, widths.observations),
      weights("weights", this, widths.weights),
      actions("actions", this, widths.actions),
      server_(config),
      actions_digest_(widths.actions, env) {
  if (widths.observations != widths.actions) {
    throw std::invalid_argument("inference " + this->name() + ": " +
                                std::to_string(widths.observations) + " observation channels but " +
                                std::to_string(widths.actions) +
                                " action channels (each requester needs its answer channel)");
  }
  if (widths.weights > 0) {
    reaction("load_weights").triggers(weights).body([this] {
      for (std::size_t c = 0; c < weights.size(); ++c) {
        if (!weights[c].is_present()) continue;
        const std::uint64_t before = server_.weights_version();
        server_.on_weights(weights[c].get()->value());
        if (server_.weights_version() != before || !latest_weights_) {
          latest_weights_ = weights[c].get();
        }
      }
      weights_version.store(server_.weights_version(), std::memory_order_relaxed);
      if (metrics_ != nullptr) metrics_->set_weights_version(server_.weights_version());
    });
  }
  if (widths.observations == 0) return;
  reaction("serve").triggers(observations).effects(actions).body([this] {
    requests_.clear();
    channels_.clear();
    for (std::size_t c = 0; c < observations.size(); ++c) {
      if (!observations[c].is_present()) continue;
      requests_.push_back(observations[c].get()->value());
      channels_.push_back(c);
    }
    const auto started = std::chrono::steady_clock::now();
    std::vector<ActionBatchMessage> answers = server_.serve(requests_);
    if (metrics_ != nullptr) {
      std::size_t rows = 0;
      for (const auto& r : requests_) rows += r.rows();
      metrics_->add_inference_batch(
          rows, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    }
    for (std::size_t i = 0; i < answers.size(); ++i) {
      const std::size_t c = channels_[i];
      auto answer = make_encoded(std::move(answers[i]));
      actions_digest_.record(c, tag(), answer->bytes());
      actions[c].set(std::move(answer));  // moved: no count taken and dropped again
    }
    rows_served.store(rows_before_ + static_cast<std::int64_t>(server_.rows_served()),
                      std::memory_order_relaxed);
  });
}

void InferenceReactor::save(StateWriter& out) const {
  out.boolean(latest_weights_ != nullptr);
  if (latest_weights_) {
    const transport::Payload& bytes = latest_weights_->bytes();
    out.bytes(std::string_view(reinterpret_cast<const char*>(bytes.bytes()), bytes.size));
  }
  actions_digest_.save(out);
  out.i64(rows_served.load(std::memory_order_relaxed));
}

void InferenceReactor::load(StateReader& in) {
  if (in.boolean()) {
    const std::string bytes = in.bytes();
    std::string error;
    latest_weights_ = decode_encoded<WeightsMessage>(
        transport::Payload::copy_of(bytes.data(), bytes.size()), &error);
    if (!latest_weights_) in.fail("a weights message (" + error + ")");
    server_.on_weights(latest_weights_->value());
    weights_version.store(server_.weights_version(), std::memory_order_relaxed);
  }
  actions_digest_.load(in);
  rows_before_ = in.i64();
  rows_served.store(rows_before_, std::memory_order_relaxed);
}

}  // namespace tagflow::nodes
