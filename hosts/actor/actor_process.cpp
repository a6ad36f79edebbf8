#include "hosts/actor/actor_process.hpp"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>

#include <caf/io/middleman.hpp>

#include "actors/actor_system_setup.hpp"
#include "actors/tls_peers.hpp"
#include "common/state_stream.hpp"
#include "hosts/actor/replica_host.hpp"
#include "hosts/replica_metrics.hpp"
#include "nodes/actor_checkpoint.hpp"
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

/// The registry key of the n-th replica of a process.
caf::atom_value registry_key(std::size_t n) {
  return caf::atom_from_string("r" + std::to_string(n));
}

/// The first replica of `process` that is published (not of a transient kind), or "".
std::string first_published(const cluster::ClusterConfig& config,
                            const cluster::ProcessPlan& process) {
  for (const std::string& replica : process.replicas) {
    if (!replica_kind(config, replica).transient) return replica;
  }
  return "";
}

/// Whether `me` dials `other`: only a process that publishes can be dialled; of two that both
/// do, the one with the smaller name dials. The same answer on both sides, so exactly one dials.
bool dials(const cluster::ClusterConfig& config, const cluster::ProcessPlan& me,
           const cluster::ProcessPlan& other) {
  if (me.name == other.name || first_published(config, other).empty()) return false;
  return first_published(config, me).empty() || me.name < other.name;
}

/// The connections this process dialled: one per other process, to its first published replica
/// (retried until `timeout`, the other may start later); its other replicas are looked up by
/// registry key over the same connection.
class Dialled {
 public:
  Dialled(caf::actor_system& system, const cluster::ClusterConfig& config,
          std::chrono::milliseconds timeout)
      : system_(system), config_(config), timeout_(timeout) {}

  caf::actor replica(const cluster::ProcessPlan& process, const std::string& replica) {
    auto& known = handles_[process.name];
    if (known.empty()) dial(process, known);
    if (const auto it = known.find(replica); it != known.end()) return it->second;
    const auto at = std::find(process.replicas.begin(), process.replicas.end(), replica);
    if (at == process.replicas.end()) throw std::logic_error(replica + " not in " + process.name);
    const caf::actor handle = caf::actor_cast<caf::actor>(system_.middleman().remote_lookup(
        registry_key(static_cast<std::size_t>(at - process.replicas.begin())),
        nodes_[process.name]));
    if (!handle) throw std::runtime_error("cannot find " + replica + " in process " + process.name);
    known[replica] = handle;
    return handle;
  }

  /// Forgets the connection to `process` (its process died): the next call dials again.
  void forget(const std::string& process) {
    handles_.erase(process);
    nodes_.erase(process);
  }

  /// One attempt to dial `process`; true when it answered (its handles are looked up again).
  bool try_dial(const cluster::ProcessPlan& process) {
    const std::string replica = first_published(config_, process);
    const ReplicaAddress at = address_of(config_, replica);
    auto remote = actors::remote_actor_at(system_, at.host, at.port, process.name);
    if (!remote) return false;
    handles_[process.name] = {{replica, *remote}};
    nodes_[process.name] = remote->node();
    return true;
  }

