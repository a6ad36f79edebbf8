#include "nodes/evaluator/evaluator_reactor.hpp"

namespace tagflow::nodes {

EvaluatorReactor::EvaluatorReactor(std::string name, reactors::Environment& env,
                                   EvaluatorSettings settings, std::size_t weights_width)
    : reactors::Reactor(std::move(name), env),
      weights("weights", this, weights_width),
      schedule_(std::move(settings)) {
  reaction("evaluate").triggers(weights).body([this] {
    for (std::size_t c = 0; c < weights.size(); ++c) {
      if (!weights[c].is_present()) continue;
      const std::optional<double> mean = schedule_.on_weights(weights[c].get()->value());
      if (metrics_ != nullptr) metrics_->set_weights_version(schedule_.weights_version());
      if (!mean) continue;
      last_evaluation.store(*mean, std::memory_order_relaxed);
      if (metrics_ != nullptr) metrics_->add_evaluation(*mean);
      if (schedule_.target_reached()) request_stop();
    }
  });
}

}  // namespace tagflow::nodes
