// Tests of monitoring/metric_catalogue.hpp: the names follow Prometheus conventions and the
// catalogue is consistent with itself.
#include "monitoring/metric_catalogue.hpp"

#include <cctype>
#include <set>

#include <gtest/gtest.h>

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
}

TEST(MetricCatalogue, ApplicationFamiliesArePrefixedAndProcessFamiliesAreStandard) {
  for (const MetricSpec& s : catalogue()) {
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
  for (const MetricSpec& s : catalogue()) {
    EXPECT_EQ(ends_with(s.name, "_total"), s.type == MetricType::counter) << s.name;
  }
}

TEST(MetricCatalogue, UnitsAreBaseUnitsNamedBeforeTheTotalSuffix) {
  for (const MetricSpec& s : catalogue()) {
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
  for (Metric m : {Metric::learner_update_duration, Metric::inference_request_duration,
                   Metric::coordinator_grant_latency}) {
    EXPECT_EQ(spec(m).type, MetricType::histogram) << spec(m).name;
    EXPECT_EQ(spec(m).unit, "seconds") << spec(m).name;
  }
  for (const MetricSpec& s : catalogue()) {
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
  for (const MetricSpec& s : catalogue()) {
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
  EXPECT_TRUE(spec(Metric::env_steps).exported_by("sampler"));
  EXPECT_FALSE(spec(Metric::env_steps).exported_by("learner"));
  EXPECT_FALSE(spec(Metric::coordinator_tag_advances).exported_by("sampler"));
}

TEST(MetricCatalogue, FindsFamiliesByNameIncludingHistogramSeries) {
  EXPECT_EQ(find_metric("tagflow_env_steps_total"), Metric::env_steps);
  EXPECT_EQ(find_metric("tagflow_inference_request_duration_seconds_bucket"),
            Metric::inference_request_duration);
  EXPECT_EQ(find_metric("tagflow_inference_batch_size_count"), Metric::inference_batch_size);
  EXPECT_EQ(find_metric("process_cpu_seconds_total"), Metric::process_cpu_seconds);
  EXPECT_EQ(find_metric("up"), Metric::up);
  EXPECT_FALSE(find_metric("tagflow_env_steps_total_bucket").has_value());
  EXPECT_FALSE(find_metric("tagflow_env_steps").has_value());
}

TEST(MetricCatalogue, MarkdownTableHasOneRowPerFamily) {
  const std::string table = catalogue_markdown();
  std::size_t rows = 0;
  for (std::size_t at = table.find("\n| `"); at != std::string::npos;
       at = table.find("\n| `", at + 1)) {
    ++rows;
  }
  EXPECT_EQ(rows, kMetricCount);
  EXPECT_NE(table.find("`tagflow_coordinator_grant_latency_seconds` | histogram | seconds"),
            std::string::npos);
}

}  // namespace
}  // namespace tagflow::monitoring
