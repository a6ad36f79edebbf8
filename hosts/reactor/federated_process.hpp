// run_federated_process: one `tagflow node` process in reactor mode — the replicas of a
// ProcessPlan, each its own federate, until the federation stops.
//
// For every replica of the process, on its own thread: a ReactorFederate named by the replica
// (data socket bound to data_port + i on its host's address), one reactors::Environment
// (start tag from the coordinator, one worker), the replica's reactor from `factory`, one wire
// input per link into it and one wire output per link out of it (link plan, wire_ports.hpp), a
// ProcessMetrics + MetricsEndpoint on metrics_port + i when the group has one (labels
// node=replica) feeding NodeMetrics and the transport families. Stops: the learner's target
// return and each sampler's env_steps share call request_stop() (negotiated by the coordinator);
// `stop.seconds` of wall time requests it in every replica of the process. The result carries
// every replica's channel hashes as of the cutoff: the earliest stop proposal of the
// federation (ReactorFederate::stop_proposal()).
//
// Checkpoints (options.checkpoints with the file's `checkpoint:`): each replica writes its
// part every `every` of logical time (federate_checkpoint.hpp); with options.resume it
// first loads its state and the messages in transit to it from that checkpoint.
// Every replica is built once in a scratch environment before anything joins, so bad params
// (and, with checkpoints, a kind or env that cannot checkpoint) fail fast without a federation.
// Errors: cluster::ConfigError / ParamError / std::invalid_argument for the file, its params or a
// kind the factory cannot build (before joining); coordinator::FederationError when the coordinator
// is lost, another federate failed or joining timed out (the message names the federate); anything
// else a replica thread throws is rethrown (the other replicas then fail through the coordinator).
// Blocks until every replica's thread has ended; call from one thread.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "hosts/process_trace.hpp"
#include "nodes/cluster/cluster_config.hpp"
#include "nodes/cluster/process_plan.hpp"
#include "nodes/kind/process_result.hpp"
#include "nodes/kind/replica_binding.hpp"

namespace tagflow::hosts {

struct FederatedProcessOptions {
  ReplicaFactory factory = nodes::make_replica;
  std::chrono::nanoseconds round_period = std::chrono::milliseconds(1);
  /// Called from replica threads with one line of news ("sampler-0 joined ..."); may be empty.
  std::function<void(const std::string&)> log;
  /// What an operator must see, --quiet or not (a metrics endpoint that could not start); empty:
  /// the line alone on stderr.
  std::function<void(const std::string&)> warn;
  /// With the file's `checkpoint:`: where the checkpoints go (RUN_DIR/checkpoints, `tagflow node
  /// --checkpoints`); empty: none (hosts/reactor/federate_checkpoint.hpp).
  std::string checkpoints;
  /// Resume every replica from the checkpoint in this directory (CHECKPOINTS/<time_ns>, `tagflow
  /// node --resume`); the
  /// coordinator must start the run at that checkpoint's tag. Empty: a fresh run.
  std::string resume;
  /// Record the run (the file's `trace:`, tracing/README.md) into this directory:
  /// PROCESS.trace.json when the process ends (normally or not) and, with `trace.digests`,
  /// REPLICA.values.tsv/.bin as it goes. Empty: not traced.
  std::string trace_dir;
};

[[nodiscard]] ProcessResult run_federated_process(const cluster::ClusterConfig& config,
                                                  const cluster::ProcessPlan& process,
                                                  const FederatedProcessOptions& options);

}  // namespace tagflow::hosts
