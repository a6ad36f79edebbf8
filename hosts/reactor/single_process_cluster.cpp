#include "hosts/reactor/single_process_cluster.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "hosts/progress_output.hpp"
#include "hosts/run_combine.hpp"
#include "nodes/cluster/link_plan.hpp"
#include "nodes/kind/replica_binding.hpp"

namespace tagflow::hosts {
namespace {

using cluster::ClusterConfig;

// Live progress on stderr (and the `seconds` stop), from its own thread.
class ProgressLine {
 public:
  ProgressLine(std::vector<std::unique_ptr<ReplicaBinding>>& replicas, reactors::Environment& env,
               bool print, std::optional<double> seconds)
      : replicas_(replicas),
        env_(env),
        print_(print),
        seconds_(seconds),
        start_(std::chrono::steady_clock::now()),
        thread_([this] { loop(); }) {}
  ~ProgressLine() { finish(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  void finish() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
    output_.finish();
  }
  [[nodiscard]] bool timed_out() const { return timed_out_.load(); }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);  // guards done_
    while (!wake_.wait_for(lock, std::chrono::milliseconds(250), [this] { return done_; })) {
      const auto now = std::chrono::steady_clock::now();
      const double elapsed = std::chrono::duration<double>(now - start_).count();
      if (seconds_ && elapsed >= *seconds_ && !timed_out_.exchange(true)) env_.request_stop();
      if (!print_) continue;
      std::int64_t steps = 0, updates = 0;
      double recent = 0.0, evaluation = std::numeric_limits<double>::quiet_NaN();
      std::uint64_t version = 0;
      int samplers = 0;
      for (const auto& r : replicas_) {
        const ReplicaProgress p = r->progress();
        const nodes::NodeKind& kind = r->kind();
        if (kind.steps_env) {
          steps += p.env_steps;
          recent += p.last_return;
          ++samplers;
        }
        if (kind.trains) updates = p.updates;
        // The learner's, an evaluator's, or a multi-agent env's own greedy evaluations.
        if ((kind.trains || kind.publishes_evaluations || kind.steps_env) &&
            !std::isnan(p.last_evaluation)) {
          evaluation = p.last_evaluation;
        }
        version = std::max(version, p.weights_version);
      }
      ProgressFigures figures;
      figures.elapsed = elapsed;
      figures.env_steps = steps;
      figures.updates = updates;
      figures.mean_return = samplers > 0 ? recent / samplers : 0.0;
      figures.evaluation = evaluation;
      figures.weights_version = version;
      output_.show(figures);
    }
  }

  std::vector<std::unique_ptr<ReplicaBinding>>& replicas_;
  reactors::Environment& env_;
  bool print_;
  std::optional<double> seconds_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false;      // guarded by mutex_
  ProgressOutput output_;  // written by the thread, finished after it ends
  std::atomic<bool> timed_out_{false};
  std::thread thread_;
};

}  // namespace

RunSummary run_single_process_cluster(const ClusterConfig& config,
                                      const SingleProcessOptions& options) {
  const cluster::LinkPlan links = cluster::plan_links(config);
  const ClusterFacts facts = ClusterFacts::of(config);

  reactors::EnvironmentConfig env_config;
  env_config.workers = std::max(1U, options.workers);
  env_config.start_time_ns = 0;
  env_config.keepalive = true;
  env_config.cutoff_never_behind = true;  // every proposal goes through the hook below
  reactors::Environment env(env_config);

  // The cutoff (nodes/README.md): the earliest stop any reactor (or the `seconds` timer)
  // proposes. In one program the stop happens right there.
  std::optional<reactors::Tag> cutoff;  // written by the advancing worker only
  reactors::FederationHooks hooks;
  hooks.stop_requested = [&env, &cutoff](reactors::Tag proposed) {
    if (!cutoff || proposed < *cutoff) cutoff = proposed;
    env.stop_at(proposed);
  };
  env.set_federation_hooks(std::move(hooks));

  // Every replica in file order; every link of the plan with its connection's delay.
  std::vector<std::unique_ptr<ReplicaBinding>> replicas;
  std::map<std::string, ReplicaBinding*> by_name;
  for (const cluster::NodeConfig& node : config.nodes) {
    for (int i = 0; i < node.replicas; ++i) {
      ReplicaSetup setup = replica_setup(config, links, facts, cluster::replica_name(node, i));
      setup.round_period = options.round_period;
      replicas.push_back(make_replica(setup, env));
      by_name[setup.config.name] = replicas.back().get();
    }
  }
  for (const cluster::Link& link : links.links) {
    env.connect(by_name.at(link.from.replica)->output(link.from.port, link.from.channel),
                by_name.at(link.to.replica)->input(link.to.port, link.to.channel), link.after);
  }

  const auto start = std::chrono::steady_clock::now();
  ProgressLine progress(replicas, env, options.progress, config.stop.seconds);
  env.run();
  progress.finish();

  ProcessResult result;
  result.process = "single";
  result.numerics = numerics::process_report();
  result.mode = cluster::to_string(config.mode);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.cutoff = cutoff;
  result.stop_reason = stop_reason(replicas, progress.timed_out());
  for (const auto& r : replicas) result.replicas.push_back(r->result(cutoff));
  return combine_results(config, {result}, "single");
}

}  // namespace tagflow::hosts
