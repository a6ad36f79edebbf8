#include "nodes/node_metrics.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "transport/drop_reason.hpp"

namespace tagflow::nodes {

using monitoring::Metric;
using monitoring::MetricSpec;
using monitoring::MetricType;

namespace {

std::vector<MetricSpec> make_families() {
  const std::vector<std::string> table = {"table"};
  return {
      kind_metric(MetricType::counter, family::kEnvSteps,
                  "Environment steps taken (one per environment per step; a multi-agent env's "
                  "joint step counts once)."),
      kind_metric(MetricType::counter, family::kEpisodes,
                  "Episodes finished (terminated or truncated)."),
      kind_metric(MetricType::gauge, family::kReturnMean,
                  "Mean undiscounted return of the last 100 episodes finished by this process (a "
                  "multi-agent env: the team return, every agent's rewards summed)."),
      kind_metric(MetricType::gauge, family::kLengthMean,
                  "Mean length in joint steps of the last 100 episodes of a multi-agent env."),
      kind_metric(MetricType::counter, family::kCollisions,
                  "Collisions in a multi-agent env (TrafficJunction: cars moving into each "
                  "other)."),
      kind_metric(MetricType::gauge, family::kWeightsVersion,
                  "Version of the policy weights this process holds (the learner: the newest it "
                  "made; a sampler served by inference: the weights that chose its last "
                  "actions; a multi_agent env node: the lowest version among the weights that "
                  "chose its last joint actions)."),
      kind_metric(MetricType::counter, family::kReplayInserted,
                  "Transitions inserted into a replay table.", "", table),
      kind_metric(MetricType::counter, family::kReplaySampled,
                  "Transitions sampled from a replay table (counted once per time sampled).", "",
                  table),
      kind_metric(MetricType::counter, family::kReplayPriorityUpdates,
                  "Priority updates applied to items of a replay table.", "", table),
      kind_metric(MetricType::gauge, family::kReplayTransitions,
                  "Transitions currently stored in a replay table.", "", table),
      kind_metric(MetricType::gauge, family::kReplayBytes,
                  "Bytes of transition data currently stored in a replay table.", "bytes", table),
      kind_metric(MetricType::counter, family::kLearnerUpdates,
                  "Gradient updates applied by the learner."),
      kind_metric(MetricType::gauge, family::kLearnerLoss, "Loss of the latest gradient update."),
      kind_metric(MetricType::gauge, family::kLearnerPolicyLag,
                  "Weights versions between the learner's newest weights and the weights that "
                  "acted for the transitions of its latest batch (mean over the batch)."),
      kind_metric(MetricType::histogram, family::kLearnerUpdateDuration,
                  "Wall time of one gradient update (forward, backward, optimizer step).",
                  "seconds", {}, monitoring::latency_buckets()),
      kind_metric(MetricType::counter, family::kInferenceRequests,
                  "Action requests answered (one per observation)."),
      kind_metric(MetricType::histogram, family::kInferenceBatchSize,
                  "Observations per batch of requests the inference server answers (at most "
                  "max_batch rows per forward pass).",
                  "", {}, monitoring::batch_size_buckets()),
      kind_metric(MetricType::histogram, family::kInferenceRequestDuration,
                  "Time to answer one batch of requests: its forward pass and the replies it makes "
                  "(once per batch; time queued or waiting for a tag is not in it).",
                  "seconds", {}, monitoring::latency_buckets()),
      kind_metric(MetricType::gauge, family::kEvaluationReturn,
                  "Mean return of the latest greedy evaluation (fixed-seed episodes): a "
                  "learner's of its own weights (the figure stop.target_return reads), an "
                  "evaluator's of the learner's weights, a multi_agent env node's of the policies "
                  "that act for it (team return: every agent's rewards summed); 0 before the "
                  "first."),
      kind_metric(MetricType::counter, family::kEvaluations,
                  "Greedy evaluations run (a learner's: every eval_every updates when the file has "
                  "stop.target_return; an evaluator's; a multi_agent env node's: every eval_every "
                  "joint steps and at the end)."),
  };
}

}  // namespace

std::vector<MetricSpec> node_families(std::initializer_list<const char*> names) {
  static const std::vector<MetricSpec> all = make_families();
  std::vector<MetricSpec> out;
  for (const char* name : names) {
    const auto it = std::find_if(all.begin(), all.end(),
                                 [name](const MetricSpec& s) { return s.name == name; });
    if (it == all.end()) throw std::logic_error(std::string("no node metric family ") + name);
    out.push_back(*it);
  }
  return out;
}

namespace {

template <class T>
T* find_family(monitoring::ProcessMetrics& metrics, const char* name,
               const monitoring::Labels& labels = {}) {
  if (!metrics.registers(name)) return nullptr;
  if constexpr (std::is_same_v<T, prometheus::Counter>) {
    return &metrics.counter(name, labels);
  } else if constexpr (std::is_same_v<T, prometheus::Gauge>) {
    return &metrics.gauge(name, labels);
  } else {
    return &metrics.histogram(name, labels);
  }
}

}  // namespace

NodeMetrics::NodeMetrics(monitoring::ProcessMetrics& metrics) : metrics_(metrics) {
  using prometheus::Counter;
  using prometheus::Gauge;
  using prometheus::Histogram;
  const monitoring::Labels table{{"table", kReplayTable}};
  env_steps_ = find_family<Counter>(metrics, family::kEnvSteps);
  episodes_ = find_family<Counter>(metrics, family::kEpisodes);
  return_mean_ = find_family<Gauge>(metrics, family::kReturnMean);
  length_mean_ = find_family<Gauge>(metrics, family::kLengthMean);
  collisions_ = find_family<Counter>(metrics, family::kCollisions);
  weights_version_ = find_family<Gauge>(metrics, family::kWeightsVersion);
  inserted_ = find_family<Counter>(metrics, family::kReplayInserted, table);
  sampled_ = find_family<Counter>(metrics, family::kReplaySampled, table);
  priority_updates_ = find_family<Counter>(metrics, family::kReplayPriorityUpdates, table);
  replay_size_ = find_family<Gauge>(metrics, family::kReplayTransitions, table);
  replay_bytes_ = find_family<Gauge>(metrics, family::kReplayBytes, table);
  updates_ = find_family<Counter>(metrics, family::kLearnerUpdates);
  loss_ = find_family<Gauge>(metrics, family::kLearnerLoss);
  update_duration_ = find_family<Histogram>(metrics, family::kLearnerUpdateDuration);
  policy_lag_ = find_family<Gauge>(metrics, family::kLearnerPolicyLag);
  requests_ = find_family<Counter>(metrics, family::kInferenceRequests);
  batch_size_ = find_family<Histogram>(metrics, family::kInferenceBatchSize);
  request_duration_ = find_family<Histogram>(metrics, family::kInferenceRequestDuration);
  evaluation_return_ = find_family<Gauge>(metrics, family::kEvaluationReturn);
  evaluations_ = find_family<Counter>(metrics, family::kEvaluations);
}

void NodeMetrics::require(const void* family, const char* what) const {
  if (family == nullptr) {
    throw std::logic_error(std::string("NodeMetrics::") + what + ": a " + metrics_.identity().kind +
                           " process does not export its family");
  }
}

void NodeMetrics::add_env_steps(std::int64_t steps) {
  require(env_steps_, "add_env_steps");
  env_steps_->Increment(static_cast<double>(steps));
}

void NodeMetrics::add_episodes(const std::vector<double>& returns) {
  require(episodes_, "add_episodes");
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
  require(collisions_, "add_multi_agent_episodes");
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
  require(weights_version_, "set_weights_version");
  weights_version_->Set(static_cast<double>(version));
}

void NodeMetrics::add_replay_inserted(std::uint64_t transitions) {
  require(inserted_, "add_replay_inserted");
  inserted_->Increment(static_cast<double>(transitions));
}

void NodeMetrics::add_replay_sampled(std::uint64_t transitions) {
  require(sampled_, "add_replay_sampled");
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
  require(priority_updates_, "add_replay_priority_updates");
  priority_updates_->Increment(static_cast<double>(updates));
}

void NodeMetrics::set_replay_size(std::size_t transitions, std::size_t bytes) {
  require(replay_size_, "set_replay_size");
  replay_size_->Set(static_cast<double>(transitions));
  replay_bytes_->Set(static_cast<double>(bytes));
}

void NodeMetrics::add_learner_update(double loss, double seconds) {
  require(updates_, "add_learner_update");
  updates_->Increment();
  loss_->Set(loss);
  update_duration_->Observe(seconds);
}

void NodeMetrics::set_policy_lag(double versions) {
  require(policy_lag_, "set_policy_lag");
  policy_lag_->Set(versions);
}

void NodeMetrics::set_member(const std::string& peer, bool in) {
  metrics_.gauge(Metric::actor_members, {{"peer", peer}}).Set(in ? 1.0 : 0.0);
}

void NodeMetrics::add_inference_batch(std::size_t rows, double seconds) {
  require(requests_, "add_inference_batch");
  requests_->Increment(static_cast<double>(rows));
  batch_size_->Observe(static_cast<double>(rows));
  request_duration_->Observe(seconds);
}

void NodeMetrics::add_evaluation(double mean_return) {
  require(evaluations_, "add_evaluation");
  evaluations_->Increment();
  evaluation_return_->Set(mean_return);
}

}  // namespace tagflow::nodes
