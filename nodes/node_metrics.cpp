#include "nodes/node_metrics.hpp"

#include <stdexcept>
#include <string>

#include "transport/drop_reason.hpp"

namespace tagflow::nodes {

using cluster::NodeKind;
using monitoring::Metric;

NodeMetrics::NodeMetrics(monitoring::ProcessMetrics& metrics, NodeKind kind)
    : metrics_(metrics), kind_(kind) {
  const monitoring::Labels table{{"table", kReplayTable}};
  switch (kind) {
    case NodeKind::multi_agent:
      length_mean_ = &metrics.gauge(Metric::episode_length_mean);
      collisions_ = &metrics.counter(Metric::collisions);
      [[fallthrough]];
    case NodeKind::sampler:
      env_steps_ = &metrics.counter(Metric::env_steps);
      episodes_ = &metrics.counter(Metric::episodes);
      return_mean_ = &metrics.gauge(Metric::episode_return_mean);
      weights_version_ = &metrics.gauge(Metric::weights_version);
      break;
    case NodeKind::replay:
      inserted_ = &metrics.counter(Metric::replay_transitions_inserted, table);
      sampled_ = &metrics.counter(Metric::replay_transitions_sampled, table);
      priority_updates_ = &metrics.counter(Metric::replay_priority_updates, table);
      replay_size_ = &metrics.gauge(Metric::replay_transitions, table);
      replay_bytes_ = &metrics.gauge(Metric::replay_bytes, table);
      break;
    case NodeKind::learner:
      updates_ = &metrics.counter(Metric::learner_updates);
      loss_ = &metrics.gauge(Metric::learner_loss);
      update_duration_ = &metrics.histogram(Metric::learner_update_duration);
      policy_lag_ = &metrics.gauge(Metric::learner_policy_lag);
      weights_version_ = &metrics.gauge(Metric::weights_version);
      break;
    case NodeKind::inference:
      requests_ = &metrics.counter(Metric::inference_requests);
      batch_size_ = &metrics.histogram(Metric::inference_batch_size);
      request_duration_ = &metrics.histogram(Metric::inference_request_duration);
      weights_version_ = &metrics.gauge(Metric::weights_version);
      break;
  }
}

void NodeMetrics::require(NodeKind kind, const char* what) const {
  if (kind_ != kind) {
    throw std::logic_error(std::string("NodeMetrics::") + what + " on a " + to_string(kind_) +
                           " (it belongs to " + to_string(kind) + ")");
  }
}

void NodeMetrics::add_env_steps(std::int64_t steps) {
  if (kind_ != NodeKind::multi_agent) require(NodeKind::sampler, "add_env_steps");
  env_steps_->Increment(static_cast<double>(steps));
}

void NodeMetrics::add_episodes(const std::vector<double>& returns) {
  if (kind_ != NodeKind::multi_agent) require(NodeKind::sampler, "add_episodes");
  if (returns.empty()) return;
  episodes_->Increment(static_cast<double>(returns.size()));
  const std::lock_guard<std::mutex> lock(mutex_);
  for (const double r : returns) {
    returns_.push_back(r);
    return_sum_ += r;
    if (returns_.size() > kReturnWindow) {
      return_sum_ -= returns_.front();
      returns_.pop_front();
    }
  }
  return_mean_->Set(return_sum_ / static_cast<double>(returns_.size()));
}

void NodeMetrics::add_multi_agent_episodes(const std::vector<std::int64_t>& lengths,
                                           const std::vector<std::int64_t>& collisions) {
  require(NodeKind::multi_agent, "add_multi_agent_episodes");
  std::int64_t collided = 0;
  for (const std::int64_t c : collisions) collided += c;
  collisions_->Increment(static_cast<double>(collided));
  if (lengths.empty()) return;
  const std::lock_guard<std::mutex> lock(mutex_);
  for (const std::int64_t length : lengths) {
    lengths_.push_back(length);
    length_sum_ += length;
    if (lengths_.size() > kReturnWindow) {
      length_sum_ -= lengths_.front();
      lengths_.pop_front();
    }
  }
  length_mean_->Set(static_cast<double>(length_sum_) / static_cast<double>(lengths_.size()));
}

void NodeMetrics::set_weights_version(std::uint64_t version) {
  if (weights_version_ == nullptr) throw std::logic_error("NodeMetrics: a replay has no weights");
  weights_version_->Set(static_cast<double>(version));
}

void NodeMetrics::add_replay_inserted(std::uint64_t transitions) {
  require(NodeKind::replay, "add_replay_inserted");
  inserted_->Increment(static_cast<double>(transitions));
}

void NodeMetrics::add_replay_sampled(std::uint64_t transitions) {
  require(NodeKind::replay, "add_replay_sampled");
  sampled_->Increment(static_cast<double>(transitions));
}

void NodeMetrics::add_rejected_input(const std::string& port) {
  metrics_
      .counter(Metric::transport_invalid_messages,
               {{"peer", port},
                {"reason", transport::drop_reason_name(transport::DropReason::kRejectedByNode)}})
      .Increment();
}

void NodeMetrics::add_replay_priority_updates(std::uint64_t updates) {
  require(NodeKind::replay, "add_replay_priority_updates");
  priority_updates_->Increment(static_cast<double>(updates));
}

void NodeMetrics::set_replay_size(std::size_t transitions, std::size_t bytes) {
  require(NodeKind::replay, "set_replay_size");
  replay_size_->Set(static_cast<double>(transitions));
  replay_bytes_->Set(static_cast<double>(bytes));
}

void NodeMetrics::add_learner_update(double loss, double seconds) {
  require(NodeKind::learner, "add_learner_update");
  updates_->Increment();
  loss_->Set(loss);
  update_duration_->Observe(seconds);
}

void NodeMetrics::set_policy_lag(double versions) {
  require(NodeKind::learner, "set_policy_lag");
  policy_lag_->Set(versions);
}

void NodeMetrics::set_sampler_member(const std::string& sampler, bool in) {
  if (kind_ == NodeKind::sampler) throw std::logic_error("NodeMetrics: a sampler has no members");
  metrics_.gauge(Metric::actor_members, {{"peer", sampler}}).Set(in ? 1.0 : 0.0);
}

void NodeMetrics::add_inference_batch(std::size_t rows, double seconds) {
  require(NodeKind::inference, "add_inference_batch");
  requests_->Increment(static_cast<double>(rows));
  batch_size_->Observe(static_cast<double>(rows));
  request_duration_->Observe(seconds);
}

}  // namespace tagflow::nodes
