// Test helpers for tests that run an edited copy of a shipped cluster file (configs/*.yaml) and
// compare run summaries. Header-only, like run_command.hpp.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "common/loopback_ports.hpp"
#include "tests/support/launched_processes.hpp"

namespace tagflow::testing {

/// Replaces the first `from` in `text`, the text of the shipped file `file`; a test failure
/// (naming the file) when the file no longer contains it, so a changed demo fails loudly
/// instead of silently testing something else.
inline void replace_once(std::string& text, const std::string& from, const std::string& to,
                         const std::string& file) {
  const std::size_t at = text.find(from);
  if (at == std::string::npos) {
    ADD_FAILURE() << file << " no longer contains: " << from;
    return;
  }
  text.replace(at, from.size(), to);
}

/// Ports each port of a shipped file gets in on_free_ports(): room for a node group's replicas
/// (replica i listens on its data, metrics and gateway ports + i).
inline constexpr int kPortsPerShippedPort = 4;

/// `text`, the text of the shipped file `file`, with every port it names (the values of `port:`,
/// `metrics_port:`, `data_port:` and `gateway_port:`) moved to a range of free loopback ports
/// claimed for this process (common/loopback_ports.hpp): the n-th distinct port of the file to
/// base + n * kPortsPerShippedPort. Tests that run a shipped file this way can run beside each
/// other and beside a user's cluster on the file's own ports. A test failure when the file names
/// no port or no range is free.
inline std::string on_free_ports(const std::string& text, const std::string& file) {
  static const std::regex port_value(R"(\b((?:metrics_|data_|gateway_)?port): (\d+))");
  std::map<int, int> moved;  // the file's port -> the test's
  std::vector<int> order;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), port_value);
       it != std::sregex_iterator(); ++it) {
    const int port = std::stoi((*it)[2].str());
    if (moved.emplace(port, 0).second) order.push_back(port);
  }
  const int count = static_cast<int>(order.size()) * kPortsPerShippedPort;
  if (order.empty() || count > kPortBlock) {
    ADD_FAILURE() << file << " names " << order.size() << " ports; on_free_ports moves 1 to "
                  << kPortBlock / kPortsPerShippedPort;
    return text;
  }
  const int base = free_loopback_port_range(count);
  if (base < 0) {
    ADD_FAILURE() << "no " << count << " free loopback ports for " << file;
    return text;
  }
  for (std::size_t i = 0; i < order.size(); ++i) {
    moved[order[i]] = base + static_cast<int>(i) * kPortsPerShippedPort;
  }
  std::string result;
  auto last = text.cbegin();
  for (auto it = std::sregex_iterator(text.begin(), text.end(), port_value);
       it != std::sregex_iterator(); ++it) {
    result.append(last, (*it)[2].first);
    result += std::to_string(moved.at(std::stoi((*it)[2].str())));
    last = (*it)[2].second;
  }
  result.append(last, text.cend());
  return result;
}

/// The digest of the run summary JSON at `summary`, or "(no summary at PATH)".
inline std::string summary_digest(const std::filesystem::path& summary) {
  const nlohmann::json json = nlohmann::json::parse(read_text_file(summary), nullptr, false);
  if (json.is_discarded() || !json.contains("digest")) {
    return "(no summary at " + summary.string() + ")";
  }
  return json.at("digest").get<std::string>();
}

}  // namespace tagflow::testing
