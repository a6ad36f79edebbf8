#include "hosts/reactor/federated_process.hpp"

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "common/trace_recorder.hpp"
#include "common/value_log.hpp"
#include "federate/reactor_federate.hpp"
#include "federation/checkpoint_store.hpp"
#include "hosts/reactor/federate_checkpoint.hpp"
#include "hosts/reactor/wire_ports.hpp"
#include "hosts/replica_metrics.hpp"
#include "nodes/cluster/federation_plan.hpp"
#include "nodes/cluster/link_plan.hpp"
#include "nodes/cluster/process_plan.hpp"
#include "nodes/message_text.hpp"
#include "transport/tcp_endpoint.hpp"

namespace tagflow::hosts {
namespace {

using cluster::ClusterConfig;
using cluster::ConfigError;

/// What one replica thread shares with the process.
struct ReplicaRun {
  ReplicaSetup setup;
  std::optional<reactors::Tag> cutoff;
  ReplicaResult result;            // filled before the replica's environment goes away
  bool reached_condition = false;  // its own stop condition requested the stop
  std::exception_ptr error;
  std::atomic<reactors::Environment*> env{nullptr};  // set while the environment runs
  /// When its federate joined: the coordinator's START came (the run began for it).
  std::optional<std::chrono::steady_clock::time_point> started;
};

/// The delay a federation link between `from` and `to` adds (the minimum of the connections
/// joining them), as the coordinator has it.
coordinator::ConnectionDelay link_delay(const coordinator::FederationSpec& spec,
                                        const std::string& from, const std::string& to) {
  for (const auto& up : spec.find(to)->upstreams) {
    if (up.federate == from) return up.delay;
  }
  return std::nullopt;
}

/// What a wire output must add to its tag so that the value arrives with the connection's own
/// delay on a link that may carry a smaller one.
std::optional<std::chrono::nanoseconds> extra_delay(const ClusterConfig& config,
                                                    const cluster::Link& link,
                                                    const coordinator::FederationSpec& spec) {
  const coordinator::ConnectionDelay on_link = link_delay(spec, link.from.replica, link.to.replica);
  const coordinator::ConnectionDelay wanted =
      link.after ? coordinator::ConnectionDelay(link.after->count()) : std::nullopt;
  if (on_link == wanted) return std::nullopt;
  if (!on_link.has_value()) return link.after;  // zero-delay link: add the connection's delay
  throw ConfigError(config.file, config.connections[link.connection].line,
                    "connections[" + std::to_string(link.connection) + "]",
                    "placement process: " + link.from.replica + " and " + link.to.replica +
                        " are joined by connections with different delays (" +
                        std::to_string(*on_link) + " ns and this one); give them the same `after`");
}

/// Joins the replica's environment to the links of the file: a link within the replica directly,
/// one from another replica through a wire input, one to another replica through a wire output.
void connect_links(const ClusterConfig& config, const coordinator::FederationSpec& spec,
                   const cluster::LinkPlan& links, const std::string& name,
                   reactors::Environment& env, coordinator::ReactorFederate& federate,
                   ReplicaBinding& binding, FederateCheckpoint* checkpoint,
                   nodes::NodeMetrics* metrics) {
  for (const cluster::Link& link : links.links) {
    if (link.from.replica == name && link.to.replica == name) {
      env.connect(binding.output(link.from.port, link.from.channel),
                  binding.input(link.to.port, link.to.channel), link.after);
    } else if (link.to.replica == name) {
      env.connect(add_wire_input(env, federate, link.to.port, link.to.channel, link.from.replica,
                                 !config.multi_agent.empty(), metrics),
                  binding.input(link.to.port, link.to.channel));
    } else if (link.from.replica == name) {
      env.connect(binding.output(link.from.port, link.from.channel),
                  add_wire_output(env, federate, link.from.port, link.to.replica, link.to.port,
                                  link.to.channel, extra_delay(config, link, spec),
                                  !config.multi_agent.empty(), checkpoint));
    }
  }
}

/// The coordinator's start tag is not (0, 0): the run resumes from a checkpoint (PROTOCOL.md §9.6).
bool resumed_run(const coordinator::WireTag& start) { return start != coordinator::WireTag(0, 0); }

/// A resumed run (the coordinator's start tag is not (0, 0), PROTOCOL.md §9.6): the replica's
/// state from its own part of the checkpoint resuming there, on this host (options.resume, or
/// CHECKPOINTS/<start time>). A part that cannot be loaded is reported to the coordinator
/// (FAILED), which ends the run naming it, and thrown.
void resume_replica(const ClusterConfig& config, const FederatedProcessOptions& options,
                    const std::string& name, coordinator::ReactorFederate& federate,
                    FederateCheckpoint* checkpoint, const coordinator::WireTag& start) {
  if (!resumed_run(start) && options.resume.empty()) return;
  const std::string at =
      "the checkpoint at logical time " + std::to_string(start.time_ns()) + " ns";
  if (checkpoint == nullptr) {
    const std::string why = "the coordinator resumes the run from " + at +
                            ", and resuming needs the file's checkpoint: section and --checkpoints";
    federate.report_failure("cannot resume: " + why);
    throw cluster::ConfigError(config.file, config.checkpoint.line, "checkpoint", why);
  }
  const std::string directory = options.resume.empty() ? coordinator::checkpoint_directory(
                                                             options.checkpoints, start.time_ns())
                                                       : options.resume;
  try {
    checkpoint->resume(directory, start);
  } catch (const std::exception& e) {
    // Whatever part of the state would not load (the part file, or a node's own file such as
    // the replay's table): the launcher tries an older checkpoint instead of this one again.
    federate.report_failure(std::string("cannot resume from its part of ") + at + ": " + e.what());
    throw;
  }
  if (options.log) {
    options.log(name + " resumed from " + directory + " at logical time " +
                std::to_string(start.time_ns()) + " ns, " + std::to_string(checkpoint->resent()) +
                " message(s) in transit sent again");
  }
}

/// The federate of one replica: its data socket on the group's data_port + index.
coordinator::ReactorFederateOptions federate_options_of(const ClusterConfig& config,
                                                        const ReplicaSetup& setup,
                                                        ReplicaMetrics& metrics) {
  coordinator::ReactorFederateOptions federate_options;
  federate_options.bind_endpoint =
      transport::tcp_endpoint(cluster::replica_address(config, setup.config.name),
                              setup.config.group->data_port + setup.config.index);
  federate_options.metrics = &metrics.process();
  // A learner's reactions (training steps) run for milliseconds, longer on a loaded machine: its
  // sockets keep a thread of their own, which reads what arrives meanwhile and lets the
  // connection guard check its peers (transport/connection_guard.hpp). The other kinds run
  // short reactions and wait on their sockets themselves (federate/reactor_federate.hpp).
  federate_options.network_thread = setup.config.kind->network_thread;
  federate_options.port_name = nodes::wire_port_name;  // "weights[0]" in a value-over-cap reason
  return federate_options;
}

void run_replica(const ClusterConfig& config, const coordinator::FederationSpec& spec,
                 const cluster::LinkPlan& links, const FederatedProcessOptions& options,
                 ReplicaRun& run) {
  const ReplicaSetup& setup = run.setup;
  // Metrics: one registry and endpoint per replica, even when it shares the process. The endpoint
  // starts once the federate has looked up its per-peer series, so every scrape has them.
  ReplicaMetrics metrics(config, setup.config, false, [&options](const std::string& line) {
    if (options.warn) {
      options.warn(line);
    } else {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
  });
  if (trace::TraceRecorder* tracer = trace::active()) {
    tracer->name_thread(setup.config.name + " worker 0", setup.config.name);
  }
  coordinator::ReactorFederateOptions federate_options =
      federate_options_of(config, setup, metrics);
  std::unique_ptr<ValueLog> values;
  if (!options.trace_dir.empty() && config.trace.digests) {
    values = std::make_unique<ValueLog>(options.trace_dir + "/" + setup.config.name,
                                        config.trace.values_mb << 20);
    federate_options.value_log = values.get();
  }
  coordinator::ReactorFederate federate(spec, setup.config.name, federate_options);
  metrics.serve();
  const coordinator::WireTag start =
      federate.join(config.coordinator.join_timeout + std::chrono::seconds(5));
  run.started = std::chrono::steady_clock::now();
  if (options.log)
    options.log(setup.config.name + " joined (data " + federate.data_endpoint() + ")");

  reactors::EnvironmentConfig env_config;
  env_config.workers = 1;
  env_config.start_time_ns = start.time_ns();
  env_config.keepalive = true;
  reactors::Environment env(env_config);
  ReplicaSetup with_metrics = setup;
  with_metrics.metrics = &metrics.node();
  const std::unique_ptr<ReplicaBinding> binding = options.factory(with_metrics, env);
  std::unique_ptr<FederateCheckpoint> checkpoint;
  if (!options.checkpoints.empty() && config.checkpoint.every) {
    checkpoint = std::make_unique<FederateCheckpoint>(
        setup.config.name, options.checkpoints, *config.checkpoint.every, config.checkpoint.keep,
        federate, *binding, &metrics.process());
  }
  connect_links(config, spec, links, setup.config.name, env, federate, *binding, checkpoint.get(),
                &metrics.node());
  if (checkpoint) checkpoint->install(env);
  resume_replica(config, options, setup.config.name, federate, checkpoint.get(), start);
  run.env.store(&env);
  try {
    federate.run(env);
  } catch (...) {
    run.env.store(nullptr);
    throw;
  }
  run.env.store(nullptr);
  run.cutoff = federate.stop_proposal();
  // Every federate of the run saw the same negotiation, so its proposal is the run's cutoff.
  run.result = binding->result(run.cutoff);
  if (checkpoint && resumed_run(start)) {
    run.result.resent_in_transit = static_cast<std::int64_t>(checkpoint->resent());
  }
  run.reached_condition = binding->reached_stop_condition();
}

/// Builds every replica of `process` once in a scratch environment: bad params and unbuildable
/// kinds (or, with checkpoints, kinds that cannot checkpoint) fail here, before this process
/// joins anything.
std::vector<std::unique_ptr<ReplicaRun>> build_replicas(const ClusterConfig& config,
                                                        const cluster::ProcessPlan& process,
                                                        const cluster::LinkPlan& links,
                                                        const ClusterFacts& facts,
                                                        const coordinator::FederationSpec& spec,
                                                        const FederatedProcessOptions& options) {
  std::vector<std::unique_ptr<ReplicaRun>> runs;
  for (const std::string& name : process.replicas) {
    auto run = std::make_unique<ReplicaRun>();
    run->setup = replica_setup(config, links, facts, name);
    run->setup.round_period = options.round_period;
    reactors::Environment scratch;
    ReplicaSetup trial = run->setup;
    trial.trial = true;
    const std::unique_ptr<ReplicaBinding> built = options.factory(trial, scratch);
    if (!options.checkpoints.empty() && config.checkpoint.every) {
      try {
        check_can_checkpoint(*built);
      } catch (const std::logic_error& e) {
        throw ConfigError(config.file, config.checkpoint.line, "checkpoint",
                          name + ": " + e.what());
      }
    }
    for (const cluster::Link& link : links.links) {
      if (link.from.replica == name && link.to.replica != name)
        (void)extra_delay(config, link, spec);
    }
    runs.push_back(std::move(run));
  }
  return runs;
}

/// Runs every replica on a thread of its own until all ended; with the file's `seconds` stop
/// (wall time) asks each to stop at that time. Returns whether that time came.
bool run_replicas(const ClusterConfig& config, const coordinator::FederationSpec& spec,
                  const cluster::LinkPlan& links, const FederatedProcessOptions& options,
                  std::vector<std::unique_ptr<ReplicaRun>>& runs,
                  std::chrono::steady_clock::time_point start) {
  std::mutex mutex;
  std::condition_variable finished_cv;
  std::size_t finished = 0;  // guarded by mutex
  std::vector<std::thread> threads;
  for (auto& run : runs) {
    threads.emplace_back([&, r = run.get()] {
      try {
        run_replica(config, spec, links, options, *r);
      } catch (...) {
        r->error = std::current_exception();
      }
      {
        const std::lock_guard<std::mutex> lock(mutex);
        ++finished;
      }
      finished_cv.notify_all();
    });
  }
  bool timed_out = false;
  {
    std::unique_lock<std::mutex> lock(mutex);
    const auto all_done = [&] { return finished == runs.size(); };
    if (config.stop.seconds) {
      const auto limit = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                     std::chrono::duration<double>(*config.stop.seconds));
      if (!finished_cv.wait_until(lock, limit, all_done)) {
        timed_out = true;
        for (auto& run : runs) {
          if (reactors::Environment* env = run->env.load()) env->request_stop();
        }
      }
    }
    finished_cv.wait(lock, all_done);
  }
  for (std::thread& t : threads) t.join();
  return timed_out;
}

/// Rethrows a replica's own error first (one that could not start among them); a federation
/// error (which may only be the echo of it) else.
void rethrow_replica_errors(const std::vector<std::unique_ptr<ReplicaRun>>& runs) {
  std::exception_ptr federation_error;
  for (const auto& run : runs) {
    if (!run->error) continue;
    try {
      std::rethrow_exception(run->error);
    } catch (const coordinator::FederateSetupError&) {
      throw;
    } catch (const coordinator::FederationError&) {
      if (!federation_error) federation_error = run->error;
    } catch (...) {
      throw;
    }
  }
  if (federation_error) std::rethrow_exception(federation_error);
}

}  // namespace

ProcessResult run_federated_process(const ClusterConfig& config,
                                    const cluster::ProcessPlan& process,
                                    const FederatedProcessOptions& options) {
  const cluster::LinkPlan links = cluster::plan_links(config);
  const ClusterFacts facts = ClusterFacts::of(config);
  const coordinator::FederationSpec spec = cluster::federation_spec(config);
  std::optional<ProcessTrace> trace;
  if (!options.trace_dir.empty()) {
    // A reactor-mode process does not stop on SIGTERM by itself: the signal writes its trace.
    // Before the replicas are built (a network loaded, the federates joined), so that a signal
    // while they start leaves the file too.
    trace.emplace(options.trace_dir, process.name, config.hosts.size() > 1 ? process.host : "",
                  config.trace.events_per_thread, true);
  }
  std::vector<std::unique_ptr<ReplicaRun>> runs =
      build_replicas(config, process, links, facts, spec, options);
  const auto start = std::chrono::steady_clock::now();
  const bool timed_out = run_replicas(config, spec, links, options, runs, start);
  rethrow_replica_errors(runs);

  ProcessResult result;
  result.process = process.name;
  result.numerics = numerics::process_report();
  result.mode = cluster::to_string(config.mode);
  // From the run's start (the first START its federates took; the wait for every process to join
  // is not run time), so that counts per second are rates of the run.
  std::optional<std::chrono::steady_clock::time_point> began;
  for (const auto& run : runs) {
    if (run->started && (!began || *run->started < *began)) began = run->started;
  }
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began.value_or(start))
          .count();
  std::vector<std::string> reasons;
  for (auto& run : runs) {
    if (run->cutoff && (!result.cutoff || *run->cutoff < *result.cutoff))
      result.cutoff = run->cutoff;
    reasons.push_back(run->reached_condition ? run->setup.config.kind->own_stop_reason : "");
    result.replicas.push_back(std::move(run->result));
  }
  result.stop_reason = stop_reason(reasons, timed_out);
  return result;
}

}  // namespace tagflow::hosts
