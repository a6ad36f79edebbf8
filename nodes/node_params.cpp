#include "nodes/node_params.hpp"

#include <array>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#include "nodes/cluster/cluster_config.hpp"

namespace tagflow::nodes {
namespace {

/// Whether `text` is written as a decimal number (configs/README.md: node params take decimal
/// integers only): no blanks around it, which strtoll and strtod would skip, and no hexadecimal,
/// infinity or NaN spelling, which strtod would read.
bool decimal_text(const std::string& text) {
  return !text.empty() && text.find_first_not_of("+-.0123456789eE") == std::string::npos;
}

/// A bound as a person writes it: 1e-09, 0.5, 1000000.
std::string number_text(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

}  // namespace

NodeParams::NodeParams(std::string node, std::map<std::string, std::string> values,
                       std::map<std::string, int> lines,
                       std::map<std::string, std::string> collections)
    : node_(std::move(node)),
      values_(std::move(values)),
      lines_(std::move(lines)),
      collections_(std::move(collections)) {}

NodeParams NodeParams::of(const cluster::NodeConfig& node) {
  return NodeParams(node.name, node.params, node.param_lines, node.param_collections);
}

void NodeParams::check_known(const std::vector<std::string>& known) const {
  for (const auto& [name, value] : values_) {
    bool found = false;
    for (const auto& k : known) found = found || k == name;
    if (!found) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      for (const auto& k : elsewhere_) list += (list.empty() ? "" : ", ") + k;
      fail(name, "unknown param (known: " + list + ")");
    }
  }
}

void NodeParams::read_elsewhere(const std::string& name) {
  values_.erase(name);
  elsewhere_.push_back(name);
}

void NodeParams::fail(const std::string& name, const std::string& message) const {
  std::string where = "node '" + node_ + "': param '" + name + "'";
  const auto line = lines_.find(name);
  if (line != lines_.end()) where += " (line " + std::to_string(line->second) + ")";
  throw ParamError(where + ": " + message, name, line != lines_.end() ? line->second : 0);
}

std::string NodeParams::get_string(const std::string& name, const std::string& fallback) const {
  const auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  if (const auto shape = collections_.find(name); shape != collections_.end()) {
    fail(name, "expected a string, got " + shape->second + " (" + it->second + ")");
  }
  return it->second;
}

std::int64_t NodeParams::get_int(const std::string& name, std::int64_t fallback,
                                 std::int64_t minimum) const {
  const auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(it->second.c_str(), &end, 10);
  if (!decimal_text(it->second) || *end != '\0')
    fail(name, "expected an integer, got '" + it->second + "'");
  if (errno == ERANGE) fail(name, "'" + it->second + "' is too large");
  if (value < minimum) fail(name, "must be at least " + std::to_string(minimum));
  return value;
}

double NodeParams::get_double(const std::string& name, double fallback, double minimum,
                              double maximum) const {
  const auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  char* end = nullptr;
  const double value = std::strtod(it->second.c_str(), &end);
  if (decimal_text(it->second) && *end == '\0' && std::isinf(value)) {
    fail(name, "'" + it->second + "' is beyond a number's range (about ±1.8e308)");
  }
  if (!decimal_text(it->second) || *end != '\0' || !std::isfinite(value)) {
    fail(name, "expected a number, got '" + it->second + "'");
  }
  if (value < minimum || value > maximum) {
    fail(name, "must be in [" + number_text(minimum) + ", " + number_text(maximum) + "], got " +
                   it->second);
  }
  return value;
}

bool NodeParams::get_bool(const std::string& name, bool fallback) const {
  const auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  // The words the cluster file's own booleans take (YAML's): true/false, yes/no, on/off, y/n, in
  // lower case, with a capital first letter or in capitals.
  static constexpr std::array<std::pair<const char*, bool>, 8> kWords = {{{"true", true},
                                                                          {"yes", true},
                                                                          {"on", true},
                                                                          {"y", true},
                                                                          {"false", false},
                                                                          {"no", false},
                                                                          {"off", false},
                                                                          {"n", false}}};
  for (const auto& [word, value] : kWords) {
    std::string capital = word;
    capital[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(capital[0])));
    std::string capitals = word;
    for (char& c : capitals) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (it->second == word || it->second == capital || it->second == capitals) return value;
  }
  fail(name, "expected true or false (yes/no and on/off are read as true/false too), got '" +
                 it->second + "'");
}

std::vector<int> NodeParams::get_sizes(const std::string& name,
                                       const std::vector<int>& fallback) const {
  const auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  // "64,64" or a YAML list, [64, 64]: sizes split by commas, blanks around each, no empty entry.
  const auto bad = [&] {
    fail(name, "expected sizes such as \"64,64\" or [64, 64], got '" + it->second + "'");
  };
  const auto trimmed = [](const std::string& text) {
    const std::size_t first = text.find_first_not_of(" \t");
    if (first == std::string::npos) return std::string();
    return text.substr(first, text.find_last_not_of(" \t") - first + 1);
  };
  std::string text = trimmed(it->second);
  if (!text.empty() && text.front() == '[') {
    if (text.size() < 2 || text.back() != ']') bad();
    text = text.substr(1, text.size() - 2);
  }
  std::vector<int> sizes;
  for (std::size_t start = 0;;) {
    const std::size_t comma = text.find(',', start);
    const std::string entry =
        trimmed(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (entry.empty() || entry.find_first_not_of("0123456789") != std::string::npos) bad();
    const long value = entry.size() > 9 ? 0 : std::strtol(entry.c_str(), nullptr, 10);
    if (value <= 0 || value > 1 << 20) fail(name, "sizes must be in [1, 2^20]");
    sizes.push_back(static_cast<int>(value));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return sizes;
}

std::chrono::nanoseconds NodeParams::get_duration(const std::string& name,
                                                  std::chrono::nanoseconds fallback) const {
  const auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  const auto value = cluster::parse_duration(it->second);
  if (!value) fail(name, "expected a duration such as 1ms, got '" + it->second + "'");
  return *value;
}

}  // namespace tagflow::nodes
