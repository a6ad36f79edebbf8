#include "hosts/actor/actor_process.hpp"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>

#include <caf/io/middleman.hpp>

#include "actors/actor_system_setup.hpp"
#include "actors/tls_peers.hpp"
#include "common/state_stream.hpp"
#include "hosts/actor/replica_host.hpp"
#include "hosts/process_trace.hpp"
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
  return {cluster::replica_address(config, replica),
          static_cast<std::uint16_t>(group->data_port + index)};
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
        const std::string why = system_.render(remote.error());
        // A TLS listener drops a peer that speaks plain BASP during the handshake, and one whose
        // certificate its CA did not sign (another run's keys).
        const std::string keys = cluster::resolved_keys_dir(config_);
        std::string hint;
        if (why.find("disconnect_during_handshake") != std::string::npos) {
          hint = keys.empty() ? " (this process runs without TLS; a cluster `tagflow up` started "
                                "holds its run's certificates: pass --run-keys LOG_DIR/keys)"
                              : " (the TLS handshake failed: the certificates in " + keys +
                                    " are not the running cluster's; a cluster `tagflow up` "
                                    "started holds its run's certificates: pass --run-keys "
                                    "LOG_DIR/keys of that run)";
        }
        throw std::runtime_error("cannot reach " + replica + " at " + at.host + ":" +
                                 std::to_string(at.port) + ": " + why + hint);
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

/// The processes this one dialled that went down (their watchers' reports, with CAF's reason),
/// for the host's loop.
class LostProcesses {
 public:
  void add(const std::string& process, const std::string& why) {
    const std::lock_guard<std::mutex> lock(mutex_);
    lost_.emplace(process, why);
  }
  std::map<std::string, std::string> take() {
    const std::lock_guard<std::mutex> lock(mutex_);
    return std::exchange(lost_, {});
  }

 private:
  std::mutex mutex_;
  std::map<std::string, std::string> lost_;  // process → why; guarded by mutex_
};

/// An actor that monitors `peer` (a dialled process's first published replica) and reports
/// `process` lost when it goes down (its connection dropped), then quits. Ended with an exit
/// message when the run ends.
caf::behavior watch_process(caf::event_based_actor* self, caf::actor peer, std::string process,
                            std::shared_ptr<LostProcesses> lost) {
  self->monitor(peer);
  self->set_down_handler([self, process, lost](caf::down_msg& down) {
    lost->add(process, self->system().render(down.reason));
    self->quit();
  });
  return {[](actors::StopRun) {}};  // never sent: the actor lives until down or its exit
}

