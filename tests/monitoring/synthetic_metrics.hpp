// Test helper: puts a value into every series a process kind exports, as a running node would,
// so that tests and the test exporter see every catalogue family with data.
#pragma once

#include <string>

#include "monitoring/process_metrics.hpp"

namespace tagflow::testing {

/// A value for a per-series label: peers are processes, other labels get a fixed word.
inline std::string synthetic_label_value(const std::string& label) {
  if (label == "peer") return "coordinator";
  if (label == "reason") return "bad_version";
  if (label == "table") return "main";
  return label + "-value";
}

/// Call once per `tick` (1, 2, 3, ...): counters grow by tick, gauges are set to tick,
/// histograms observe one value from the middle of their buckets.
inline void fill_synthetic_metrics(monitoring::ProcessMetrics& metrics, int tick) {
  using monitoring::MetricType;
  for (const monitoring::MetricSpec& s : monitoring::catalogue()) {
    if (!metrics.registers(s.id) || s.id == monitoring::Metric::build_info) continue;
    monitoring::Labels labels;
    for (const std::string& label : s.labels) labels[label] = synthetic_label_value(label);
    switch (s.type) {
      case MetricType::counter:
        metrics.counter(s.id, labels).Increment(tick);
        break;
      case MetricType::gauge:
        metrics.gauge(s.id, labels).Set(tick);
        break;
      case MetricType::histogram:
        metrics.histogram(s.id, labels).Observe(s.buckets[s.buckets.size() / 2] * 0.9);
        break;
    }
  }
}

}  // namespace tagflow::testing
