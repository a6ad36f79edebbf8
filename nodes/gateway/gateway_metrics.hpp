// The metric families of the inference service gateway (service_gateway.hpp), exported by the
// inference kind's processes (nodes/inference/inference_kind.cpp); each series has the label
// `policy`.
#pragma once

#include <vector>

#include "monitoring/metric_catalogue.hpp"

namespace tagflow::gateway {

namespace metric {
inline constexpr const char* kRequests = "tagflow_gateway_requests_total";
inline constexpr const char* kErrors = "tagflow_gateway_errors_total";
inline constexpr const char* kQueueDuration = "tagflow_gateway_queue_seconds";
inline constexpr const char* kComputeDuration = "tagflow_gateway_compute_seconds";
inline constexpr const char* kRequestDuration = "tagflow_gateway_request_duration_seconds";
inline constexpr const char* kBatchSize = "tagflow_gateway_batch_size";
inline constexpr const char* kInFlight = "tagflow_gateway_in_flight";
inline constexpr const char* kTransitions = "tagflow_gateway_transitions_total";
}  // namespace metric

/// The specs of the families above.
[[nodiscard]] const std::vector<monitoring::MetricSpec>& metric_families();

}  // namespace tagflow::gateway
