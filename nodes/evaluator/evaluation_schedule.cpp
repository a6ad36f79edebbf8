#include "nodes/evaluator/evaluation_schedule.hpp"

namespace tagflow::nodes {

EvaluatorSettings EvaluatorSettings::of(const ReplicaConfig& replica) {
  EvaluatorSettings s;
  s.evaluation = *replica.evaluation;
  s.every = static_cast<std::uint64_t>(replica.params.get_int("every", 100));
  s.target_return = replica.target_return;
  return s;
}

EvaluationSchedule::EvaluationSchedule(EvaluatorSettings settings)
    : settings_(std::move(settings)),
      evaluator_(std::make_unique<Evaluator>(
          settings_.evaluation.env_id, settings_.evaluation.hidden, settings_.evaluation.episodes,
          settings_.evaluation.seed, settings_.evaluation.max_steps)) {}

std::optional<double> EvaluationSchedule::on_weights(const WeightsMessage& weights) {
  version_ = weights.version;
  if (target_reached_) return std::nullopt;
  if (last_evaluated_ && weights.version < *last_evaluated_) last_evaluated_.reset();
  if (last_evaluated_ && weights.version < *last_evaluated_ + settings_.every) return std::nullopt;
  if (!last_evaluated_ && weights.version < settings_.every) return std::nullopt;
  last_evaluated_ = weights.version;
  const double mean = evaluator_->mean_return(weights.values);
  evaluations_.push_back(mean);
  if (settings_.target_return && mean >= *settings_.target_return) target_reached_ = true;
  return mean;
}

}  // namespace tagflow::nodes
