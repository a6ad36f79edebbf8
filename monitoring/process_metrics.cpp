#include "monitoring/process_metrics.hpp"

#include <stdexcept>

#include <prometheus/text_serializer.h>

#include "tagflow/build_info.hpp"

namespace tagflow::monitoring {
namespace {

Labels constant_labels(const ProcessIdentity& identity) {
  return {{"node", identity.node}, {"kind", identity.kind}, {"mode", identity.mode}};
}

std::string label_names(const Labels& labels) {
  std::string out;
  for (const auto& [name, value] : labels) out += (out.empty() ? "" : ", ") + name;
  return "{" + out + "}";
}

}  // namespace

ProcessMetrics::ProcessMetrics(ProcessIdentity identity)
    : identity_(std::move(identity)),
      registry_(
          std::make_shared<prometheus::Registry>(prometheus::Registry::InsertBehavior::Throw)),
      counters_(kMetricCount, nullptr),
      gauges_(kMetricCount, nullptr),
      histograms_(kMetricCount, nullptr) {
  if (identity_.node.empty()) throw std::invalid_argument("ProcessMetrics: empty node name");
  const Labels constants = constant_labels(identity_);
  process_collector_ = std::make_shared<ProcessCollector>(constants);
  for (const MetricSpec& s : catalogue()) {
    if (!registers(s.id)) continue;
    const auto i = static_cast<std::size_t>(s.id);
    switch (s.type) {
      case MetricType::counter:
        counters_[i] =
            &prometheus::BuildCounter().Name(s.name).Help(s.help).Labels(constants).Register(
                *registry_);
        if (s.labels.empty()) counters_[i]->Add({});
        break;
      case MetricType::gauge:
        gauges_[i] = &prometheus::BuildGauge().Name(s.name).Help(s.help).Labels(constants).Register(
            *registry_);
        if (s.labels.empty()) gauges_[i]->Add({});
        break;
      case MetricType::histogram:
        histograms_[i] =
            &prometheus::BuildHistogram().Name(s.name).Help(s.help).Labels(constants).Register(
                *registry_);
        if (s.labels.empty()) histograms_[i]->Add({}, s.buckets);
        break;
    }
  }
  gauge(Metric::build_info, {{"version", build_info::kVersion}}).Set(1.0);
}

bool ProcessMetrics::registers(Metric metric) const {
  const MetricSpec& s = spec(metric);
  return s.source == MetricSource::registry && s.exported_by(identity_.kind);
}

const MetricSpec& ProcessMetrics::checked(Metric metric, MetricType type,
                                          const Labels& labels) const {
  const MetricSpec& s = spec(metric);
  if (s.type != type) {
    throw std::logic_error(s.name + " is a " + to_string(s.type) + ", not a " + to_string(type));
  }
  if (!registers(metric)) {
    throw std::logic_error(s.name + " is not exported through the registry of a " + identity_.kind +
                           " process");
  }
  bool same = labels.size() == s.labels.size();
  for (const std::string& name : s.labels) same = same && labels.count(name) == 1;
  if (!same) {
    Labels expected;
    for (const std::string& name : s.labels) expected[name] = "";
    throw std::logic_error(s.name + " takes labels " + label_names(expected) + ", got " +
                           label_names(labels));
  }
  return s;
}

prometheus::Counter& ProcessMetrics::counter(Metric metric, const Labels& labels) {
  checked(metric, MetricType::counter, labels);
  return counters_[static_cast<std::size_t>(metric)]->Add(labels);
}

prometheus::Gauge& ProcessMetrics::gauge(Metric metric, const Labels& labels) {
  checked(metric, MetricType::gauge, labels);
  return gauges_[static_cast<std::size_t>(metric)]->Add(labels);
}

prometheus::Histogram& ProcessMetrics::histogram(Metric metric, const Labels& labels) {
  const MetricSpec& s = checked(metric, MetricType::histogram, labels);
  return histograms_[static_cast<std::size_t>(metric)]->Add(labels, s.buckets);
}

std::vector<std::weak_ptr<prometheus::Collectable>> ProcessMetrics::collectables() const {
  return {registry_, process_collector_};
}

std::vector<prometheus::MetricFamily> ProcessMetrics::collect() const {
  std::vector<prometheus::MetricFamily> families = registry_->Collect();
  std::vector<prometheus::MetricFamily> process = process_collector_->Collect();
  families.insert(families.end(), process.begin(), process.end());
  return families;
}

std::string ProcessMetrics::text() const {
  return prometheus::TextSerializer().Serialize(collect());
}

}  // namespace tagflow::monitoring
