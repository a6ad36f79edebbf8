#include "hosts/actor/actor_cluster.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

#include <caf/send.hpp>

#include "actors/actor_system_setup.hpp"
#include "hosts/actor/replica_host.hpp"
#include "hosts/progress_output.hpp"
#include "hosts/run_combine.hpp"
#include "nodes/actor_messages.hpp"

namespace tagflow::hosts {
namespace {

// The live line of actor mode's single placement, from the replicas' reports.
class ProgressPrinter {
 public:
  explicit ProgressPrinter(std::vector<HostedReplica>& replicas) : replicas_(replicas) {}
  void tick(double elapsed) {
    std::int64_t steps = 0, updates = 0;
    double recent = 0.0, evaluation = std::numeric_limits<double>::quiet_NaN();
    std::uint64_t version = 0;
    int samplers = 0;
    for (const HostedReplica& r : replicas_) {
      const nodes::NodeKind& kind = *r.config.kind;
      if (kind.steps_env) {
        steps += r.report->count.load();
        recent += r.report->last_return.load();
        samplers += r.report->done.load() ? 0 : 1;
      }
      if (kind.trains) {
        updates = r.report->count.load();
        version = r.report->weights_version.load();
      }
      const double evaluated = r.report->last_evaluation.load();
      if ((kind.trains || kind.publishes_evaluations) && !std::isnan(evaluated)) {
        evaluation = evaluated;
      }
    }
    ProgressFigures figures;
    figures.elapsed = elapsed;
    figures.env_steps = steps;
    figures.updates = updates;
    figures.mean_return = samplers > 0 ? recent / samplers : 0.0;
    figures.evaluation = evaluation;
    figures.weights_version = version;
    figures.samplers = samplers;
    output_.show(figures);
  }
  void finish() { output_.finish(); }

 private:
  std::vector<HostedReplica>& replicas_;
  ProgressOutput output_;
};

}  // namespace

hosts::RunSummary run_actor_cluster(const cluster::ClusterConfig& config,
                                    const ActorClusterOptions& options) {
  const hosts::ClusterFacts facts = hosts::ClusterFacts::of(config);
  const cluster::LinkPlan links = cluster::plan_links(config);
  const std::vector<WiringStep> wiring = plan_wiring(config, links);

  auto system_config = actors::make_actor_system_config({false, options.worker_threads});
  nodes::add_node_message_types(*system_config);
  caf::actor_system system{*system_config};
  ReplicaHost host(system, config, facts);
  std::map<std::string, caf::actor> by_name;
  try {
    for (const cluster::NodeConfig& node : config.nodes) {
      for (int i = 0; i < node.replicas; ++i) {
        const HostedReplica& r = host.spawn(cluster::replica_name(node, i));
        by_name[r.config.name] = r.handle;
      }
    }
  } catch (...) {
    for (const HostedReplica& r : host.replicas()) caf::anon_send(r.handle, actors::StopRun{""});
    throw;
  }
  for (const WiringStep& step : wiring) host.wire(step, by_name.at(step.peer));

  ProgressPrinter printer(host.replicas());
  WaitOptions wait;
  wait.seconds = config.stop.seconds;
  if (options.progress) wait.on_tick = [&printer](double elapsed) { printer.tick(elapsed); };
  hosts::ProcessResult result;
  result.process = config.name;
  result.numerics = numerics::process_report();
  result.mode = "actor";
  result.seconds = host.wait(wait);
  if (options.progress) printer.finish();
  system.await_all_actors_done();
  result.replicas = host.results(links);
  result.stop_reason = host.stop_reason();
  hosts::RunSummary summary = hosts::combine_results(config, {result}, "single");
  summary.mode = "actor";
  return summary;
}

}  // namespace tagflow::hosts
