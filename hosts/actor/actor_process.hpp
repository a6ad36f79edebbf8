// run_actor_process: the replicas of one process of a cluster file as CAF actors, talking to the
// other processes' actors through CAF's middleman (contract §6; actors/README.md).
//
// Steps:
//   1. Spawn each replica of `plan` (hosts/actor/replica_spawner.hpp) with its own ProcessMetrics
//      and MetricsEndpoint on metrics_port + i (labels node = replica name, mode = actor), as in
//      reactor mode.
//   2. Publish every replica that others look up, that is every replica of a kind that is not
//      transient (replay, learner, inference, multi_agent, evaluator): replica i of a group on
//      data_port + i at its host's address. Samplers, the transient kind, are never looked up
//      (they start all their links themselves, hosts/actor/actor_wiring.hpp), so they publish
//      nothing and any number of them can join.
//   3. Wire: a step between two local replicas is sent to the initiator. Between two processes
//      there is one connection (CAF 0.17's TLS module loses the link when a second one opens):
//      the side that dials (a process that publishes nothing dials; of two that publish, the one
//      with the smaller name) calls remote_actor(host address, data port) on the other's first
//      published replica, retried until `connect_timeout` (it may start later), looks the
//      other's replicas up by registry key (r0, r1, ... in process order) over that connection,
//      and runs every step between the two processes — sending the other side's steps there as
//      (connect, port, peer name, peer) messages.
//   4. Log a progress line (each replica's count and weights version) every `progress_every`,
//      and wait until the local actors end (a StopRun flooding the cluster, `stop.seconds`, or
//      SIGTERM/SIGINT: stop the run — or, with `join`, the sampler leaves: Leave to its peers,
//      the others go on). Then give the middleman `flush_delay` to deliver the last messages.
// Recovery (docs/recovery.md, configs/README.md "Checkpoints and restarts"):
//   - with `checkpoints` and the file's `checkpoint.every`, each replica writes its own
//     checkpoint there every `every` of wall time (nodes/actor_checkpoint.hpp);
//   - with `resume` (a restarted process), each replica starts from its checkpoint there; one
//     that cannot be used (truncated, corrupt, another replica's, or refused by the kind) is
//     named on stderr and the replica starts from scratch;
//   - with `peers_restart` (the launcher restarts dead processes), a replay, learner or inference
//     peer that goes down does not end the run: the actors forget it and go on, and this process
//     watches every process it dialled — when one goes down it dials it again every tick until
//     its restarted process answers, then runs the wiring steps between the two again (a process
//     that was dialled by the dead one needs nothing: the restarted one dials it).
// With `join`, `plan` names one sampler that is not (or not yet) running: GROUP-K for K beyond
// the group's replicas, or a replica of the file started late; it takes the links of replica
// K mod replicas of its group.
// Returns the process result (nodes/kind/process_result.hpp, mode "actor", channel hashes 0).
// Errors: std::runtime_error naming the peer that could not be reached or the port that could
// not be published; ConfigError/ParamError/std::invalid_argument as the other placements.
// Blocks; call from the main thread (it installs SIGTERM/SIGINT handlers while it runs).
#pragma once

#include <chrono>
#include <cstddef>

#include "hosts/actor/replica_spawner.hpp"
#include "nodes/cluster/cluster_config.hpp"
#include "nodes/cluster/process_plan.hpp"
#include "nodes/kind/process_result.hpp"

namespace tagflow::hosts {

struct ActorProcessOptions {
  bool join = false;  // `tagflow node --join`: a sampler joining a running cluster
  std::chrono::milliseconds connect_timeout{30000};
  std::chrono::milliseconds flush_delay{300};
  std::size_t worker_threads = 0;  // CAF scheduler threads (0: one per core)
  bool metrics = true;             // a metrics endpoint per replica (metrics_port + i)
  bool quiet = false;              // no log lines on stderr
  std::chrono::milliseconds progress_every{1000};  // a progress log line per replica count
  // The names of `tagflow node`'s flags --checkpoints, --resume and --peers-restart.
  std::string checkpoints;     // write the replicas' checkpoints here (see above); empty: none
  std::string resume;          // start the replicas from their checkpoints here; empty: fresh
  bool peers_restart = false;  // dead processes are restarted: wait for them (see above)
  // `tagflow node --trace DIR`: record the handlers and messages of the process's actors into
  // DIR/PROCESS.trace.json (tracing/README.md, hosts/process_trace.hpp); empty: not traced.
  std::string trace_dir;
};

[[nodiscard]] hosts::ProcessResult run_actor_process(const cluster::ClusterConfig& config,
                                                     const cluster::ProcessPlan& plan,
                                                     const ActorProcessOptions& options);

}  // namespace tagflow::hosts
