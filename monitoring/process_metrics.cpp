#include "monitoring/process_metrics.hpp"

#include <stdexcept>

#include <prometheus/text_serializer.h>

#include "tagflow/build_info.hpp"

namespace tagflow::monitoring {
namespace {

std::string label_names(const Labels& labels) {
  std::string out;
  for (const auto& [name, value] : labels) out += (out.empty() ? "" : ", ") + name;
  return "{" + out + "}";
}

}  // namespace

Labels constant_labels(const ProcessIdentity& identity) {
  return {{"node", identity.node}, {"kind", identity.kind}, {"mode", identity.mode}};
}

ProcessMetrics::ProcessMetrics(ProcessIdentity identity, const std::vector<MetricSpec>& own)
    : identity_(std::move(identity)),
      registry_(
          std::make_shared<prometheus::Registry>(prometheus::Registry::InsertBehavior::Throw)) {
  if (identity_.node.empty()) throw std::invalid_argument("ProcessMetrics: empty node name");
  const Labels constants = constant_labels(identity_);
  process_collector_ = std::make_shared<ProcessCollector>(constants);
  for (const MetricSpec& s : catalogue()) {
    if (s.source == MetricSource::registry && s.exported_by(identity_.kind)) add_family(s);
  }
  for (const MetricSpec& s : own) {
    if (specs_.count(s.name) == 0) add_family(s);
  }
  gauge(Metric::build_info, {{"version", build_info::kVersion}}).Set(1.0);
}

void ProcessMetrics::add_family(const MetricSpec& s) {
  const Labels constants = constant_labels(identity_);
  specs_.emplace(s.name, s);
  switch (s.type) {
    case MetricType::counter: {
      auto& family =
          prometheus::BuildCounter().Name(s.name).Help(s.help).Labels(constants).Register(
              *registry_);
      counters_[s.name] = &family;
      if (s.labels.empty()) family.Add({});
      break;
    }
    case MetricType::gauge: {
      auto& family =
          prometheus::BuildGauge().Name(s.name).Help(s.help).Labels(constants).Register(*registry_);
      gauges_[s.name] = &family;
      if (s.labels.empty()) family.Add({});
      break;
    }
    case MetricType::histogram: {
      auto& family =
          prometheus::BuildHistogram().Name(s.name).Help(s.help).Labels(constants).Register(
              *registry_);
      histograms_[s.name] = &family;
      if (s.labels.empty()) family.Add({}, s.buckets);
      break;
    }
  }
}

bool ProcessMetrics::registers(Metric metric) const { return registers(spec(metric).name); }

bool ProcessMetrics::registers(const std::string& family) const {
  return specs_.count(family) != 0;
}

const MetricSpec& ProcessMetrics::checked(const std::string& family, MetricType type,
                                          const Labels& labels) const {
  const auto it = specs_.find(family);
  if (it == specs_.end()) {
    throw std::logic_error(family + " is not exported through the registry of a " + identity_.kind +
                           " process");
  }
  const MetricSpec& s = it->second;
  if (s.type != type) {
    throw std::logic_error(s.name + " is a " + to_string(s.type) + ", not a " + to_string(type));
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
  return counter(spec(metric).name, labels);
}

prometheus::Gauge& ProcessMetrics::gauge(Metric metric, const Labels& labels) {
  return gauge(spec(metric).name, labels);
}

prometheus::Histogram& ProcessMetrics::histogram(Metric metric, const Labels& labels) {
  return histogram(spec(metric).name, labels);
}

prometheus::Counter& ProcessMetrics::counter(const std::string& family, const Labels& labels) {
  checked(family, MetricType::counter, labels);
  return counters_.at(family)->Add(labels);
}

prometheus::Gauge& ProcessMetrics::gauge(const std::string& family, const Labels& labels) {
  checked(family, MetricType::gauge, labels);
  return gauges_.at(family)->Add(labels);
}

prometheus::Histogram& ProcessMetrics::histogram(const std::string& family, const Labels& labels) {
  const MetricSpec& s = checked(family, MetricType::histogram, labels);
  return histograms_.at(family)->Add(labels, s.buckets);
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
