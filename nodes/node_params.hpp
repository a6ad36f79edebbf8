// NodeParams: the free-form `params:` map of one node group in the cluster file, read with
// typed getters that fail with a clear error naming the node and the param.
//
// The cluster parser keeps each param as YAML scalar text (NodeConfig::params); each node kind
// declares which params it knows with check_known(), so a typo is an error, never a silent
// default. A value type; not shared between threads while being read.
// Errors: ParamError (std::invalid_argument) "node 'replay': param 'capacity' (line 30): ...".
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tagflow::cluster {
struct NodeConfig;
}  // namespace tagflow::cluster

namespace tagflow::nodes {

class ParamError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
  /// `message` about param `param`, written at `line` of the cluster file (0: not known).
  ParamError(const std::string& message, std::string param, int line)
      : std::invalid_argument(message), param_(std::move(param)), line_(line) {}
  /// The param the error is about ("" when it is about no single param).
  [[nodiscard]] const std::string& param() const { return param_; }
  /// Its line in the cluster file (0: not known).
  [[nodiscard]] int line() const { return line_; }
  /// The message after `file` and, when known, the line: "FILE:LINE: message".
  [[nodiscard]] std::string in_file(const std::string& file) const {
    return file + (line_ > 0 ? ":" + std::to_string(line_) : std::string()) + ": " + what();
  }

 private:
  std::string param_;
  int line_ = 0;
};

class NodeParams {
 public:
  NodeParams() = default;
  /// `collections`: the params the file wrote as a YAML list or map ("a list", "a map" by name),
  /// which get_string() refuses.
  NodeParams(std::string node, std::map<std::string, std::string> values,
             std::map<std::string, int> lines = {},
             std::map<std::string, std::string> collections = {});
  /// The params of the node group `node` as its file gives them: values, lines, lists and maps.
  [[nodiscard]] static NodeParams of(const cluster::NodeConfig& node);

  /// Throws ParamError for the first param not in `known`.
  void check_known(const std::vector<std::string>& known) const;

  [[nodiscard]] bool has(const std::string& name) const { return values_.count(name) != 0; }
  [[nodiscard]] std::string get_string(const std::string& name, const std::string& fallback) const;
  /// An integer ≥ minimum.
  [[nodiscard]] std::int64_t get_int(const std::string& name, std::int64_t fallback,
                                     std::int64_t minimum = 0) const;
  /// A finite number in [minimum, maximum].
  [[nodiscard]] double get_double(const std::string& name, double fallback, double minimum,
                                  double maximum) const;
  [[nodiscard]] bool get_bool(const std::string& name, bool fallback) const;
  /// A list of positive integers written "64,64" or "[64, 64]".
  [[nodiscard]] std::vector<int> get_sizes(const std::string& name,
                                           const std::vector<int>& fallback) const;
  /// A duration such as "1ms" (cluster file syntax).
  [[nodiscard]] std::chrono::nanoseconds get_duration(const std::string& name,
                                                      std::chrono::nanoseconds fallback) const;

  /// Throws ParamError "node 'N': param 'P' (line L): message".
  [[noreturn]] void fail(const std::string& name, const std::string& message) const;

  void set(const std::string& name, const std::string& value) { values_[name] = value; }
  /// `name` is read where the file is loaded, not by the kind: dropped from the values, and
  /// still named among the known params when check_known() refuses another.
  void read_elsewhere(const std::string& name);
  [[nodiscard]] const std::string& node() const { return node_; }
  /// Every param as the file gives it (YAML text), by name.
  [[nodiscard]] const std::map<std::string, std::string>& values() const { return values_; }

 private:
  std::string node_;
  std::map<std::string, std::string> values_;
  std::map<std::string, int> lines_;
  std::map<std::string, std::string> collections_;
  std::vector<std::string> elsewhere_;
};

}  // namespace tagflow::nodes
