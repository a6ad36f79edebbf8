// ProcessMetrics: the one metric registry of a tagflow process.
//
// Owns a prometheus-cpp Registry holding exactly the catalogue families (metric_catalogue.hpp)
// that this process's kind exports, plus the families given at construction (a node kind's own,
// nodes/kind/node_kind.hpp), each with the constant labels node/kind/mode of this process, plus a
// ProcessCollector for the process_* families. Families without per-series labels are created at
// construction, so they are exported (as 0) before the first update.
//
// Usage: look a series up once and keep the reference; updating it is a lock-free atomic.
//
//   ProcessMetrics metrics({"sampler-0", "sampler", "reactor"}, its_kinds_families);
//   prometheus::Counter& steps = metrics.counter("tagflow_env_steps_total");
//   prometheus::Counter& sent =
//       metrics.counter(Metric::transport_messages_sent, {{"peer", "replay"}});
//   steps.Increment(num_envs);
//
// Errors (programmer errors, std::logic_error): asking for a family of another type, a family
// this kind does not export, a process-collector or scrape family, or labels whose names differ
// from the catalogue's. Label values are free text.
// Lifetime: returned references stay valid as long as the ProcessMetrics object.
// Thread-safety: every method may be called from any thread (series lookup takes the family's
// mutex; updates are atomics). Not copyable or movable.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/metric_family.h>
#include <prometheus/registry.h>

#include "monitoring/metric_catalogue.hpp"
#include "monitoring/process_collector.hpp"

namespace tagflow::monitoring {

using Labels = std::map<std::string, std::string>;

/// The labels every series of a process carries: node, kind and mode.
[[nodiscard]] Labels constant_labels(const ProcessIdentity& identity);

class ProcessMetrics {
 public:
  /// The catalogue's families this kind exports, and `own` (a node kind's families; one already
  /// registered is skipped). Throws std::invalid_argument when identity.node is empty.
  explicit ProcessMetrics(ProcessIdentity identity, const std::vector<MetricSpec>& own = {});
  ProcessMetrics(const ProcessMetrics&) = delete;
  ProcessMetrics& operator=(const ProcessMetrics&) = delete;

  const ProcessIdentity& identity() const { return identity_; }

  /// The series of `metric` with these per-series labels (created on first use).
  [[nodiscard]] prometheus::Counter& counter(Metric metric, const Labels& labels = {});
  [[nodiscard]] prometheus::Gauge& gauge(Metric metric, const Labels& labels = {});
  [[nodiscard]] prometheus::Histogram& histogram(Metric metric, const Labels& labels = {});
  /// The same by family name (a node kind's families have no Metric of their own).
  [[nodiscard]] prometheus::Counter& counter(const std::string& family, const Labels& labels = {});
  [[nodiscard]] prometheus::Gauge& gauge(const std::string& family, const Labels& labels = {});
  [[nodiscard]] prometheus::Histogram& histogram(const std::string& family,
                                                 const Labels& labels = {});

  /// True when this process exports `metric` (or the family called `family`) through this
  /// registry.
  bool registers(Metric metric) const;
  bool registers(const std::string& family) const;

  /// What an Exposer serves: the registry and the process collector.
  std::vector<std::weak_ptr<prometheus::Collectable>> collectables() const;

  /// Every family with its current values, as a scrape would see it.
  std::vector<prometheus::MetricFamily> collect() const;

  /// collect() in the Prometheus text exposition format (what /metrics returns).
  std::string text() const;

  /// Readiness, as the endpoint's /health/ready reports it: true from construction unless a part
  /// of the process that loads something first (an inference gateway) sets it false until done.
  void set_ready(bool ready) { ready_->store(ready, std::memory_order_release); }
  [[nodiscard]] bool ready() const { return ready_->load(std::memory_order_acquire); }
  /// The flag itself, shared with the endpoint (which may outlive this object).
  [[nodiscard]] std::shared_ptr<const std::atomic<bool>> readiness() const { return ready_; }

 private:
  void add_family(const MetricSpec& spec);
  const MetricSpec& checked(const std::string& family, MetricType type, const Labels& labels) const;

  ProcessIdentity identity_;
  std::shared_ptr<prometheus::Registry> registry_;
  std::shared_ptr<ProcessCollector> process_collector_;
  std::shared_ptr<std::atomic<bool>> ready_ = std::make_shared<std::atomic<bool>>(true);
  // By family name, the families this process exports. Written only in the constructor, so
  // reading them needs no lock.
  std::map<std::string, MetricSpec> specs_;
  std::map<std::string, prometheus::Family<prometheus::Counter>*> counters_;
  std::map<std::string, prometheus::Family<prometheus::Gauge>*> gauges_;
  std::map<std::string, prometheus::Family<prometheus::Histogram>*> histograms_;
};

}  // namespace tagflow::monitoring
