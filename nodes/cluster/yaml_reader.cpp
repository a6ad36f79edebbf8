#include "nodes/cluster/yaml_reader.hpp"

#include <algorithm>
#include <set>

#include "common/log_text.hpp"

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

void check_cluster_text(const std::string& text, const std::string& file) {
  if (text.size() > kMaxClusterFileBytes) {
    throw ConfigError(
        file, 0, "(file)",
        "larger than the cluster file limit of " + std::to_string(kMaxClusterFileBytes) + " bytes");
  }
  if (const std::size_t nul = text.find('\0'); nul != std::string::npos) {
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<long>(nul), '\n');
    throw ConfigError(file, static_cast<int>(line), "(file)", "a NUL byte (the file is not text)");
  }
}

namespace {

/// Walks the tree depth first; `path` is the dotted key of `node`.
void check_node(const YAML::Node& node, const std::string& file, const std::string& path,
                std::size_t& visited) {
  // Aliases may repeat a subtree many times over; a real cluster file has a few hundred nodes.
  if (++visited > kMaxClusterFileBytes) {
    throw ConfigError(file, line_of(node), path.empty() ? "(top level)" : path,
                      "too many nodes (aliases repeating a subtree?)");
  }
  if (node.IsScalar() && node.Scalar().find('\0') != std::string::npos) {
    throw ConfigError(file, line_of(node), path.empty() ? "(top level)" : path,
                      "a NUL character in '" + escape_for_log(node.Scalar()) + "'");
  }
  if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size(); ++i) {
      check_node(node[i], file, path + "[" + std::to_string(i) + "]", visited);
    }
  }
  if (!node.IsMap()) return;
  std::set<std::string> keys;
  for (const auto& entry : node) {
    const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : "(a non-scalar key)";
    const std::string key_path = path.empty() ? key : path + "." + key;
    check_node(entry.first, file, key_path, visited);
    if (!keys.insert(key).second) {
      throw ConfigError(file, line_of(entry.first), key_path,
                        "duplicate key (it appears earlier in the same map)");
    }
    check_node(entry.second, file, key_path, visited);
  }
}

}  // namespace

void check_cluster_tree(const YAML::Node& root, const std::string& file) {
  std::size_t visited = 0;
  check_node(root, file, "", visited);
}

YamlReader YamlReader::map(const std::string& key) const {
  const YAML::Node value = node_[key];
  if (!value) fail(key, "missing (required)");
  if (!value.IsMap()) fail(key, "expected a map of keys");
  return YamlReader(value, file_, path_of(key));
}

}  // namespace tagflow::cluster
