// ProcessResult: what one `tagflow node` process reports at a normal end (`--result PATH`), and
// what the single-process placement reports for its replicas, so that combine_results()
// (run_combine.hpp) computes the digest of every placement with one piece of code.
//
// JSON (to_json() / from_json()):
//   {"process": "sampler-0", "mode": "reactor", "seconds": 12.5,
//    "stop_reason": "target_return" | "env_steps" | "seconds" | "",
//    "cutoff": {"time_ns": 123000000, "microstep": 3} | null,
//    "numerics": numerics_json() (absent in results of older versions),
//    "replicas": [{"name", "kind", "unit", "count", "episode_returns", "episodes", "evaluations",
//                  "target_reached", "updates", "weights_version",
//                  "final_weights_hash": "16 hex" | null, "mean_return": null | 482.3,
//                  "channels": [{"port", "channel", "count", "hash": "16 hex"}],
//                  multi-agent clusters only: "collisions", "multi_agent": {"mean_return",
//                  "collisions_per_episode", "random_return", "random_collisions_per_episode",
//                  "episodes", "success_rate", "random_success_rate", "epsilon",
//                  "evaluated_at", "final_evaluation"}, "joint_step_seconds":
//                  {"p50", "p99"}, "policy", "policy_file"}]}
// "episode_returns" lists the last kResultEpisodeReturns finished episodes' returns and
// "episodes" counts them all (absent in results of older versions, which listed every return):
// a long run's result stays far below the 64 KiB control frame a launcher on another host sends
// it in (federation/PROTOCOL.md §8).
// Channel hashes and counts cover the values sent at tags < cutoff (all of them without one);
// `channels` lists the replica's output channels. Plain values; from_json() throws
// std::invalid_argument naming the missing or mistyped field.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/numerics.hpp"
#include "nodes/episode_returns.hpp"
#include "reactors/tag.hpp"

namespace tagflow::nodes {

struct ChannelResult {
  std::string port;  // output port name
  std::size_t channel = 0;
  std::uint64_t count = 0;  // values sent at tags < cutoff
  std::uint64_t hash = 0;   // ChannelDigests hash over them
};

/// A multi-agent env's last evaluation beside a random policy on the same seeds.
struct MultiAgentFigures {
  double mean_return = 0.0;
  double collisions_per_episode = 0.0;
  double random_return = 0.0;
  double random_collisions_per_episode = 0.0;
  int episodes = 0;
  /// Episodes without a collision, as a share (the greedy policy's, and random play's).
  double success_rate = 0.0;
  double random_success_rate = 0.0;
  /// The ε the evaluated policy acted with (the node's `eval_epsilon`; 0: greedy).
  double epsilon = 0.0;
  /// The training joint steps before the evaluation, and whether it was the final one (a run
  /// stopped before its step limit reports the last evaluation it played before the stop).
  std::int64_t evaluated_at = 0;
  bool final_evaluation = true;
};

/// `figures` as the JSON object results and summaries carry under "multi_agent".
[[nodiscard]] std::string multi_agent_json(const MultiAgentFigures& figures);

/// The finished episodes whose returns a replica's JSON lists (the most recent ones): 100
/// returns take at most about 2.5 KB.
inline constexpr std::size_t kResultEpisodeReturns = 100;

struct ReplicaResult {
  std::string name;  // replica name, e.g. sampler-0
  std::string kind;  // its kind's name (nodes/kind/node_kind.hpp)
  std::string unit;  // its kind's count_unit: env_steps, inserts, updates, rows, ...
  std::int64_t count = 0;
  /// Env replicas: finished episodes' returns in completion order. Made in this process: the
  /// ones nodes::EpisodeReturns keeps (every one up to 2,000, else the first and the latest
  /// 1,000); read from JSON: the last kResultEpisodeReturns.
  std::vector<double> episode_returns;
  /// Every finished episode (unset: as many as episode_returns holds).
  std::optional<std::int64_t> episodes;
  std::vector<double> evaluations;  // learner: mean return of each evaluation
  bool target_reached = false;
  std::int64_t updates = 0;
  std::uint64_t weights_version = 0;
  std::optional<std::uint64_t> final_weights_hash;       // learner: weights as of the cutoff
  std::optional<double> mean_return;                     // learner: the run's mean return
                                                         // (multi_agent: its last evaluation's)
  std::int64_t collisions = 0;                           // multi_agent: in training episodes
  std::optional<MultiAgentFigures> multi_agent;          // multi_agent, when it evaluated
  std::optional<double> joint_step_p50, joint_step_p99;  // multi_agent: wall seconds per step
  std::string policy;       // learner of a multi-agent file: its policy
  std::string policy_file;  // ... and the TorchScript file it exported
  /// inference with a linked `experience` port: transitions logged by outside clients and sent
  /// to the replays (their arrival depends on wall-clock time: no reproducible digest).
  std::optional<std::int64_t> outside_transitions;
  /// Reactor mode, a process that resumed from a checkpoint: the messages in transit its part
  /// held, which it sent again (federation/PROTOCOL.md §9.6).
  std::optional<std::int64_t> resent_in_transit;
  std::vector<ChannelResult> channels;
  /// Actor mode with restarts: per peer replica that went down, one entry per time — the
  /// messages this replica had sent it unanswered (nodes/replica_report.hpp).
  std::map<std::string, std::vector<std::int64_t>> unanswered_at_loss;

