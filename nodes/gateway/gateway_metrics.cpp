#include "nodes/gateway/gateway_metrics.hpp"

#include "nodes/kind/node_kind.hpp"

namespace tagflow::gateway {
namespace {

using monitoring::MetricType;
using nodes::kind_metric;

std::vector<monitoring::MetricSpec> make_families() {
  const std::vector<std::string> policy = {"policy"};
  return {
      kind_metric(MetricType::counter, metric::kRequests,
                  "Inference service: agent observations answered for outside clients, per "
                  "policy.",
                  "", policy),
      kind_metric(MetricType::counter, metric::kErrors,
                  "Inference service: requests refused, by reason (the protocol's error code, or "
                  "slow_reader for a dropped reply); policy is always \"none\": a refusal is "
                  "the request's, not a policy's.",
                  "", {"policy", "reason"}),
      kind_metric(MetricType::histogram, metric::kQueueDuration,
                  "Inference service: time from a request's arrival to its forward pass.",
                  "seconds", policy, monitoring::latency_buckets()),
      kind_metric(MetricType::histogram, metric::kComputeDuration,
                  "Inference service: wall time of one forward pass of a batch.", "seconds", policy,
                  monitoring::latency_buckets()),
      kind_metric(MetricType::histogram, metric::kRequestDuration,
                  "Inference service: time from a request's arrival to its reply being sent (end "
                  "to end inside the gateway).",
                  "seconds", policy, monitoring::latency_buckets()),
      kind_metric(MetricType::histogram, metric::kBatchSize,
                  "Inference service: observations of one policy per forward pass.", "", policy,
                  monitoring::batch_size_buckets()),
      kind_metric(MetricType::gauge, metric::kInFlight,
                  "Inference service: observations of a policy queued or being computed.", "",
                  policy),
      kind_metric(MetricType::counter, metric::kTransitions,
                  "Inference service: transitions of logged episodes, by policy and outcome "
                  "(logged: queued for the replay; dropped: the experience queue was full; "
                  "no_replay: no replay server takes this policy's experience).",
                  "", {"policy", "outcome"}),
  };
}

}  // namespace

const std::vector<monitoring::MetricSpec>& metric_families() {
  static const std::vector<monitoring::MetricSpec> families = make_families();
  return families;
}

}  // namespace tagflow::gateway
