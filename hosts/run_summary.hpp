// RunSummary: what a cluster run reports at its end (`tagflow up --summary PATH`).
// A value type; to_json() gives the documented JSON object:
//   {"mode", "placement", "security", "stop_reason", "mean_return", "env_steps", "seconds",
//    "updates", "weights_version", "digest" (16 hex digits), "digest_reproducible",
//    "target_reached", "evaluations": [...], "nodes": {NAME: {"kind", "unit", "count",
//    "per_second"}}}
// "security" says how the cluster was closed (docs/ARCHITECTURE.md): "per-run keys" (minted by
// tagflow up: CURVE in reactor mode, TLS certificates in actor mode), "key files"
// (security.keys_dir), "none" (`security: none`, debugging only), "open" (no keys), or
// "one process" (placement single: nothing listens for peers).
// A multi-agent cluster adds "multi_agent": {"mean_return", "collisions_per_episode",
// "random_return", "random_collisions_per_episode", "episodes", "success_rate",
// "random_success_rate", "epsilon", "evaluated_at", "final_evaluation"} (success: an episode
// without a collision; the env node's last greedy evaluation beside a random policy on the same
// seeds, played after `evaluated_at` training joint steps, `final_evaluation` false when the run
// stopped before its step limit; mean_return above is the same figure)
// "policies": {POLICY: "path of its exported TorchScript file"} for learners that export, and
// "joint_step_seconds": {"p50", "p99"} (wall clock between the env node's joint steps, over its
// last 1,048,576 of them).
// A cluster with evaluator nodes adds "evaluators": {NAME: {"evaluations": [...], "mean_return":
// the last one or null, "target_reached"}}.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nodes/kind/process_result.hpp"

namespace tagflow::hosts {

/// One evaluator replica's greedy evaluations of the learner's weights, in order.
struct EvaluatorFigures {
  std::string name;
  std::vector<double> evaluations;
  bool target_reached = false;
};

struct NodeThroughput {
  std::string name;  // replica name, e.g. sampler-0
  std::string kind;
  std::string unit;  // its kind's count unit: env_steps, inserts, updates, rows, ...
  std::int64_t count = 0;
  double per_second = 0.0;
};

/// Actor mode: what one replica of a restarted process started from and lost.
struct ReplicaRestart {
  std::string replica;
  std::string unit;  // env_steps, inserts, updates, rows
  /// The sequence number of the replica's checkpoint it restarted from; nullopt: none (from
  /// scratch).
  std::optional<std::uint64_t> checkpoint;
  std::int64_t checkpoint_count = 0;  // its count in that checkpoint
  /// Its count the launcher last read from its metrics before it died, minus checkpoint_count:
  /// the work it does again (a lower bound: the metrics are read once a second); nullopt when
  /// it has no metrics endpoint or none was read.
  std::optional<std::int64_t> since_checkpoint;
};

/// One restart after a process died (`restart:` in the cluster file).
struct RestartRecord {
  std::string process;  // the process that died first ("coordinator" included)
  std::string how;      // "killed by signal 9 (Killed)", "exit code 1"
  /// Reactor mode: the logical time (ns) of the checkpoint the run resumed from; nullopt: from
  /// the start (and always in actor mode).
  std::optional<std::int64_t> resumed_from;
  /// Reactor mode: wall seconds of work redone — from that checkpoint's completion (or the
  /// attempt's start) to the restart, plus the time to stop the survivors. Actor mode: from the
  /// oldest of the dead process's replicas' checkpoints (or the process's start) to its restart.
  double lost_seconds = 0.0;
  /// Actor mode (only the dead process restarts): its replicas, and the messages its peers had
  /// sent it on credit links without an answer when it went down (in flight, queued or handled
  /// with the credit held back: lost), from the peers' results; nullopt until those are read.
  std::vector<ReplicaRestart> replicas{};
  std::optional<std::int64_t> messages_in_flight{};
};

struct RunSummary {
  std::string mode = "reactor";
  std::string placement = "single";
  std::string security = "one process";  // see above
  std::string stop_reason;               // target_return, env_steps, seconds, signal
  double mean_return = 0.0;
  std::int64_t env_steps = 0;
  double seconds = 0.0;
  std::int64_t updates = 0;
  std::uint64_t weights_version = 0;
  std::uint64_t digest = 0;
  /// False when the digest varies from run to run of the file, for the reason `unreproducible`
  /// gives: "actor mode" (results depend on message arrival order), "logged outside
  /// transitions" (clients' experience, outside_transitions below), "stopped by stop.seconds"
  /// (the wall clock chose the last tag).
  bool digest_reproducible = true;
  std::string unreproducible;
  /// The file's stop.target_return was reached: the learner's or an evaluator's result says so,
  /// or the final mean return is at least the target. False without a target.
  bool target_reached = false;
  /// The numeric kernels of the run's processes, merged (common/numerics.hpp): in the JSON as
  /// `numerics` (nodes/kind/process_result.hpp, numerics_json()).
  std::optional<numerics::Report> numerics;
  std::vector<double> evaluations;
  /// The replicas of kinds that publish evaluations (evaluators): in the JSON as `evaluators`
  /// when there are any.
  std::vector<EvaluatorFigures> evaluators;
  std::vector<NodeThroughput> nodes;
  /// Multi-agent clusters: the evaluation beside random play, and each exported policy's file.
  std::optional<MultiAgentFigures> multi_agent;
  std::vector<std::pair<std::string, std::string>> policy_files;
  /// The multi-agent env node's wall-clock seconds per joint step (p50, p99), when measured.
  std::optional<double> joint_step_p50, joint_step_p99;
  /// Transitions outside clients logged through inference gateways into the replays (in the
  /// JSON when an inference replica has a linked `experience` port). Nonzero: the digest is not
  /// reproducible (digest_reproducible false).
  std::optional<std::int64_t> outside_transitions;
  /// Reactor mode, processes: federates the coordinator did not hear from for more than 1.5
  /// heartbeat periods (federation/PROTOCOL.md §6.2), by federate: (silences, seconds). In the
  /// JSON as `silences` when there were any.
  std::map<std::string, std::pair<std::uint64_t, double>> silences;
  /// Reactor mode, after a restart: the messages in transit the processes' checkpoint parts held
  /// and sent again when they last resumed (federation/PROTOCOL.md §9.6); in the JSON as
  /// `resent_in_transit`.
  std::optional<std::int64_t> resent_in_transit;
  /// Restarts after a process died, in order (in the JSON as `restarts` when there were any,
  /// with `wall_seconds`: the launcher's whole time, every attempt included).
  std::vector<RestartRecord> restarts;
  double wall_seconds = 0.0;
  /// Episode returns of every env replica in (replica, completion) order, as its result holds
  /// them (nodes/kind/process_result.hpp: in one process the first and latest 1,000, from a
  /// process's result the last 100); not part of the JSON.
  std::vector<std::vector<double>> episode_returns;

  [[nodiscard]] std::string digest_hex() const;
  /// "numerics: " and numerics::describe() of the run's kernels, or "" without a report.
  [[nodiscard]] std::string numerics_line() const;
  /// The lines printed under the stop line: the multi-agent evaluation beside random play (when
  /// there is one), then numerics_line() (when there is a report).
  [[nodiscard]] std::vector<std::string> detail_lines() const;
  /// The JSON text (2-space indent).
  [[nodiscard]] std::string to_json() const;
};

}  // namespace tagflow::hosts
