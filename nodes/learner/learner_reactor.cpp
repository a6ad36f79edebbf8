#include "nodes/learner/learner_reactor.hpp"

namespace tagflow::nodes {

LearnerReactor::LearnerReactor(std::string name, reactors::Environment& env,
                               const LearnerConfig& config, const LearnerPortWidths& widths,
                               std::unique_ptr<Evaluator> evaluator,
                               std::optional<double> target_return)
    : reactors::Reactor(std::move(name), env),
      batches("batches", this, widths.batches),
      priorities("priorities", this, widths.priorities),
      weights("weights", this, widths.weights),
      server_(config),
      evaluator_(std::move(evaluator)),
      target_return_(target_return),
      priorities_digest_(widths.priorities),
      weights_digest_(widths.weights) {
  reaction("initial_weights").triggers(startup()).effects(weights).body([this] {
    send_weights(server_.weights());
  });
  if (widths.batches == 0) return;
  reaction("update").triggers(batches).effects(priorities, weights).body([this] {
    PriorityUpdateMessage all;
    std::optional<WeightsMessage> newest;
    for (std::size_t c = 0; c < batches.size(); ++c) {
      if (!batches[c].is_present()) continue;
      for (const SampleBatchMessage& batch : *batches[c].get()) {
        if (target_reached_) break;
        LearnerOutput out = server_.on_batch(batch);
        all.keys.insert(all.keys.end(), out.priorities.keys.begin(), out.priorities.keys.end());
        all.priorities.insert(all.priorities.end(), out.priorities.priorities.begin(),
                              out.priorities.priorities.end());
        if (out.weights) newest = std::move(out.weights);
        updates.store(server_.updates(), std::memory_order_relaxed);
        maybe_evaluate();
      }
    }
    if (!all.keys.empty()) {
      const Bytes bytes = encode(all);
      const auto shared = reactors::make_shared_value<PriorityUpdateMessage>(std::move(all));
      for (std::size_t c = 0; c < priorities.size(); ++c) {
        priorities[c].set(shared);
        priorities_digest_.record(c, tag(), bytes);
      }
    }
    if (newest) send_weights(*newest);
  });
}

void LearnerReactor::send_weights(const WeightsMessage& message) {
  const Bytes bytes = encode(message);
  const auto shared = reactors::make_shared_value<WeightsMessage>(message);
  for (std::size_t c = 0; c < weights.size(); ++c) {
    weights[c].set(shared);
    weights_digest_.record(c, tag(), bytes);
  }
}

void LearnerReactor::maybe_evaluate() {
  if (!evaluator_ || !target_return_) return;
  if (server_.updates() % server_.config().eval_every != 0) return;
  const double mean = evaluator_->mean_return(server_.weights().values);
  evaluations_.push_back(mean);
  last_evaluation.store(mean, std::memory_order_relaxed);
  if (mean >= *target_return_) {
    target_reached_ = true;
    request_stop();
  }
}

}  // namespace tagflow::nodes
