// NodeMetrics: the Prometheus families of one node replica, over its monitoring::ProcessMetrics.
//
// One object per replica (a process hosting several replicas has one ProcessMetrics, and one
// NodeMetrics, per replica: labels node=replica name). The families of the replica's kind are
// looked up once in the constructor; the methods below are what the bindings of both modes call
// (reactor bindings and actor bindings alike), each an atomic update:
//   sampler:   tagflow_env_steps_total, tagflow_episodes_total, tagflow_episode_return_mean (last
//              100 episodes), tagflow_weights_version;
//   replay:    tagflow_replay_transitions_inserted_total / _sampled_total /
//              _priority_updates_total, tagflow_replay_transitions, tagflow_replay_bytes
//              (table="main");
//   learner:   tagflow_learner_updates_total, _loss, _update_duration_seconds,
//   _policy_lag_versions,
//              tagflow_weights_version;
//   inference: tagflow_inference_requests_total, _batch_size, _request_duration_seconds,
//              tagflow_weights_version;
//   multi_agent: the sampler's families (joint steps, team returns) plus
//              tagflow_episode_length_mean and tagflow_collisions_total.
// Actor-mode bindings of replay, learner and inference also mark the samplers linked to them
// (tagflow_actor_members{peer}, set_sampler_member): how the launcher finds joined samplers.
// Calling a method of another kind is a programmer error (std::logic_error). Metrics never
// influence a run: they read counts and wall-clock durations, nothing feeds back.
// Thread-safety: the counters and gauges are atomics; the return window is guarded by a mutex,
// so any method may be called from any thread. The ProcessMetrics must outlive this object.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "monitoring/process_metrics.hpp"
#include "nodes/cluster/cluster_config.hpp"

namespace tagflow::nodes {

class NodeMetrics {
 public:
  /// The name of the replay table label.
  static constexpr const char* kReplayTable = "main";
  /// Episodes in the tagflow_episode_return_mean window.
  static constexpr std::size_t kReturnWindow = 100;

  NodeMetrics(monitoring::ProcessMetrics& metrics, cluster::NodeKind kind);
  NodeMetrics(const NodeMetrics&) = delete;
  NodeMetrics& operator=(const NodeMetrics&) = delete;

  [[nodiscard]] cluster::NodeKind kind() const { return kind_; }
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
  // replay, learner, inference (actor mode): `sampler` is linked to this node (in) or left (out)
  void set_sampler_member(const std::string& sampler, bool in);
  // inference: one forward pass of `rows` observations that took `seconds` of wall time
  void add_inference_batch(std::size_t rows, double seconds);
  // any kind: a value on input `port` that the node's logic refused for its content, dropped
  // (tagflow_transport_invalid_messages_total{peer=PORT, reason="rejected_by_node"}: the logic
  // sees ports, not senders)
  void add_rejected_input(const std::string& port);

 private:
  void require(cluster::NodeKind kind, const char* what) const;

  monitoring::ProcessMetrics& metrics_;
  cluster::NodeKind kind_;
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
  std::mutex mutex_;                  // guards returns_ and return_sum_
  std::deque<double> returns_;        // the last kReturnWindow episode returns
  std::deque<std::int64_t> lengths_;  // the last kReturnWindow episode lengths (multi-agent)
  std::int64_t length_sum_ = 0;
  double return_sum_ = 0.0;
};

}  // namespace tagflow::nodes
