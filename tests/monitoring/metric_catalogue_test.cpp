// Tests of monitoring/metric_catalogue.hpp: the names follow Prometheus conventions and the
// catalogue is consistent with itself — monitoring's own families and, through the registry
// (nodes/kind/registry.hpp), every node kind's.
#include "monitoring/metric_catalogue.hpp"

#include <cctype>
#include <set>

#include <gtest/gtest.h>

#include "nodes/kind/registry.hpp"
#include "tests/support/kind_families.hpp"

namespace tagflow::monitoring {
namespace {

/// [a-zA-Z_:][a-zA-Z0-9_:]*, the Prometheus metric name syntax.
bool valid_metric_name(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != ':') return false;
  }
  return true;
}

/// Every family a process may export: monitoring's and the node kinds'.
const std::vector<MetricSpec>& all() {
  static const std::vector<MetricSpec> specs = nodes::full_metric_catalogue();
  return specs;
}

const MetricSpec& named(const std::string& name) {
  for (const MetricSpec& s : all()) {
    if (s.name == name) return s;
  }
  throw std::invalid_argument("no family " + name);
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

TEST(MetricCatalogue, ListsEveryMetricInEnumOrderWithUniqueNames) {
  ASSERT_EQ(catalogue().size(), kMetricCount);
  std::set<std::string> names;
  for (std::size_t i = 0; i < catalogue().size(); ++i) {
    EXPECT_EQ(static_cast<std::size_t>(catalogue()[i].id), i);
    EXPECT_TRUE(names.insert(catalogue()[i].name).second) << catalogue()[i].name;
    EXPECT_FALSE(catalogue()[i].help.empty()) << catalogue()[i].name;
    EXPECT_FALSE(catalogue()[i].exporters.empty()) << catalogue()[i].name;
  }
  // The node kinds' families: declared with their kinds, no name twice, none of monitoring's.
  for (std::size_t i = kMetricCount; i < all().size(); ++i) {
    EXPECT_EQ(all()[i].id, Metric::node_kind) << all()[i].name;
    EXPECT_TRUE(names.insert(all()[i].name).second) << all()[i].name;
    EXPECT_FALSE(all()[i].help.empty()) << all()[i].name;
    EXPECT_FALSE(all()[i].exporters.empty()) << all()[i].name;
  }
  EXPECT_GT(all().size(), kMetricCount);
}

TEST(MetricCatalogue, ApplicationFamiliesArePrefixedAndProcessFamiliesAreStandard) {
  for (const MetricSpec& s : all()) {
    EXPECT_TRUE(valid_metric_name(s.name)) << s.name;
    switch (s.source) {
      case MetricSource::registry:
        EXPECT_EQ(s.name.rfind("tagflow_", 0), 0U) << s.name;
        break;
      case MetricSource::process_collector:
        EXPECT_EQ(s.name.rfind("process_", 0), 0U) << s.name;
        break;
      case MetricSource::scrape:
        EXPECT_EQ(s.name, "up");
        break;
    }
  }
}

TEST(MetricCatalogue, CountersEndInTotalAndNothingElseDoes) {
  for (const MetricSpec& s : all()) {
    EXPECT_EQ(ends_with(s.name, "_total"), s.type == MetricType::counter) << s.name;
  }
}

TEST(MetricCatalogue, UnitsAreBaseUnitsNamedBeforeTheTotalSuffix) {
  for (const MetricSpec& s : all()) {
    EXPECT_TRUE(s.unit.empty() || s.unit == "seconds" || s.unit == "bytes") << s.name;
    std::string stem = s.name;
    if (ends_with(stem, "_total")) stem.resize(stem.size() - 6);
    if (!s.unit.empty()) {
      EXPECT_TRUE(ends_with(stem, "_" + s.unit)) << s.name;
    }
    for (const char* bad : {"milli", "micro", "nano", "kilo", "mega", "_ms", "_us", "_kb", "_mb"}) {
      EXPECT_EQ(s.name.find(bad), std::string::npos) << s.name;
    }
  }
}

TEST(MetricCatalogue, LatenciesAreHistogramsInSecondsWithAscendingBuckets) {
  for (const char* name :
       {"tagflow_learner_update_duration_seconds", "tagflow_inference_request_duration_seconds",
        "tagflow_coordinator_grant_latency_seconds", "tagflow_gateway_request_duration_seconds"}) {
    EXPECT_EQ(named(name).type, MetricType::histogram) << name;
    EXPECT_EQ(named(name).unit, "seconds") << name;
  }
  for (const MetricSpec& s : all()) {
    EXPECT_EQ(s.buckets.empty(), s.type != MetricType::histogram) << s.name;
    for (std::size_t i = 1; i < s.buckets.size(); ++i) EXPECT_LT(s.buckets[i - 1], s.buckets[i]);
  }
}

TEST(MetricCatalogue, PerPeerFamiliesCarryThePeerLabelAndNoLabelCollidesWithConstants) {
  for (Metric m : {Metric::transport_messages_sent, Metric::transport_messages_received,
                   Metric::transport_sent_bytes, Metric::transport_received_bytes,
                   Metric::transport_invalid_messages, Metric::coordinator_heartbeats}) {
    ASSERT_FALSE(spec(m).labels.empty());
    EXPECT_EQ(spec(m).labels.front(), "peer") << spec(m).name;
  }
  for (const MetricSpec& s : all()) {
    for (const std::string& label : s.labels) {
      for (const std::string& constant : constant_label_names()) EXPECT_NE(label, constant);
      EXPECT_NE(label, "le");
      EXPECT_NE(label.rfind("__", 0), 0U);
    }
  }
}

TEST(MetricCatalogue, EveryProcessKindExportsTransportAndProcessFamilies) {
  for (const char* kind : {"coordinator", "sampler", "replay", "learner", "inference"}) {
    EXPECT_TRUE(spec(Metric::transport_invalid_messages).exported_by(kind));
    EXPECT_TRUE(spec(Metric::process_cpu_seconds).exported_by(kind));
    EXPECT_TRUE(spec(Metric::process_resident_memory).exported_by(kind));
  }
  EXPECT_TRUE(named("tagflow_env_steps_total").exported_by("sampler"));
  EXPECT_TRUE(named("tagflow_env_steps_total").exported_by("multi_agent"));
  EXPECT_FALSE(named("tagflow_env_steps_total").exported_by("learner"));
  EXPECT_FALSE(spec(Metric::coordinator_tag_advances).exported_by("sampler"));
  // A kind added to the registry exports the node families with nothing listed here.
  EXPECT_TRUE(spec(Metric::federation_grants).exported_by("evaluator"));
  EXPECT_FALSE(spec(Metric::federation_grants).exported_by("coordinator"));
}

TEST(MetricCatalogue, FindsFamiliesByNameIncludingHistogramSeries) {
  EXPECT_EQ(find_metric("tagflow_coordinator_tag_advances_total"),
            Metric::coordinator_tag_advances);
  EXPECT_EQ(find_metric("tagflow_coordinator_grant_latency_seconds_bucket"),
            Metric::coordinator_grant_latency);
  EXPECT_EQ(find_metric("tagflow_coordinator_grant_latency_seconds_count"),
            Metric::coordinator_grant_latency);
  // A node kind's family is the kind's, not monitoring's.
  EXPECT_FALSE(find_metric("tagflow_env_steps_total").has_value());
  EXPECT_EQ(find_metric("process_cpu_seconds_total"), Metric::process_cpu_seconds);
  EXPECT_EQ(find_metric("up"), Metric::up);
  EXPECT_FALSE(find_metric("tagflow_coordinator_tag_advances_total_bucket").has_value());
  EXPECT_FALSE(find_metric("tagflow_coordinator_tag_advances").has_value());
}

TEST(MetricCatalogue, MarkdownTableHasOneRowPerFamily) {
  const std::string table = catalogue_markdown(all());
  std::size_t rows = 0;
  for (std::size_t at = table.find("\n| `"); at != std::string::npos;
       at = table.find("\n| `", at + 1)) {
    ++rows;
  }
  EXPECT_EQ(rows, all().size());
  EXPECT_NE(table.find("`tagflow_env_steps_total` | counter |  |  | sampler, multi_agent |"),
            std::string::npos);
  EXPECT_NE(table.find("`tagflow_coordinator_grant_latency_seconds` | histogram | seconds"),
            std::string::npos);
}

}  // namespace
}  // namespace tagflow::monitoring
