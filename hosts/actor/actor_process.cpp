#include "hosts/actor/actor_process.hpp"

#include <atomic>
#include <csignal>
#include <iostream>
#include <map>
#include <stdexcept>
#include <thread>

#include <caf/io/middleman.hpp>

#include "actors/actor_system_setup.hpp"
#include "hosts/actor/replica_host.hpp"
#include "hosts/replica_metrics.hpp"
#include "nodes/actor_messages.hpp"

namespace tagflow::hosts {
namespace {

std::atomic<bool> g_signalled{false};

extern "C" void on_stop_signal(int /*signal*/) { g_signalled.store(true); }

// SIGTERM/SIGINT set g_signalled while it lives; the previous handlers come back after.
class StopSignals {
 public:
  StopSignals() {
    g_signalled.store(false);
    struct sigaction action {};
    action.sa_handler = on_stop_signal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGTERM, &action, &old_term_);
    sigaction(SIGINT, &action, &old_int_);
  }
  ~StopSignals() {
    sigaction(SIGTERM, &old_term_, nullptr);
    sigaction(SIGINT, &old_int_, nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  struct sigaction old_term_ {};
  struct sigaction old_int_ {};
};

struct ReplicaAddress {
  std::string host;  // address
  std::uint16_t port = 0;
};

ReplicaAddress address_of(const cluster::ClusterConfig& config, const std::string& replica) {
  const auto [group, index] = cluster::find_replica(config, replica);
  if (group == nullptr) throw std::invalid_argument("no replica '" + replica + "'");
  const auto host = config.hosts.find(group->host);
  if (host == config.hosts.end()) throw std::invalid_argument("no host '" + group->host + "'");
  return {host->second.address, static_cast<std::uint16_t>(group->data_port + index)};
}

// The wiring steps a joining sampler takes over: those of replica K mod replicas of its group.
std::vector<WiringStep> steps_of(const std::vector<WiringStep>& wiring, const ReplicaConfig& r) {
  const std::string model =
      cluster::replica_name(*r.group, r.index % std::max(1, r.group->replicas));
  std::vector<WiringStep> out;
  for (const WiringStep& step : wiring) {
    if (step.initiator == r.name) out.push_back(step);
  }
  if (!out.empty() || model == r.name) return out;
  for (WiringStep step : wiring) {
    if (step.initiator != model) continue;
    step.initiator = r.name;
    out.push_back(step);
  }
  return out;
}

}  // namespace

hosts::ProcessResult run_actor_process(const cluster::ClusterConfig& config,
                                       const cluster::ProcessPlan& plan,
                                       const ActorProcessOptions& options) {
  const hosts::ClusterFacts facts = hosts::ClusterFacts::of(config);
  const cluster::LinkPlan links = cluster::plan_links(config);
  const std::vector<WiringStep> wiring = plan_wiring(config, links);
  const auto log = [&](const std::string& line) {
    if (!options.quiet) std::cerr << "tagflow node " << plan.name << ": " << line << std::endl;
  };

  // One registry per replica (labels node = replica name), served on metrics_port + its index.
  std::vector<ReplicaConfig> replicas;
  std::vector<std::unique_ptr<ReplicaMetrics>> metrics;
  for (const std::string& name : plan.replicas) {
    replicas.push_back(replica_config(config, facts, name));
    metrics.push_back(
        std::make_unique<ReplicaMetrics>(config, replicas.back(), options.metrics, log));
  }

  auto system_config = actors::make_actor_system_config({true, options.worker_threads});
  nodes::add_node_message_types(*system_config);
  caf::actor_system system{*system_config};
  ReplicaHost host(system, config, facts, options.torch);
  const auto stop_spawned = [&] {
    for (const HostedReplica& r : host.replicas()) caf::anon_send(r.handle, actors::StopRun{""});
    system.await_all_actors_done();
  };

  std::map<std::string, caf::actor> local;
  try {
    for (std::size_t n = 0; n < replicas.size(); ++n) {
      const std::string& name = replicas[n].name;
      const HostedReplica& r = host.spawn(replicas[n], &metrics[n]->node());
      local[name] = r.handle;
      if (r.config.kind == cluster::NodeKind::sampler) continue;
      const ReplicaAddress at = address_of(config, name);
      auto published = system.middleman().publish(r.handle, at.port, at.host.c_str(), true);
      if (!published) {
        throw std::runtime_error("cannot publish " + name + " on " + at.host + ":" +
                                 std::to_string(at.port) + ": " + system.render(published.error()));
      }
      log("published " + name + " on " + at.host + ":" + std::to_string(*published));
    }
    // Links this process starts, to local or remote peers.
    for (const HostedReplica& r : host.replicas()) {
      for (const WiringStep& step : steps_of(wiring, r.config)) {
        caf::actor peer;
        if (const auto it = local.find(step.peer); it != local.end()) {
          peer = it->second;
        } else {
          const ReplicaAddress at = address_of(config, step.peer);
          const auto deadline = std::chrono::steady_clock::now() + options.connect_timeout;
          for (;;) {
            auto remote = system.middleman().remote_actor(at.host, at.port);
            if (remote) {
              peer = *remote;
              break;
            }
            if (std::chrono::steady_clock::now() >= deadline) {
              throw std::runtime_error("cannot reach " + step.peer + " at " + at.host + ":" +
                                       std::to_string(at.port) + ": " +
                                       system.render(remote.error()));
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
          }
        }
        host.wire(step, peer);
      }
    }
  } catch (...) {
    stop_spawned();
    throw;
  }
  log(options.join ? "joined the cluster" : "running");

  StopSignals signals;
  WaitOptions wait;
  wait.seconds = config.stop.seconds;
  wait.leave_on_request = options.join;
  wait.tick = std::chrono::milliseconds(50);
  double next_progress = 1.0;
  wait.on_tick = [&](double elapsed) {
    if (g_signalled.load()) host.request_stop();
    if (options.quiet || elapsed < next_progress) return;
    next_progress = elapsed + options.progress_every.count() / 1000.0;
    std::string line = "progress";
    for (const HostedReplica& r : host.replicas()) {
      line += " " + r.config.name + " " + count_unit(r.config.kind) + "=" +
              std::to_string(r.report->count.load()) +
              " weights_version=" + std::to_string(r.report->weights_version.load()) + ";";
    }
    log(line);
  };
  hosts::ProcessResult result;
  result.process = plan.name;
  result.mode = "actor";
  result.seconds = host.wait(wait);
  system.await_all_actors_done();
  std::this_thread::sleep_for(options.flush_delay);  // let the middleman send the last messages
  result.replicas = host.results(links);
  result.stop_reason = host.stop_reason();
  log("stopped" + (result.stop_reason.empty() ? std::string() : " (" + result.stop_reason + ")"));
  return result;
}

}  // namespace tagflow::hosts
