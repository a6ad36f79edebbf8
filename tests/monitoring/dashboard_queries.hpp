// Test helper: the PromQL queries of the Grafana dashboard (monitoring/grafana/), and the metric
// names each one uses.
#pragma once

#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tagflow::testing {

struct PanelQuery {
  std::string panel;  // title
  std::string ref_id;
  std::string expr;
};

inline std::string dashboard_path() {
  return std::string(TAGFLOW_SOURCE_DIR) + "/monitoring/grafana/dashboards/tagflow.json";
}

inline nlohmann::json load_dashboard() {
  std::ifstream in(dashboard_path());
  return nlohmann::json::parse(in);
}

/// Every panel target's expression, rows' nested panels included.
inline std::vector<PanelQuery> dashboard_queries(const nlohmann::json& dashboard) {
  std::vector<PanelQuery> queries;
  std::vector<nlohmann::json> panels(dashboard.at("panels").begin(), dashboard.at("panels").end());
  for (std::size_t i = 0; i < panels.size(); ++i) {
    const nlohmann::json& panel = panels[i];
    if (panel.contains("panels")) {
      for (const auto& inner : panel.at("panels")) panels.push_back(inner);
    }
    if (!panel.contains("targets")) continue;
    for (const auto& target : panel.at("targets")) {
      queries.push_back({panel.at("title").get<std::string>(),
                         target.at("refId").get<std::string>(),
                         target.at("expr").get<std::string>()});
    }
  }
  return queries;
}

/// The query as Grafana sends it: dashboard variables and interval macros replaced.
inline std::string substitute_variables(std::string expr, const std::string& cluster_regex,
                                        const std::string& rate_interval) {
  const std::pair<std::string, std::string> replacements[] = {{"$__rate_interval", rate_interval},
                                                              {"$__interval", rate_interval},
                                                              {"$__range", "5m"},
                                                              {"$cluster", cluster_regex}};
  for (const auto& [from, to] : replacements) {
    for (auto at = expr.find(from); at != std::string::npos; at = expr.find(from, at + to.size())) {
      expr.replace(at, from.size(), to);
    }
  }
  return expr;
}

/// Metric names a PromQL expression selects: identifiers outside strings, label matchers, range
/// brackets and by/without/on/ignoring lists that are neither functions nor keywords.
inline std::set<std::string> metric_names_in(std::string expr) {
  for (const char* pattern : {R"("(?:[^"\\]|\\.)*")", R"(\{[^}]*\})", R"(\[[^\]]*\])",
                              R"(\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\))"}) {
    expr = std::regex_replace(expr, std::regex(pattern), " ");
  }
  static const std::set<std::string> kKeywords = {"by",     "without",    "on",         "ignoring",
                                                  "bool",   "and",        "or",         "unless",
                                                  "offset", "group_left", "group_right"};
  std::set<std::string> names;
  const std::regex identifier(R"([a-zA-Z_:][a-zA-Z0-9_:]*(\s*\()?)");
  for (std::sregex_iterator it(expr.begin(), expr.end(), identifier), end; it != end; ++it) {
    const std::string token = it->str();
    if (token.find('(') != std::string::npos) continue;  // a function or aggregation
    if (kKeywords.count(token) == 0) names.insert(token);
  }
  return names;
}

}  // namespace tagflow::testing
