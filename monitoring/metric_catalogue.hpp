// The metric catalogue: every metric family a tagflow process exports that is not a node kind's
// own, in one place; each node kind declares its own families (nodes/kind/node_kind.hpp), and
// nodes::full_metric_catalogue() (nodes/kind/registry.hpp) lists both.
//
// Contract: a process registers metrics only through ProcessMetrics (process_metrics.hpp), which
// accepts only the families listed here or given to it (its kind's), with exactly the per-series
// labels of their spec. The Grafana dashboard (monitoring/grafana/) queries only catalogued
// names. So the three stay in step.
//
// Conventions (Prometheus naming practice):
//   - application families are prefixed `tagflow_`; counters end in `_total`;
//   - base units in the name: `_seconds`, `_bytes` (never milliseconds or kilobytes);
//   - latencies are histograms (`_bucket`, `_sum`, `_count` series);
//   - every series carries the constant labels `node` (process name, e.g. sampler-0), `kind`
//     (coordinator, or the node kind's name) and `mode` (reactor, actor);
//   - per-peer families carry `peer` (the process name at the other end).
//
// Process families (CPU, resident memory, ...) use the standard unprefixed names
// `process_cpu_seconds_total`, `process_resident_memory_bytes`, ... that every official
// Prometheus client exports: existing dashboards and alerts recognise them, and the node/kind/mode
// labels still tell tagflow processes apart. `up` is listed too: Prometheus itself writes it for
// every scrape target, and the dashboard uses it to show processes that are down.
//
// The catalogue is immutable static data: every function here is thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "monitoring/process_identity.hpp"

namespace tagflow::monitoring {

enum class MetricType { counter, gauge, histogram };

const char* to_string(MetricType type);

/// Where the series of a family come from.
enum class MetricSource {
  registry,           // created and updated through ProcessMetrics by the process's own code
  process_collector,  // read from /proc/self at every scrape (ProcessCollector)
  scrape,             // written by Prometheus for each target (`up`); not exported by processes
};

/// Every family, by name. The order is the catalogue's order (grouped by subsystem).
enum class Metric {
  build_info,
  transport_messages_sent,
  transport_messages_received,
  transport_sent_bytes,
  transport_received_bytes,
  transport_invalid_messages,
  federation_grants,
  federation_deferred_waits,
  federation_waiting_for_start,
  checkpoint_parts,
  checkpoint_written_bytes,
  checkpoint_resumed_from,
  checkpoint_resent_messages,
  actor_members,
  coordinator_tag_advances,
  coordinator_report_requests,
  coordinator_grant_latency,
  coordinator_heartbeats,
  coordinator_silences,
  coordinator_silence_seconds,
  coordinator_federates,
  coordinator_federate_failures,
  process_cpu_seconds,
  process_resident_memory,
  process_virtual_memory,
  process_open_fds,
  process_start_time,
  up,
  node_kind,  // a family declared by a node kind (nodes/kind/node_kind.hpp), not in catalogue()
};

inline constexpr std::size_t kMetricCount = static_cast<std::size_t>(Metric::up) + 1;

/// The exporter that stands for every node process, whatever its kind.
inline constexpr const char* kNodeProcesses = "node";

/// The labels every exported series carries, set once per process.
inline const std::vector<std::string>& constant_label_names() {
  static const std::vector<std::string> names = {"node", "kind", "mode"};
  return names;
}

struct MetricSpec {
  Metric id;
  std::string name;  // full family name, e.g. tagflow_env_steps_total
  std::string help;
  MetricType type;
  std::string unit;                    // "seconds", "bytes", or "" for a plain count/ratio
  std::vector<std::string> labels;     // per-series labels besides node/kind/mode, in order
  std::vector<double> buckets;         // histogram upper bounds (ascending); empty otherwise
  std::vector<std::string> exporters;  // who exports it: `kind` label values, or kNodeProcesses
  MetricSource source = MetricSource::registry;

  bool exported_by(const std::string& kind) const;
};

/// Every family, in Metric order (catalogue()[i].id == Metric(i)).
const std::vector<MetricSpec>& catalogue();

/// The spec of one family.
const MetricSpec& spec(Metric metric);

/// The spec whose family name is `name`; for histograms the `_bucket`, `_sum` and `_count`
/// series names resolve to their family too. nullopt when the name is not in the catalogue.
std::optional<Metric> find_metric(const std::string& name);

/// Bucket bounds for latencies: 10 µs to 10 s, roughly 1-2.5-5 per decade.
const std::vector<double>& latency_buckets();

/// Bucket bounds for batch sizes: 1, 2, 4, ..., 4096.
const std::vector<double>& batch_size_buckets();

/// A catalogue (this one, or the full one with the node kinds' families) as a Markdown table
/// (name, type, unit, labels, exported by, help).
std::string catalogue_markdown(const std::vector<MetricSpec>& specs = catalogue());

}  // namespace tagflow::monitoring
