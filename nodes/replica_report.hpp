// ReplicaReport: what one node actor tells the process that hosts it — live progress (atomics,
// read by the progress line from any thread) and its results (read after the actor ended).
//
// Ownership: shared (std::shared_ptr) between the actor and its host. Thread-safety: the atomics
// may be read at any time; the fields under `mutex` are written by the actor and read by the
// host under the mutex (the host reads them once the actor has terminated).
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "nodes/episode_returns.hpp"
#include "nodes/messages.hpp"

namespace tagflow::nodes {

struct ReplicaReport {
  std::string name;  // replica name, e.g. sampler-0
  std::string kind;  // its kind's name (nodes/kind/node_kind.hpp)

  // Live progress.
  std::atomic<std::int64_t> count{0};  // env steps, inserts, updates or rows served
  std::atomic<std::int64_t> episodes{0};
  std::atomic<double> last_return{0.0};
  std::atomic<double> last_evaluation{std::numeric_limits<double>::quiet_NaN()};  // NaN: none yet
  std::atomic<std::uint64_t> weights_version{0};
  std::atomic<std::int64_t> peers{0};                // samplers known to a replay/inference/learner
  std::atomic<std::int64_t> outside_transitions{0};  // inference: logged experience sent
  std::atomic<bool> done{false};

  // Results.
  std::mutex mutex;
  EpisodeReturns episode_returns;                      // sampler, multi_agent (bounded)
  std::vector<double> evaluations;                     // learner
  bool target_reached = false;                         // learner
  std::string stop_reason;                             // why this replica stopped
  std::optional<nodes::WeightsMessage> final_weights;  // learner
  std::string policy_file;                             // learner: its exported policy
  // multi_agent: collisions, the last evaluation beside random play (when it evaluated), and
  // wall seconds between joint steps.
  std::int64_t collisions = 0;
  std::optional<double> mean_return, collisions_per_episode, random_return,
      random_collisions_per_episode, success_rate, random_success_rate;
  int evaluation_episodes = 0;
  std::int64_t evaluated_at = 0;  // the last evaluation's training joint steps
  bool final_evaluation = false;  // ... and whether it was the final one
  std::vector<float> step_intervals;
  // Actor mode with restarts: per peer replica that went down, one entry per time it did — the
  // messages this replica had sent it on credit links that it had not answered (in flight).
  std::map<std::string, std::vector<std::int64_t>> unanswered_at_loss;

  ReplicaReport(std::string name_, std::string kind_)
      : name(std::move(name_)), kind(std::move(kind_)) {}
};

}  // namespace tagflow::nodes
