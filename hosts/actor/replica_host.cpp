#include "hosts/actor/replica_host.hpp"

#include <stdexcept>
#include <thread>

#include "nodes/actor_messages.hpp"
#include "nodes/cluster/process_plan.hpp"
#include "nodes/kind/node_kind.hpp"

namespace tagflow::hosts {

ReplicaHost::ReplicaHost(caf::actor_system& system, const cluster::ClusterConfig& config,
                         const hosts::ClusterFacts& facts)
    : system_(system), config_(config), facts_(facts) {}

HostedReplica& ReplicaHost::spawn(const std::string& name, nodes::NodeMetrics* metrics) {
  return spawn(replica_config(config_, facts_, name), metrics);
}

HostedReplica& ReplicaHost::spawn(ReplicaConfig config, nodes::NodeMetrics* metrics,
                                  nodes::ActorRecovery recovery) {
  HostedReplica r;
  r.config = std::move(config);
  r.report = std::make_shared<nodes::ReplicaReport>(r.config.name, r.config.kind->name);
  r.handle = spawn_replica(system_, ReplicaSpawnSetup{r.config, r.report, metrics, recovery});
  replicas_.push_back(std::move(r));
  return replicas_.back();
}

HostedReplica* ReplicaHost::find(const std::string& name) {
  for (HostedReplica& r : replicas_)
    if (r.config.name == name) return &r;
  return nullptr;
}

void ReplicaHost::wire(const WiringStep& step, const caf::actor& peer) {
  HostedReplica* r = find(step.initiator);
  if (r == nullptr) throw std::logic_error("wiring step for a replica not hosted here");
  caf::anon_send(r->handle, actors::connect_atom::value, step.port, step.peer, peer);
}

double ReplicaHost::wait(const WaitOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  auto next_tick = start + options.tick;
  std::optional<std::chrono::steady_clock::time_point> first_end;
  bool stop_sent = false;
  const auto stop_all = [&](const std::string& reason) {
    for (const HostedReplica& r : replicas_) caf::anon_send(r.handle, actors::StopRun{reason});
    stop_sent = true;
  };
  for (;;) {
    bool all_done = true, any_done = false;
    for (const HostedReplica& r : replicas_) {
      const bool done = r.report->done.load();
      all_done = all_done && done;
      any_done = any_done || done;
    }
    if (all_done) break;
    const auto now = std::chrono::steady_clock::now();
    const double elapsed = std::chrono::duration<double>(now - start).count();
    if (!stop_sent && stop_requested_.load()) {
      if (options.leave_on_request) {
        for (const HostedReplica& r : replicas_) {
          if (r.config.kind->transient) {
            caf::anon_send(r.handle, actors::leave_atom::value);
          } else {
            caf::anon_send(r.handle, actors::StopRun{""});
          }
        }
        stop_sent = true;
      } else {
        stop_all("");
      }
    }
    if (!stop_sent && options.seconds && elapsed >= *options.seconds) stop_all("seconds");
    if (any_done && !first_end) first_end = now;
    if (!stop_sent && first_end && now - *first_end >= options.grace) stop_all("");
    if (options.on_tick && now >= next_tick) {
      options.on_tick(elapsed);
      next_tick = now + options.tick;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string ReplicaHost::stop_reason() const {
  std::vector<std::string> reasons;
  for (const HostedReplica& r : replicas_) {
    std::lock_guard<std::mutex> lock(r.report->mutex);
    reasons.push_back(r.report->stop_reason);
  }
  return hosts::stop_reason(reasons, false);
}

std::vector<ReplicaResult> ReplicaHost::results(const cluster::LinkPlan& links) const {
  std::vector<hosts::ReplicaResult> out;
  for (const HostedReplica& h : replicas_) {
    hosts::ReplicaResult r;
    r.name = h.config.name;
    r.kind = h.config.kind->name;
    r.unit = h.config.kind->count_unit;
    r.count = h.report->count.load();
    r.weights_version = h.report->weights_version.load();
    std::lock_guard<std::mutex> lock(h.report->mutex);
    set_episode_returns(r, h.report->episode_returns);
    r.evaluations = h.report->evaluations;
    r.target_reached = h.report->target_reached;
    r.unanswered_at_loss = h.report->unanswered_at_loss;
    if (h.config.kind->actor_result != nullptr) h.config.kind->actor_result(h.config, *h.report, r);
    for (const cluster::Link& link : links.links) {
      if (link.from.replica == h.config.name) {
        r.channels.push_back({link.from.port, link.from.channel, 0, 0});
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace tagflow::hosts
