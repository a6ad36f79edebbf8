// NodeMetrics: the Prometheus families of one node replica, over its monitoring::ProcessMetrics.
//
// One object per replica (a process hosting several replicas has one ProcessMetrics, and one
// NodeMetrics, per replica: labels node=replica name). The families are the node kinds' own
// (node_families() below holds their specs; each kind's descriptor, nodes/<kind>/<kind>_kind.cpp,
// lists the ones it exports, and its ProcessMetrics registers those). The constructor looks up
// every family the ProcessMetrics registers; the methods below are what the bindings of both
// modes call, each an atomic update:
//   env steps: tagflow_env_steps_total, tagflow_episodes_total, tagflow_episode_return_mean (last
//              100 episodes), and for a multi-agent env tagflow_episode_length_mean and
//              tagflow_collisions_total;
//   weights:   tagflow_weights_version;
//   replay:    tagflow_replay_transitions_inserted_total / _sampled_total /
//              _priority_updates_total, tagflow_replay_transitions, tagflow_replay_bytes
//              (table="main");
//   learner:   tagflow_learner_updates_total, _loss, _update_duration_seconds,
//              _policy_lag_versions;
//   inference: tagflow_inference_requests_total, _batch_size, _request_duration_seconds;
//   evaluator (and a multi_agent env node's own evaluations): tagflow_evaluations_total,
//              tagflow_evaluation_return.
// Actor-mode bindings also mark the peers of transient kinds linked to them
// (tagflow_actor_members{peer}, set_member): how the launcher finds joined samplers.
// Calling a method whose family the process does not export is a programmer error
// (std::logic_error). Metrics never influence a run: they read counts and wall-clock durations,
// nothing feeds back.
// Thread-safety: the counters and gauges are atomics; the return window is guarded by a mutex,
// so any method may be called from any thread. The ProcessMetrics must outlive this object.
#pragma once

#include <cstdint>
#include <deque>
#include <initializer_list>
#include <mutex>
#include <string>
#include <vector>

#include "monitoring/process_metrics.hpp"
#include "nodes/kind/node_kind.hpp"

namespace tagflow::nodes {

/// The names of the node kinds' metric families.
namespace family {
inline constexpr const char* kEnvSteps = "tagflow_env_steps_total";
inline constexpr const char* kEpisodes = "tagflow_episodes_total";
inline constexpr const char* kReturnMean = "tagflow_episode_return_mean";
inline constexpr const char* kLengthMean = "tagflow_episode_length_mean";
inline constexpr const char* kCollisions = "tagflow_collisions_total";
inline constexpr const char* kWeightsVersion = "tagflow_weights_version";
inline constexpr const char* kReplayInserted = "tagflow_replay_transitions_inserted_total";
inline constexpr const char* kReplaySampled = "tagflow_replay_transitions_sampled_total";
inline constexpr const char* kReplayPriorityUpdates = "tagflow_replay_priority_updates_total";
inline constexpr const char* kReplayTransitions = "tagflow_replay_transitions";
inline constexpr const char* kReplayBytes = "tagflow_replay_bytes";
inline constexpr const char* kLearnerUpdates = "tagflow_learner_updates_total";
inline constexpr const char* kLearnerLoss = "tagflow_learner_loss";
inline constexpr const char* kLearnerPolicyLag = "tagflow_learner_policy_lag_versions";
inline constexpr const char* kLearnerUpdateDuration = "tagflow_learner_update_duration_seconds";
inline constexpr const char* kInferenceRequests = "tagflow_inference_requests_total";
inline constexpr const char* kInferenceBatchSize = "tagflow_inference_batch_size";
inline constexpr const char* kInferenceRequestDuration =
    "tagflow_inference_request_duration_seconds";
inline constexpr const char* kEvaluationReturn = "tagflow_evaluation_return";
inline constexpr const char* kEvaluations = "tagflow_evaluations_total";
}  // namespace family

/// The specs of these families (a kind's descriptor lists the ones it exports).
[[nodiscard]] std::vector<monitoring::MetricSpec> node_families(
    std::initializer_list<const char*> names);

class NodeMetrics {
 public:
  /// The name of the replay table label.
  static constexpr const char* kReplayTable = "main";
  /// Episodes in the tagflow_episode_return_mean window.
  static constexpr std::size_t kReturnWindow = 100;

  explicit NodeMetrics(monitoring::ProcessMetrics& metrics);
  NodeMetrics(const NodeMetrics&) = delete;
  NodeMetrics& operator=(const NodeMetrics&) = delete;

  [[nodiscard]] monitoring::ProcessMetrics& process_metrics() { return metrics_; }

  // sampler
  void add_env_steps(std::int64_t steps);
  void add_episodes(const std::vector<double>& returns);
  /// A multi-agent env's finished episodes: their lengths (joint steps) and collisions.
  void add_multi_agent_episodes(const std::vector<std::int64_t>& lengths,
                                const std::vector<std::int64_t>& collisions);
  // sampler, learner, inference
  void set_weights_version(std::uint64_t version);
  // replay
  void add_replay_inserted(std::uint64_t transitions);
  void add_replay_sampled(std::uint64_t transitions);
  void add_replay_priority_updates(std::uint64_t updates);
  void set_replay_size(std::size_t transitions, std::size_t bytes);
  // learner
  void add_learner_update(double loss, double seconds);
  void set_policy_lag(double versions);
  // actor mode: `peer`, a replica of a transient kind, is linked to this node (in) or left (out)
  void set_member(const std::string& peer, bool in);
  // inference: one forward pass of `rows` observations that took `seconds` of wall time
  void add_inference_batch(std::size_t rows, double seconds);
  // evaluator, multi_agent: one greedy evaluation (its mean return)
  void add_evaluation(double mean_return);
  // any kind: a value on input `port` that the node's logic refused for its content, dropped
  // (tagflow_transport_invalid_messages_total{peer=PORT, reason="rejected_by_node"}: the logic
  // sees ports, not senders)
  void add_rejected_input(const std::string& port);

 private:
  void require(const void* family, const char* what) const;

  monitoring::ProcessMetrics& metrics_;
  prometheus::Counter* env_steps_ = nullptr;
  prometheus::Counter* episodes_ = nullptr;
  prometheus::Gauge* return_mean_ = nullptr;
  prometheus::Gauge* length_mean_ = nullptr;
  prometheus::Counter* collisions_ = nullptr;
  prometheus::Gauge* weights_version_ = nullptr;
  prometheus::Counter* inserted_ = nullptr;
  prometheus::Counter* sampled_ = nullptr;
  prometheus::Counter* priority_updates_ = nullptr;
  prometheus::Gauge* replay_size_ = nullptr;
  prometheus::Gauge* replay_bytes_ = nullptr;
  prometheus::Counter* updates_ = nullptr;
  prometheus::Gauge* loss_ = nullptr;
  prometheus::Histogram* update_duration_ = nullptr;
  prometheus::Gauge* policy_lag_ = nullptr;
  prometheus::Counter* requests_ = nullptr;
  prometheus::Histogram* batch_size_ = nullptr;
  prometheus::Histogram* request_duration_ = nullptr;
  prometheus::Gauge* evaluation_return_ = nullptr;
  prometheus::Counter* evaluations_ = nullptr;
  std::mutex mutex_;                  // guards returns_ and return_sum_
  std::deque<double> returns_;        // the last kReturnWindow episode returns
  std::deque<std::int64_t> lengths_;  // the last kReturnWindow episode lengths (multi-agent)
  std::int64_t length_sum_ = 0;
  double return_sum_ = 0.0;
};

}  // namespace tagflow::nodes
