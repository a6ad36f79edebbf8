#include "nodes/cluster/yaml_reader.hpp"

#include <set>

namespace tagflow::cluster {

int line_of(const YAML::Node& node) { return node.Mark().line + 1; }

YamlReader::YamlReader(YAML::Node node, std::string file, std::string path)
    : node_(std::move(node)), file_(std::move(file)), path_(std::move(path)) {
  if (!node_.IsMap()) {
    throw ConfigError(file_, cluster::line_of(node_), path_.empty() ? "(top level)" : path_,
                      "expected a map of keys");
  }
}

std::string YamlReader::path_of(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

int YamlReader::line_of(const std::string& key) const {
  for (const auto& entry : node_) {
    if (entry.first.Scalar() == key) return cluster::line_of(entry.first);
  }
  return cluster::line_of(node_);
}

void YamlReader::fail(const std::string& key, const std::string& message) const {
  throw ConfigError(file_, line_of(key), path_of(key), message);
}

void YamlReader::only_keys(std::initializer_list<const char*> known) const {
  const std::set<std::string> allowed(known.begin(), known.end());
  for (const auto& entry : node_) {
    const std::string key = entry.first.Scalar();
    if (allowed.count(key) == 0) {
      std::string list;
      for (const std::string& k : allowed) list += (list.empty() ? "" : ", ") + k;
      fail(key, "unknown key (known here: " + list + ")");
    }
  }
}

bool YamlReader::has(const std::string& key) const { return static_cast<bool>(node_[key]); }

std::string YamlReader::string(const std::string& key) const {
  const YAML::Node value = node_[key];
  if (!value) fail(key, "missing (required)");
  if (!value.IsScalar()) fail(key, "expected a string");
  return value.Scalar();
}

std::string YamlReader::string_or(const std::string& key, const std::string& fallback) const {
  return has(key) ? string(key) : fallback;
}

long YamlReader::integer(const std::string& key, long min, long max) const {
  const YAML::Node value = node_[key];
  if (!value) fail(key, "missing (required)");
  long result = 0;
  if (!value.IsScalar() || !YAML::convert<long>::decode(value, result)) {
    fail(key, "expected an integer, got '" + (value.IsScalar() ? value.Scalar() : "a map or list") +
                  "'");
  }
  if (result < min || result > max) {
    fail(key, std::to_string(result) + " is outside " + std::to_string(min) + ".." +
                  std::to_string(max));
  }
  return result;
}

long YamlReader::integer_or(const std::string& key, long fallback, long min, long max) const {
  return has(key) ? integer(key, min, max) : fallback;
}

double YamlReader::number(const std::string& key) const {
  const YAML::Node value = node_[key];
  if (!value) fail(key, "missing (required)");
  double result = 0;
  if (!value.IsScalar() || !YAML::convert<double>::decode(value, result)) {
    fail(key, "expected a number");
  }
  return result;
}

bool YamlReader::boolean_or(const std::string& key, bool fallback) const {
  const YAML::Node value = node_[key];
  if (!value) return fallback;
  bool result = false;
  if (!value.IsScalar() || !YAML::convert<bool>::decode(value, result)) {
    fail(key, "expected true or false");
  }
  return result;
}

std::chrono::nanoseconds YamlReader::duration(const std::string& key) const {
  const std::string text = string(key);
  const auto parsed = parse_duration(text);
  if (!parsed) fail(key, "expected a duration such as 0, 250ms, 2s or 10us, got '" + text + "'");
  return *parsed;
}

std::uint16_t YamlReader::port_or(const std::string& key, std::uint16_t fallback) const {
  return static_cast<std::uint16_t>(integer_or(key, fallback, 1, 65535));
}

YamlReader YamlReader::map(const std::string& key) const {
  const YAML::Node value = node_[key];
  if (!value) fail(key, "missing (required)");
  if (!value.IsMap()) fail(key, "expected a map of keys");
  return YamlReader(value, file_, path_of(key));
}

}  // namespace tagflow::cluster
