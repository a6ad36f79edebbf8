// Test helper: the PromQL queries of the Grafana dashboard (monitoring/grafana/), and the metric
// names each one uses.
#pragma once

#include <cctype>
#include <fstream>
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
/// (A small scanner rather than <regex>, which trips GCC 12's -Wmaybe-uninitialized under ASan.)
inline std::set<std::string> metric_names_in(const std::string& expr) {
  static const std::set<std::string> kKeywords = {"by",     "without",    "on",         "ignoring",
                                                  "bool",   "and",        "or",         "unless",
                                                  "offset", "group_left", "group_right"};
  static const std::set<std::string> kLabelLists = {"by",       "without",    "on",
                                                    "ignoring", "group_left", "group_right"};
  auto is_start = [](char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':';
  };
  auto is_part = [&](char c) { return is_start(c) || std::isdigit(static_cast<unsigned char>(c)); };
  auto skip_to = [&](std::size_t at, char close) {
    const std::size_t end = expr.find(close, at + 1);
    return end == std::string::npos ? expr.size() : end + 1;
  };
  std::set<std::string> names;
  std::size_t i = 0;
  while (i < expr.size()) {
    const char c = expr[i];
    if (c == '"') {
      ++i;
      while (i < expr.size() && expr[i] != '"') i += expr[i] == '\\' ? 2 : 1;
      ++i;
    } else if (c == '{') {
      i = skip_to(i, '}');
    } else if (c == '[') {
      i = skip_to(i, ']');
    } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      while (i < expr.size() &&
             (is_part(expr[i]) || expr[i] == '.' ||
              ((expr[i] == '-' || expr[i] == '+') && (expr[i - 1] == 'e' || expr[i - 1] == 'E')))) {
        ++i;
      }
    } else if (is_start(c)) {
      const std::size_t begin = i;
      while (i < expr.size() && is_part(expr[i])) ++i;
      const std::string token = expr.substr(begin, i - begin);
      std::size_t next = i;
      while (next < expr.size() && expr[next] == ' ') ++next;
      // `sum by (x) (...)`: an aggregation whose grouping comes before its argument.
      const bool grouped_aggregation = expr.compare(next, 3, "by ") == 0 ||
                                       expr.compare(next, 3, "by(") == 0 ||
                                       expr.compare(next, 7, "without") == 0;
      const bool call = grouped_aggregation || (next < expr.size() && expr[next] == '(');
      if (call && kLabelLists.count(token) == 1) {
        i = skip_to(next, ')');
      } else if (!call && kKeywords.count(token) == 0) {
        names.insert(token);
      }
    } else {
      ++i;
    }
  }
  return names;
}

}  // namespace tagflow::testing
