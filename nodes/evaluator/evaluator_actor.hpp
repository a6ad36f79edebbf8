// The evaluator kind in actor mode: it subscribes to the learner's weights (granting one credit
// at a time, as inference servers do), hands them to its EvaluationSchedule
// (evaluation_schedule.hpp), and stops the run (StopRun "target_return") when an evaluation
// reaches the target return. Its typed interface: every node's control protocol plus weights.
#pragma once

#include <memory>
#include <string>

#include <caf/actor_system.hpp>
#include <caf/typed_actor.hpp>

#include "nodes/actor_checkpoint.hpp"
#include "nodes/actor_interfaces.hpp"
#include "nodes/evaluator/evaluation_schedule.hpp"
#include "nodes/node_metrics.hpp"
#include "nodes/replica_report.hpp"

namespace tagflow::nodes {

using EvaluatorActor = NodeActor::extend<caf::reacts_to<WeightsMessage>>;

[[nodiscard]] EvaluatorActor spawn_evaluator_actor(caf::actor_system& system,
                                                   EvaluatorSettings settings, std::string name,
                                                   std::shared_ptr<ReplicaReport> report,
                                                   NodeMetrics* metrics,
                                                   ActorRecovery recovery = {});

}  // namespace tagflow::nodes
