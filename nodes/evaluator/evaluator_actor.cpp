#include "nodes/evaluator/evaluator_actor.hpp"

#include "nodes/actor_binding_base.hpp"
#include "nodes/actor_trace.hpp"

namespace tagflow::nodes {
namespace {

class EvaluatorActorImpl : public NodeActorBase<EvaluatorActor> {
 public:
  EvaluatorActorImpl(caf::actor_config& cfg, EvaluatorSettings settings, std::string name,
                     std::shared_ptr<ReplicaReport> report, NodeMetrics* metrics,
                     ActorRecovery recovery)
      : NodeActorBase(cfg, std::move(name), std::move(report), metrics, std::move(recovery)),
        schedule_(std::move(settings)),
        metrics_(metrics) {}

  behavior_type make_behavior() override {
    return traced<behavior_type>(
        replica_name(),
        [](actors::connect_atom, const std::string&, const std::string&, const caf::actor&) {},
        [](actors::connect_atom, const std::string&, const caf::actor&) {},
        [this](const actors::Offer& offer) {
          auto peer = sender_handle();
          if (!peer || done()) return;
          if (offer.port != "weights") return reject(transport::DropReason::kUnknownPort);
          add_peer(peer, false, offer.from);
          count_received(offer);
          send_to(peer, actors::Credit{"weights", 1, replica_name()});
        },
        [this](const actors::Credit&) { reject(transport::DropReason::kUnknownKind); },
        [this](const WeightsMessage& weights) { on_weights(weights); },
        [this](const actors::Leave& leave) { on_leave(leave); },
        [this](const actors::StopRun& stop) { on_stop_run(stop); });
  }

 private:
  void on_weights(const WeightsMessage& weights) {
    if (!accept(weights) || done()) return;
    const std::optional<double> mean = schedule_.on_weights(weights);
    report().weights_version.store(schedule_.weights_version(), std::memory_order_relaxed);
    if (metrics_ != nullptr) metrics_->set_weights_version(schedule_.weights_version());
    if (mean) {
      report().count.fetch_add(1, std::memory_order_relaxed);
      report().last_evaluation.store(*mean, std::memory_order_relaxed);
      if (metrics_ != nullptr) metrics_->add_evaluation(*mean);
      if (schedule_.target_reached()) return stop_run("target_return");
    }
    if (auto peer = sender_handle()) send_to(peer, actors::Credit{"weights", 1, replica_name()});
  }

  void record_results(ReplicaReport& report) override {
    report.evaluations = schedule_.evaluations();
    report.target_reached = schedule_.target_reached();
  }

  EvaluationSchedule schedule_;
  NodeMetrics* metrics_;
};

}  // namespace

EvaluatorActor spawn_evaluator_actor(caf::actor_system& system, EvaluatorSettings settings,
                                     std::string name, std::shared_ptr<ReplicaReport> report,
                                     NodeMetrics* metrics, ActorRecovery recovery) {
  return system.spawn<EvaluatorActorImpl>(std::move(settings), std::move(name), std::move(report),
                                          metrics, std::move(recovery));
}

}  // namespace tagflow::nodes