  /// The channel of output `port`, or nullptr.
  [[nodiscard]] const ChannelResult* find_channel(const std::string& port,
                                                  std::size_t channel) const;
};

struct ProcessResult {
  std::string process;
  std::string mode = "reactor";
  /// Wall seconds the process ran the run: from its federates' START (reactor mode; the wait for
  /// every process to join is left out) or from its actors' wiring (actor mode) to its end. Each
  /// replica's per_second in the summary is its count over these.
  double seconds = 0.0;
  /// target_return, env_steps, seconds, signal (actor mode: SIGTERM or SIGINT stopped the run
  /// here), or "" (stopped by another)
  std::string stop_reason;
  std::optional<reactors::Tag> cutoff;
  std::vector<ReplicaResult> replicas;
  /// The numeric kernels the process computed with (common/numerics.hpp).
  std::optional<numerics::Report> numerics;

  /// The JSON text (2-space indent).
  [[nodiscard]] std::string to_json() const;
  /// Parses to_json()'s format; throws std::invalid_argument on anything else.
  [[nodiscard]] static ProcessResult from_json(const std::string& text);
};

/// A multi-agent replica's joint_step_p50/p99 from the wall seconds between its joint steps
/// (both modes measure them; nothing when there are none).
void set_joint_step_latency(ReplicaResult& result, std::vector<float> intervals);

/// An env replica's episode_returns (those `returns` keeps) and episodes (all it counted).
void set_episode_returns(ReplicaResult& result, const EpisodeReturns& returns);

/// A numerics report as the JSON object of results and summaries: {"mode", "portable", "cpu",
/// "libm", "blas", "blas_core", "aten_capability", "kernels"} (kernels: numerics::describe()).
[[nodiscard]] std::string numerics_json(const numerics::Report& report);
/// Parses numerics_json()'s object (kernels ignored); throws std::invalid_argument.
[[nodiscard]] numerics::Report numerics_from_json(const std::string& text);

/// 16 lower-case hex digits.
[[nodiscard]] std::string hex64(std::uint64_t value);
/// Parses hex64()'s format; throws std::invalid_argument.
[[nodiscard]] std::uint64_t parse_hex64(const std::string& text);

}  // namespace tagflow::nodes

namespace tagflow::hosts {
using nodes::ChannelResult;
using nodes::hex64;
using nodes::MultiAgentFigures;
using nodes::parse_hex64;
using nodes::ProcessResult;
using nodes::ReplicaResult;
using nodes::set_joint_step_latency;
}  // namespace tagflow::hosts