/// The recovery settings of replica `name` (actor_process.hpp, "Recovery"); a checkpoint that
/// cannot be used is named on stderr and left out.
nodes::ActorRecovery recovery_of(const cluster::ClusterConfig& config,
                                 const ActorProcessOptions& options, const std::string& name) {
  nodes::ActorRecovery recovery;
  recovery.peers_return = options.peers_restart;
  if (!options.checkpoints.empty() && config.checkpoint.every) {
    recovery.checkpoint_prefix = (std::filesystem::path(options.checkpoints) / name).string();
    recovery.every =
        std::max(std::chrono::milliseconds(1),
                 std::chrono::duration_cast<std::chrono::milliseconds>(*config.checkpoint.every));
  }
  if (options.resume.empty()) return recovery;
  const std::string path =
      nodes::actor_checkpoint_path((std::filesystem::path(options.resume) / name).string());
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

/// The process's replicas: each one's config and metrics (one registry per replica, labels
/// node = replica name, served on metrics_port + its index), made in that order, replica by
/// replica.
struct ProcessReplicas {
  std::vector<ReplicaConfig> configs;
  std::vector<std::unique_ptr<ReplicaMetrics>> metrics;
};

ProcessReplicas process_replicas(const cluster::ClusterConfig& config,
                                 const hosts::ClusterFacts& facts, const cluster::ProcessPlan& plan,
                                 bool serve_metrics,
                                 const std::function<void(const std::string&)>& log) {
  ProcessReplicas replicas;
  for (const std::string& name : plan.replicas) {
    replicas.configs.push_back(replica_config(config, facts, name));
    replicas.metrics.push_back(
        std::make_unique<ReplicaMetrics>(config, replicas.configs.back(), serve_metrics, log));
  }
  return replicas;
}

/// Mutual TLS: only holders of a certificate of this cluster's CA connect (actors/README.md);
/// none without keys.
std::optional<actors::ActorCredentials> credentials_of(const cluster::ClusterConfig& config,
                                                       const cluster::ProcessPlan& plan,
                                                       bool join) {
  const std::string keys = cluster::resolved_keys_dir(config);
  if (keys.empty()) return std::nullopt;
  return actors::actor_credentials(keys, join ? std::string(actors::kJoinCredential) : plan.name);
}

/// Handshakes the TLS layer refuses are counted in the first replica's metrics (one TLS layer per
/// process) and logged, --quiet or not: they are what an operator must see. Null without TLS.
std::unique_ptr<actors::RefusedHandshakeMetrics> count_refusals(
    const std::optional<actors::ActorCredentials>& tls, const ProcessReplicas& replicas,
    const std::string& process) {
  if (!tls || replicas.metrics.empty()) return nullptr;
  return std::make_unique<actors::RefusedHandshakeMetrics>(
      replicas.metrics.front()->process(), [name = process](const std::string& line) {
        std::cerr << "tagflow node " << name << ": " << line << std::endl;
      });
}

std::unique_ptr<caf::actor_system_config> system_config_of(
    const ActorProcessOptions& options, const std::optional<actors::ActorCredentials>& tls) {
  auto system_config = actors::make_actor_system_config({true, options.worker_threads}, tls);
  nodes::add_node_message_types(*system_config);
  return system_config;
}

/// One actor process: run_actor_process()'s steps (actor_process.hpp) and what they share. The
/// members are made in the order the steps need them: the replicas' configs and metrics, the TLS
/// credentials and refusal counts, then the actor system that hosts the replicas.
class ActorProcess {
 public:
  ActorProcess(const cluster::ClusterConfig& config, const cluster::ProcessPlan& plan,
               const ActorProcessOptions& options)
      : config_(config),
        plan_(plan),
        options_(options),
        facts_(hosts::ClusterFacts::of(config)),
        links_(cluster::plan_links(config)),
        wiring_(plan_wiring(config, links_)),
        replicas_(process_replicas(config, facts_, plan, options.metrics,
                                   [this](const std::string& line) { warn(line); })),
        tls_(credentials_of(config, plan, options.join)),
        refusals_(count_refusals(tls_, replicas_, plan.name)),
        system_config_(system_config_of(options, tls_)),
        system_(*system_config_),
        host_(system_, config, facts_),
        plans_(cluster::plan_processes(config)),
        dialled_(system_, config, options.connect_timeout) {}

  /// Steps 1–3: spawn, publish, wire; on a failure the spawned actors are stopped.
  void start();
  /// Step 4: runs until the local actors end, then lets the middleman flush; the result.
  hosts::ProcessResult run();

 private:
  void log(const std::string& line) const {
    if (!options_.quiet) warn(line);
  }
  /// What an operator must see, --quiet or not (`tagflow up` runs its processes --quiet).
  void warn(const std::string& line) const {
    std::cerr << "tagflow node " << plan_.name << ": " << line << std::endl;
  }
  void spawn_replicas();
  void publish_replicas();
  void wire();
  bool wire_with(const cluster::ProcessPlan& other);
  void watch(const cluster::ProcessPlan& other);
  void stop_watchers();
  void stop_spawned();
  void on_tick(double elapsed);
  void note_lost();
  void relink_returned();
  void log_progress(double elapsed);
  void wind_down();

  const cluster::ClusterConfig& config_;
  const cluster::ProcessPlan& plan_;
  const ActorProcessOptions& options_;
  const hosts::ClusterFacts facts_;
  const cluster::LinkPlan links_;
  const std::vector<WiringStep> wiring_;
  ProcessReplicas replicas_;
  std::optional<actors::ActorCredentials> tls_;
  std::unique_ptr<actors::RefusedHandshakeMetrics> refusals_;
  std::unique_ptr<caf::actor_system_config> system_config_;
  caf::actor_system system_;
  ReplicaHost host_;
  std::vector<caf::actor> watchers_;  // one per dialled process, with peers_restart
  std::map<std::string, caf::actor> local_;
  const std::vector<cluster::ProcessPlan> plans_;
  Dialled dialled_;
  const std::shared_ptr<LostProcesses> lost_ = std::make_shared<LostProcesses>();
  std::set<std::string> down_;  // dialled processes that went down and did not answer yet
  double next_progress_ = 1.0;
};

void ActorProcess::start() {
  try {
    spawn_replicas();
    publish_replicas();
    wire();
  } catch (...) {
    stop_spawned();
    throw;
  }
  log(std::string(options_.join ? "joined the cluster" : "running") +
      (tls_ ? " (TLS, members only)" : " (no TLS: any local process may connect)"));
}

void ActorProcess::spawn_replicas() {
  for (std::size_t n = 0; n < replicas_.configs.size(); ++n) {
    const std::string& name = replicas_.configs[n].name;
    const HostedReplica& r =
        spawn_recovered(host_, replicas_.configs[n], &replicas_.metrics[n]->node(),
                        recovery_of(config_, options_, name));
    local_[name] = r.handle;
    // Found by name over a connection another process dialled (see wire()).
    system_.registry().put(registry_key(n), r.handle);
  }
}

/// Every replica but the samplers, on its data port at its host's address.
void ActorProcess::publish_replicas() {
  for (const HostedReplica& r : host_.replicas()) {
    if (r.config.kind->transient) continue;
    const ReplicaAddress at = address_of(config_, r.config.name);
    auto published = actors::publish_actor(system_, r.handle, at.port, at.host);
    if (!published) {
      throw std::runtime_error("cannot publish " + r.config.name + " on " + at.host + ":" +
                               std::to_string(at.port) + ": " + system_.render(published.error()));
    }
    log("published " + r.config.name + " on " + at.host + ":" + std::to_string(*published));
  }
}

/// The links. CAF 0.17's TLS module loses the link between two processes as soon as a second
/// connection between them opens, so every pair of processes has one connection, dialled by one
/// side (dials()), and that side runs every wiring step between the two, in both directions: a
/// step whose initiator is on the other side is sent there as a message.
void ActorProcess::wire() {
  for (const HostedReplica& r : host_.replicas()) {
    for (const WiringStep& step : steps_of(wiring_, r.config)) {
      if (const auto it = local_.find(step.peer); it != local_.end()) host_.wire(step, it->second);
    }
  }
  for (const cluster::ProcessPlan& other : plans_) {
    if (dials(config_, plan_, other) && wire_with(other) && options_.peers_restart) watch(other);
  }
}

/// Runs every wiring step between this process and `other`, which this one dials (dialling it
/// when a step needs it); false when there is none.
bool ActorProcess::wire_with(const cluster::ProcessPlan& other) {
  const auto in_other = [&](const std::string& replica) {
    return std::find(other.replicas.begin(), other.replicas.end(), replica) != other.replicas.end();
  };
  bool any = false;
  for (const HostedReplica& r : host_.replicas()) {
    for (const WiringStep& step : steps_of(wiring_, r.config)) {
      if (!in_other(step.peer)) continue;
      host_.wire(step, dialled_.replica(other, step.peer));
      any = true;
    }
  }
  for (const WiringStep& step : wiring_) {  // steps the dialled process's replicas start here
    const auto peer = local_.find(step.peer);
    if (peer == local_.end() || !in_other(step.initiator)) continue;
    caf::anon_send(dialled_.replica(other, step.initiator), actors::connect_atom::value, step.port,
                   step.peer, peer->second);
    any = true;
  }
  return any;
}

void ActorProcess::watch(const cluster::ProcessPlan& other) {
  watchers_.push_back(system_.spawn(
      watch_process, dialled_.replica(other, first_published(config_, other)), other.name, lost_));
}

void ActorProcess::stop_watchers() {
  for (const caf::actor& w : watchers_) caf::anon_send_exit(w, caf::exit_reason::user_shutdown);
  watchers_.clear();
}

void ActorProcess::stop_spawned() {
  stop_watchers();
  for (const HostedReplica& r : host_.replicas()) caf::anon_send(r.handle, actors::StopRun{""});
  for (std::size_t n = 0; n < host_.replicas().size(); ++n) {
    system_.registry().erase(registry_key(n));
  }
  system_.await_all_actors_done();
}

hosts::ProcessResult ActorProcess::run() {
  StopSignals signals;
  WaitOptions wait;
  wait.seconds = config_.stop.seconds;
  wait.leave_on_request = options_.join;
  wait.tick = std::chrono::milliseconds(50);
  wait.on_tick = [this](double elapsed) { on_tick(elapsed); };
  hosts::ProcessResult result;
  result.process = plan_.name;
  result.numerics = numerics::process_report();
  result.mode = "actor";
  result.seconds = host_.wait(wait);
  wind_down();
  result.replicas = host_.results(links_);
  result.stop_reason = host_.stop_reason();
  // A signal that stopped the run (not a joined sampler's leave) is its reason when none came
  // first.
  if (result.stop_reason.empty() && g_signalled.load() && !options_.join) {
    result.stop_reason = "signal";
  }
  log("stopped" + (result.stop_reason.empty() ? std::string() : " (" + result.stop_reason + ")"));
  return result;
}

void ActorProcess::on_tick(double elapsed) {
  if (g_signalled.load()) host_.request_stop();
  note_lost();
  relink_returned();
  log_progress(elapsed);
}

/// The dialled processes the watchers saw go down: forgotten, and dialled again every tick.
void ActorProcess::note_lost() {
  for (const auto& [name, why] : lost_->take()) {
    dialled_.forget(name);
    down_.insert(name);
    std::cerr << "tagflow node " << plan_.name << ": lost process " << name
              << " (CAF's down reason: " << why << "); waiting for it to come back" << std::endl;
  }
}

/// One dial to each lost process; one that answers is wired and watched again.
void ActorProcess::relink_returned() {
  for (auto it = down_.begin(); it != down_.end();) {
    const cluster::ProcessPlan* other = cluster::find_process(plans_, *it);
    if (other == nullptr || !dialled_.try_dial(*other)) {
      ++it;
      continue;
    }
    try {
      (void)wire_with(*other);
      watch(*other);
    } catch (const std::runtime_error&) {  // it went again, or its replicas are not up yet
      dialled_.forget(*it);
      ++it;
      continue;
    }
    std::cerr << "tagflow node " << plan_.name << ": process " << *it << " is back: linked again"
              << std::endl;
    it = down_.erase(it);
  }
}

/// Each replica's count and weights version, every progress_every.
void ActorProcess::log_progress(double elapsed) {
  if (options_.quiet || elapsed < next_progress_) return;
  next_progress_ = elapsed + options_.progress_every.count() / 1000.0;
  std::string line = "progress";
  for (const HostedReplica& r : host_.replicas()) {
    line += " " + r.config.name + " " + r.config.kind->count_unit + "=" +
            std::to_string(r.report->count.load()) +
            " weights_version=" + std::to_string(r.report->weights_version.load()) + ";";
  }
  log(line);
}

void ActorProcess::wind_down() {
  stop_watchers();
  for (std::size_t n = 0; n < replicas_.configs.size(); ++n) {
    system_.registry().erase(registry_key(n));
  }
  system_.await_all_actors_done();
  std::this_thread::sleep_for(options_.flush_delay);  // let the middleman send the last messages
}

}  // namespace

hosts::ProcessResult run_actor_process(const cluster::ClusterConfig& config,
                                       const cluster::ProcessPlan& plan,
                                       const ActorProcessOptions& options) {
  std::optional<ProcessTrace> trace;  // outlives the actor system
  if (!options.trace_dir.empty()) {
    // A signal while the process starts (spawning, linking to its peers) writes the trace and
    // ends it; once it runs, its own handler (ActorProcess::run) stops the run and the trace is
    // written at the end.
    trace.emplace(options.trace_dir, plan.name, config.hosts.size() > 1 ? plan.host : "",
                  config.trace.events_per_thread, true);
  }
  ActorProcess process(config, plan, options);
  process.start();
  return process.run();
}

}  // namespace tagflow::hosts
