#include "cli/launch/metrics_probe.hpp"

#include "monitoring/http_get.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>

namespace tagflow::cli {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t'; }

/// Calls `on_line` with each line of `text` (without its newline).
template <class OnLine>
void for_each_line(const std::string& text, OnLine on_line) {
  std::size_t line_start = 0;
  while (line_start < text.size()) {
    std::size_t line_end = text.find('\n', line_start);
    if (line_end == std::string::npos) line_end = text.size();
    on_line(text.substr(line_start, line_end - line_start));
    line_start = line_end + 1;
  }
}

/// The sample value that starts at or after `i` (after the name and labels), or nullopt.
std::optional<double> sample_value(const std::string& line, std::size_t i) {
  while (i < line.size() && is_space(line[i])) ++i;
  std::size_t value_end = i;
  while (value_end < line.size() && !is_space(line[value_end])) ++value_end;
  const std::string token = line.substr(i, value_end - i);
  if (token.empty()) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(token.c_str(), &end);
  if (end != token.c_str() + token.size()) return std::nullopt;
  return value;
}

}  // namespace

std::map<std::string, double> parse_exposition(const std::string& text,
                                               const std::vector<std::string>& names) {
  std::map<std::string, double> sums;
  for_each_line(text, [&](const std::string& line) {
    std::size_t i = 0;
    while (i < line.size() && is_space(line[i])) ++i;
    if (i == line.size() || line[i] == '#') return;
    const std::size_t name_start = i;
    while (i < line.size() && line[i] != '{' && !is_space(line[i])) ++i;
    const std::string name = line.substr(name_start, i - name_start);
    if (std::find(names.begin(), names.end(), name) == names.end()) return;
    if (i < line.size() && line[i] == '{') {  // skip the labels; values may hold '}' or '\"'
      bool quoted = false;
      for (++i; i < line.size(); ++i) {
        if (quoted && line[i] == '\\') {
          ++i;
        } else if (line[i] == '"') {
          quoted = !quoted;
        } else if (!quoted && line[i] == '}') {
          break;
        }
      }
      if (i == line.size()) return;  // unterminated label set
      ++i;
    }
    if (const auto value = sample_value(line, i)) sums[name] += *value;
  });
  return sums;
}

std::map<std::string, double> parse_label_values(const std::string& text, const std::string& name,
                                                 const std::string& label) {
  std::map<std::string, double> sums;
  for_each_line(text, [&](const std::string& line) {
    if (line.compare(0, name.size() + 1, name + "{") != 0) return;
    // label="value" pairs up to the closing brace; values may hold ',', '}' and escapes.
    std::size_t i = name.size() + 1;
    std::optional<std::string> found;
    for (;;) {
      while (i < line.size() && (line[i] == ',' || is_space(line[i]))) ++i;
      if (i >= line.size()) return;  // unterminated label set
      if (line[i] == '}') break;
      const std::size_t equals = line.find('=', i);
      if (equals == std::string::npos || equals + 1 >= line.size() || line[equals + 1] != '"') {
        return;
      }
      const std::string key = line.substr(i, equals - i);
      std::string value;
      bool terminated = false;
      for (i = equals + 2; i < line.size() && !terminated; ++i) {
        if (line[i] == '\\' && i + 1 < line.size()) {
          ++i;
          value += line[i] == 'n' ? '\n' : line[i];
        } else if (line[i] == '"') {
          terminated = true;
        } else {
          value += line[i];
        }
      }
      if (!terminated) return;
      if (key == label) found = value;
    }
    if (!found) return;
    if (const auto value = sample_value(line, i + 1)) sums[*found] += *value;
  });
  return sums;
}

ProbeResult probe_metrics(const std::string& host, std::uint16_t port,
                          const std::vector<std::string>& names,
                          std::chrono::milliseconds timeout) {
  ProbeResult result;
  const std::optional<std::string> body = http_get(host, port, "/metrics", timeout);
  if (!body) return result;
  result.answered = true;
  result.values = parse_exposition(*body, names);
  result.members = parse_label_values(*body, kActorMembersFamily, "peer");
  return result;
}

}  // namespace tagflow::cli