 private:
  void dial(const cluster::ProcessPlan& process, std::map<std::string, caf::actor>& known) {
    const std::string replica = first_published(config_, process);
    const ReplicaAddress at = address_of(config_, replica);
    const auto deadline = std::chrono::steady_clock::now() + timeout_;
    for (;;) {
      auto remote = actors::remote_actor_at(system_, at.host, at.port, process.name);
      if (remote) {
        known[replica] = *remote;
        nodes_[process.name] = remote->node();
        return;
      }
      if (std::chrono::steady_clock::now() >= deadline) {
        throw std::runtime_error("cannot reach " + replica + " at " + at.host + ":" +
                                 std::to_string(at.port) + ": " + system_.render(remote.error()));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  caf::actor_system& system_;
  const cluster::ClusterConfig& config_;
  std::chrono::milliseconds timeout_;
  std::map<std::string, std::map<std::string, caf::actor>> handles_;  // process → replica → handle
  std::map<std::string, caf::node_id> nodes_;
};

/// The processes this one dialled that went down (their watchers' reports), for the host's loop.
class LostProcesses {
 public:
  void add(const std::string& process) {
    const std::lock_guard<std::mutex> lock(mutex_);
    lost_.insert(process);
  }
  std::set<std::string> take() {
    const std::lock_guard<std::mutex> lock(mutex_);
    return std::exchange(lost_, {});
  }

 private:
  std::mutex mutex_;
  std::set<std::string> lost_;  // guarded by mutex_
};

/// An actor that monitors `peer` (a dialled process's first published replica) and reports
/// `process` lost when it goes down (its connection dropped), then quits. Ended with an exit
/// message when the run ends.
caf::behavior watch_process(caf::event_based_actor* self, caf::actor peer, std::string process,
                            std::shared_ptr<LostProcesses> lost) {
  self->monitor(peer);
  self->set_down_handler([self, process, lost](caf::down_msg&) {
    lost->add(process);
    self->quit();
  });
  return {[](actors::StopRun) {}};  // never sent: the actor lives until down or its exit
}

/// The recovery settings of replica `name` (actor_process.hpp, "Recovery"); a checkpoint that
/// cannot be used is named on stderr and left out.
nodes::ActorRecovery recovery_of(const cluster::ClusterConfig& config,
                                 const ActorProcessOptions& options, const std::string& name) {
  nodes::ActorRecovery recovery;
  recovery.peers_return = options.peers_return;
  if (!options.checkpoint_dir.empty() && config.checkpoint.every) {
    recovery.checkpoint_prefix = (std::filesystem::path(options.checkpoint_dir) / name).string();
    recovery.every =
        std::max(std::chrono::milliseconds(1),
                 std::chrono::duration_cast<std::chrono::milliseconds>(*config.checkpoint.every));
  }
  if (options.resume_dir.empty()) return recovery;
  const std::string path =
      nodes::actor_checkpoint_path((std::filesystem::path(options.resume_dir) / name).string());
  try {
    if (auto file = nodes::read_actor_checkpoint(path, name)) {
      recovery.restore = std::make_shared<const nodes::ActorCheckpointFile>(std::move(*file));
    } else {
      std::cerr << name << ": no checkpoint at " << path << ": starts from scratch" << std::endl;
    }
  } catch (const StateError& e) {
    std::cerr << name << ": refused " << e.what() << ": starts from scratch" << std::endl;
  }
  return recovery;
}

/// Spawns replica `config` with `recovery`; when its checkpoint does not load, names it and
/// spawns the replica from scratch.
HostedReplica& spawn_recovered(ReplicaHost& host, const ReplicaConfig& config,
                               nodes::NodeMetrics* metrics, nodes::ActorRecovery recovery) {
  if (recovery.restore) {
    try {
      HostedReplica& r = host.spawn(config, metrics, recovery);
      std::cerr << config.name << ": restored from checkpoint " << recovery.restore->sequence
                << " (" << config.kind->count_unit << " " << recovery.restore->count << ")"
                << std::endl;
      return r;
    } catch (const std::exception& e) {  // StateError, CheckpointError, a kind's own
      std::cerr << config.name << ": refused its checkpoint: " << e.what()
                << ": starts from scratch" << std::endl;
      recovery.restore.reset();
    }
  }
  return host.spawn(config, metrics, recovery);
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

  std::optional<actors::ActorCredentials> tls;
  if (const std::string keys = cluster::resolved_keys_dir(config); !keys.empty()) {
    // Mutual TLS: only holders of a certificate of this cluster's CA connect (actors/README.md).
    tls = actors::actor_credentials(
        keys, options.join ? std::string(actors::kJoinCredential) : plan.name);
  }
  // Handshakes the TLS layer refuses are counted in the first replica's metrics (one TLS
  // layer per process) and logged, --quiet or not: they are what an operator must see.
  std::optional<actors::RefusedHandshakeMetrics> refusals;
  if (tls && !metrics.empty()) {
    refusals.emplace(metrics.front()->process(), [name = plan.name](const std::string& line) {
      std::cerr << "tagflow node " << name << ": " << line << std::endl;
    });
  }
  auto system_config = actors::make_actor_system_config({true, options.worker_threads}, tls);
  nodes::add_node_message_types(*system_config);
  caf::actor_system system{*system_config};
  ReplicaHost host(system, config, facts);
  std::vector<caf::actor> watchers;  // one per dialled process, with peers_return
  const auto stop_watchers = [&] {
    for (const caf::actor& w : watchers) caf::anon_send_exit(w, caf::exit_reason::user_shutdown);
    watchers.clear();
  };
  const auto stop_spawned = [&] {
    stop_watchers();
    for (const HostedReplica& r : host.replicas()) caf::anon_send(r.handle, actors::StopRun{""});
    for (std::size_t n = 0; n < host.replicas().size(); ++n) {
      system.registry().erase(registry_key(n));
    }
    system.await_all_actors_done();
  };

  std::map<std::string, caf::actor> local;
  const std::vector<cluster::ProcessPlan> plans = cluster::plan_processes(config);
  Dialled dialled(system, config, options.connect_timeout);
  // Runs every wiring step between this process and `other`, which this one dials (dialling it
  // when a step needs it); false when there is none.
  const auto wire_with = [&](const cluster::ProcessPlan& other) {
    const auto in_other = [&](const std::string& replica) {
      return std::find(other.replicas.begin(), other.replicas.end(), replica) !=
             other.replicas.end();
    };
    bool any = false;
    for (const HostedReplica& r : host.replicas()) {
      for (const WiringStep& step : steps_of(wiring, r.config)) {
        if (!in_other(step.peer)) continue;
        host.wire(step, dialled.replica(other, step.peer));
        any = true;
      }
    }
    for (const WiringStep& step : wiring) {  // steps the dialled process's replicas start here
      const auto peer = local.find(step.peer);
      if (peer == local.end() || !in_other(step.initiator)) continue;
      caf::anon_send(dialled.replica(other, step.initiator), actors::connect_atom::value, step.port,
                     step.peer, peer->second);
      any = true;
    }
    return any;
  };
  const auto lost = std::make_shared<LostProcesses>();
  const auto watch = [&](const cluster::ProcessPlan& other) {
    watchers.push_back(system.spawn(
        watch_process, dialled.replica(other, first_published(config, other)), other.name, lost));
  };
  try {
    for (std::size_t n = 0; n < replicas.size(); ++n) {
      const std::string& name = replicas[n].name;
      const HostedReplica& r = spawn_recovered(host, replicas[n], &metrics[n]->node(),
                                               recovery_of(config, options, name));
      local[name] = r.handle;
      // Found by name over a connection another process dialled (see below).
      system.registry().put(registry_key(n), r.handle);
    }
    for (const HostedReplica& r : host.replicas()) {
      if (r.config.kind->transient) continue;
      const ReplicaAddress at = address_of(config, r.config.name);
      auto published = actors::publish_actor(system, r.handle, at.port, at.host);
      if (!published) {
        throw std::runtime_error("cannot publish " + r.config.name + " on " + at.host + ":" +
                                 std::to_string(at.port) + ": " + system.render(published.error()));
      }
      log("published " + r.config.name + " on " + at.host + ":" + std::to_string(*published));
    }
    // The links. CAF 0.17's TLS module loses the link between two processes as soon as a second
    // connection between them opens, so every pair of processes has one connection, dialled by
    // one side (dials()), and that side runs every wiring step between the two, in both
    // directions: a step whose initiator is on the other side is sent there as a message.
    for (const HostedReplica& r : host.replicas()) {
      for (const WiringStep& step : steps_of(wiring, r.config)) {
        if (const auto it = local.find(step.peer); it != local.end()) host.wire(step, it->second);
      }
    }
    for (const cluster::ProcessPlan& other : plans) {
      if (dials(config, plan, other) && wire_with(other) && options.peers_return) watch(other);
    }
  } catch (...) {
    stop_spawned();
    throw;
  }
  log(std::string(options.join ? "joined the cluster" : "running") +
      (tls ? " (TLS, members only)" : " (no TLS: any local process may connect)"));

  StopSignals signals;
  WaitOptions wait;
  wait.seconds = config.stop.seconds;
  wait.leave_on_request = options.join;
  wait.tick = std::chrono::milliseconds(50);
  double next_progress = 1.0;
  std::set<std::string> down;  // dialled processes that went down and did not answer yet
  wait.on_tick = [&](double elapsed) {
    if (g_signalled.load()) host.request_stop();
    for (const std::string& name : lost->take()) {
      dialled.forget(name);
      down.insert(name);
      std::cerr << "tagflow node " << plan.name << ": lost process " << name
                << "; waiting for it to come back" << std::endl;
    }
    for (auto it = down.begin(); it != down.end();) {
      const cluster::ProcessPlan* other = cluster::find_process(plans, *it);
      if (other == nullptr || !dialled.try_dial(*other)) {
        ++it;
        continue;
      }
      try {
        (void)wire_with(*other);
        watch(*other);
      } catch (const std::runtime_error&) {  // it went again, or its replicas are not up yet
        dialled.forget(*it);
        ++it;
        continue;
      }
      std::cerr << "tagflow node " << plan.name << ": process " << *it << " is back: linked again"
                << std::endl;
      it = down.erase(it);
    }
    if (options.quiet || elapsed < next_progress) return;
    next_progress = elapsed + options.progress_every.count() / 1000.0;
    std::string line = "progress";
    for (const HostedReplica& r : host.replicas()) {
      line += " " + r.config.name + " " + r.config.kind->count_unit + "=" +
              std::to_string(r.report->count.load()) +
              " weights_version=" + std::to_string(r.report->weights_version.load()) + ";";
    }
    log(line);
  };
  hosts::ProcessResult result;
  result.process = plan.name;
  result.mode = "actor";
  result.seconds = host.wait(wait);
  stop_watchers();
  for (std::size_t n = 0; n < replicas.size(); ++n) system.registry().erase(registry_key(n));
  system.await_all_actors_done();
  std::this_thread::sleep_for(options.flush_delay);  // let the middleman send the last messages
  result.replicas = host.results(links);
  result.stop_reason = host.stop_reason();
  log("stopped" + (result.stop_reason.empty() ? std::string() : " (" + result.stop_reason + ")"));
  return result;
}

}  // namespace tagflow::hosts
