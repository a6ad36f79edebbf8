// EvaluatorReactor: an evaluator replica in reactor mode. Each tag at which weights arrive, it
// hands them to its EvaluationSchedule (evaluation_schedule.hpp); an evaluation that reaches the
// target return requests the stop. It sends nothing, so it adds nothing to the run's digest; its
// evaluations are the same in every placement.
#pragma once

#include <atomic>
#include <limits>

#include "nodes/encoded_value.hpp"
#include "nodes/evaluator/evaluation_schedule.hpp"
#include "nodes/node_metrics.hpp"
#include "reactors/reactors.hpp"

namespace tagflow::nodes {

class EvaluatorReactor : public reactors::Reactor {
 public:
  reactors::InputMultiport<Encoded<WeightsMessage>> weights;

  EvaluatorReactor(std::string name, reactors::Environment& env, EvaluatorSettings settings,
                   std::size_t weights_width);

  [[nodiscard]] const EvaluationSchedule& schedule() const { return schedule_; }
  /// Updates `metrics` (outliving the run) from now on.
  void set_metrics(NodeMetrics* metrics) { metrics_ = metrics; }
  std::atomic<double> last_evaluation{std::numeric_limits<double>::quiet_NaN()};  // NaN: none yet

 private:
  EvaluationSchedule schedule_;
  NodeMetrics* metrics_ = nullptr;
};

}  // namespace tagflow::nodes
