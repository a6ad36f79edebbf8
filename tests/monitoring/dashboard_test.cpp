// Tests of monitoring/grafana/: the dashboard queries only catalogue families through the
// provisioned datasource, and the provisioning files point at it. (That Prometheus accepts every
// query is checked against a real server in prometheus_scrape_test.cpp.)
#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "monitoring/metric_catalogue.hpp"
#include "nodes/kind/registry.hpp"
#include "tests/monitoring/dashboard_queries.hpp"

namespace tagflow::monitoring {
namespace {

using tagflow::testing::dashboard_queries;
using tagflow::testing::load_dashboard;
using tagflow::testing::metric_names_in;

/// The family of series `name` in the full catalogue (monitoring's and the node kinds'), the
/// `_bucket`, `_sum` and `_count` series of a histogram included; nullopt when none has it.
std::optional<std::string> family_of(const std::string& name) {
  static const std::vector<MetricSpec> all = nodes::full_metric_catalogue();
  for (const MetricSpec& s : all) {
    if (s.name == name) return s.name;
    if (s.type != MetricType::histogram) continue;
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      if (name == s.name + suffix) return s.name;
    }
  }
  return std::nullopt;
}

std::string read_file(const std::string& relative) {
  std::ifstream in(std::string(TAGFLOW_SOURCE_DIR) + "/" + relative);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

TEST(DashboardQueries, FindsMetricNamesButNotFunctionsLabelsOrKeywords) {
  EXPECT_EQ(metric_names_in(
                R"(histogram_quantile(0.99, sum by (le, node) (rate(a_bucket{x=~"b c"}[1m]))))"),
            (std::set<std::string>{"a_bucket"}));
  EXPECT_EQ(metric_names_in(R"(sum(rate(a_total[5m])) / sum(rate(b_total[5m])) or vector(0))"),
            (std::set<std::string>{"a_total", "b_total"}));
  EXPECT_EQ(metric_names_in("sum by (kind) (1 - up{c=\"x\"})"), (std::set<std::string>{"up"}));
  EXPECT_EQ(metric_names_in("histogram_quantile(0.99, x_bucket) > 1e-5 and on(node) y:rate5m"),
            (std::set<std::string>{"x_bucket", "y:rate5m"}));
  EXPECT_EQ(metric_names_in(R"(count(m{a="}{[\"]"}) without(b))"), (std::set<std::string>{"m"}));
}

TEST(Dashboard, EveryPanelQueryUsesOnlyCatalogueFamilies) {
  const std::vector<tagflow::testing::PanelQuery> queries = dashboard_queries(load_dashboard());
  ASSERT_GE(queries.size(), 20U);
  std::set<std::string> used;
  for (const auto& query : queries) {
    const std::set<std::string> names = metric_names_in(query.expr);
    EXPECT_FALSE(names.empty()) << query.panel << ": " << query.expr;
    for (const std::string& name : names) {
      const std::optional<std::string> metric = family_of(name);
      EXPECT_TRUE(metric.has_value()) << query.panel << ": " << name << " is not in the catalogue";
      if (metric) used.insert(*metric);
    }
    EXPECT_NE(query.expr.find("cluster=~\"$cluster\""), std::string::npos)
        << query.panel << ": every selector filters on the cluster variable";
  }
  // Each subsystem of the issue has a panel.
  for (const char* family :
       {"tagflow_env_steps_total", "tagflow_transport_messages_sent_total",
        "tagflow_replay_transitions_inserted_total", "tagflow_replay_transitions",
        "tagflow_learner_updates_total", "tagflow_learner_loss", "tagflow_weights_version",
        "tagflow_learner_policy_lag_versions", "tagflow_inference_request_duration_seconds",
        "tagflow_inference_batch_size", "tagflow_coordinator_tag_advances_total",
        "tagflow_coordinator_grant_latency_seconds", "tagflow_coordinator_heartbeats_total",
        "tagflow_transport_invalid_messages_total", "process_cpu_seconds_total",
        "process_resident_memory_bytes", "up"}) {
    EXPECT_EQ(used.count(family), 1U) << family << " has no panel";
  }
}

TEST(Dashboard, PanelsHaveUniqueIdsAPlaceAndTheDatasourceVariable) {
  const nlohmann::json dashboard = load_dashboard();
  EXPECT_EQ(dashboard.at("uid"), "tagflow-cluster");
  std::set<int> ids;
  for (const auto& panel : dashboard.at("panels")) {
    EXPECT_TRUE(ids.insert(panel.at("id").get<int>()).second) << panel.at("title");
    const auto& grid = panel.at("gridPos");
    EXPECT_LE(grid.at("x").get<int>() + grid.at("w").get<int>(), 24) << panel.at("title");
    if (panel.at("type") == "row") continue;
    EXPECT_EQ(panel.at("datasource").at("uid"), "${datasource}") << panel.at("title");
    for (const auto& target : panel.at("targets")) {
      EXPECT_EQ(target.at("datasource").at("uid"), "${datasource}") << panel.at("title");
    }
  }
  const auto& variables = dashboard.at("templating").at("list");
  ASSERT_EQ(variables.size(), 2U);
  EXPECT_EQ(variables[0].at("name"), "datasource");
  EXPECT_EQ(variables[0].at("current").at("value"), "tagflow-prometheus");
  EXPECT_EQ(variables[1].at("name"), "cluster");
  EXPECT_TRUE(find_metric("tagflow_build_info").has_value());
}

TEST(GrafanaProvisioning, DatasourceUidMatchesTheDashboardAndTheProviderNamesAFolder) {
  const std::string datasource =
      read_file("monitoring/grafana/provisioning/datasources/tagflow.yaml");
  EXPECT_NE(datasource.find("uid: tagflow-prometheus\n"), std::string::npos);
  EXPECT_NE(datasource.find("type: prometheus\n"), std::string::npos);
  const std::string dashboards =
      read_file("monitoring/grafana/provisioning/dashboards/tagflow.yaml");
  EXPECT_NE(dashboards.find("type: file\n"), std::string::npos);
  EXPECT_NE(dashboards.find("path: "), std::string::npos);
}

TEST(MonitoringReadme, DocumentsEveryCatalogueFamily) {
  const std::string readme = read_file("monitoring/README.md");
  for (const MetricSpec& s : nodes::full_metric_catalogue()) {
    EXPECT_NE(readme.find("`" + s.name + "`"), std::string::npos) << s.name;
  }
}

}  // namespace
}  // namespace tagflow::monitoring
