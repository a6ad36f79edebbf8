// Test helper: the YAML text of a shortened configs/local.yaml (2 samplers, replay, learner,
// inference on this machine), with the knobs tests vary. Header-only, like run_command.hpp.
//
// The text is configs/local.yaml itself, edited: every edit asserts (ADD_FAILURE) that the file
// still contains what it replaces, so a changed demo file fails loudly instead of silently
// testing something else. By default it stops after 2400 env steps and learns from 200 items on.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "bench/local_cluster.hpp"
#include "common/loopback_ports.hpp"

namespace tagflow::testing {

/// A fixture's TearDown: removes the test's working directory (clusters' logs, checkpoints,
/// traces) unless the test failed, when it stays for reading. Without it, every run of the
/// suite left some 100 MB under the temp directory.
inline void remove_unless_failed(const std::filesystem::path& dir) {
  if (::testing::Test::HasFailure()) return;
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
}

struct LocalClusterOptions {
  /// Replaces `target_return: 475` in the stop section ("env_steps: 800", "seconds: 3", ...).
  std::string stop = "env_steps: 2400";
  /// Keeps the file's `seconds: 900` safety stop beside `stop`.
  bool keep_seconds_limit = true;
  /// The replay's min_size (the file's 1000 makes short runs learn nothing).
  int min_size = 200;
  /// "reactor" or "actor"; empty keeps the file's mode.
  std::string mode;
  /// Maps each port of the file (7600, 9460, 7610, ...) to the port the test uses; empty: keep.
  std::function<int(int)> port;
  /// Node group → process name (`process:` key), for grouping replicas into processes.
  std::map<std::string, std::string> process;
  /// Node group → params set on it, as flow-map entries ("min_size: 300, restore: true"): an
  /// entry whose key the group already has replaces its value, others are appended.
  std::map<std::string, std::string> params;
  /// Replaces the hosts section's entries (the default one is `  local: {address: 127.0.0.1}\n`);
  /// with it, `host` must place the coordinator and every node group.
  std::string hosts;
  /// "coordinator" or a node group → host name (with `hosts`).
  std::map<std::string, std::string> host;
  /// Replace the file's `checkpoint:` and `restart:` lines (e.g. "{every: 100ms, keep: 2}",
  /// "{max: 3}"); empty: drop them (a death ends the run, as in tests written before them).
  std::string checkpoint;
  std::string restart;
};

/// The connections section of configs/local.yaml, for hand-written cluster files with the same
/// node groups (bench/local_cluster.hpp).
using bench::kLocalClusterConnections;

/// The ports of configs/local.yaml, in file order.
inline const std::vector<int>& local_cluster_ports() {
  static const std::vector<int> ports{7600, 9460, 7610, 9470, 7620, 9480, 7630, 9490, 7640, 9500};
  return ports;
}

/// How many consecutive ports free_local_cluster_ports() finds (configs/local.yaml's, samplers
/// taking two each).
inline constexpr int kLocalClusterPortCount = 12;

/// The first of kLocalClusterPortCount consecutive free loopback ports (a random range, so
/// test runs sharing one machine rarely meet), or -1.
inline int free_local_cluster_ports() { return free_loopback_port_range(kLocalClusterPortCount); }

/// LocalClusterOptions::port moving configs/local.yaml's ports to base, base + 1, ...: the
/// coordinator base (metrics +1), sampler-i base + 2 + i (metrics +4 + i), replay base + 6
/// (metrics +7), learner base + 8 (+9), inference base + 10 (+11).
inline std::function<int(int)> local_cluster_ports_from(int base) {
  return [base](int port) {
    static const std::vector<int> offsets{0, 1, 2, 4, 6, 7, 8, 9, 10, 11};
    const std::vector<int>& ports = local_cluster_ports();
    const auto at = std::find(ports.begin(), ports.end(), port);
    return base + offsets[static_cast<std::size_t>(at - ports.begin())];
  };
}

namespace detail {

inline void replace_first(std::string& text, const std::string& from, const std::string& to,
                          std::size_t start = 0) {
  const std::size_t at = text.find(from, start);
  if (at == std::string::npos) {
    ADD_FAILURE() << "configs/local.yaml no longer contains: " << from;
    return;
  }
  text.replace(at, from.size(), to);
}

// Replaces the top-level line `key: ...` with `key: value`, or removes it when `value` is empty.
inline void replace_top_level_line(std::string& text, const std::string& key,
                                   const std::string& value) {
  const std::size_t at = text.find("\n" + key + ": ");
  if (at == std::string::npos) {
    ADD_FAILURE() << "configs/local.yaml has no " << key << ": line";
    return;
  }
  const std::size_t end = text.find('\n', at + 1);
  text.replace(at + 1, end - at, value.empty() ? "" : key + ": " + value + "\n");
}

// Sets `key: value` entries in the params flow map of node group `group`.
inline void set_params(std::string& text, const std::string& group, const std::string& entries) {
  const std::size_t kind = text.find("    kind: " + group + "\n");
  const std::size_t open = text.find("params: {", kind);
  const std::size_t close = text.find('}', open);
  if (kind == std::string::npos || open == std::string::npos || close == std::string::npos) {
    ADD_FAILURE() << "configs/local.yaml has no params for node group " << group;
    return;
  }
  std::string map = text.substr(open + 9, close - open - 9);
  std::stringstream list(entries);
  std::string entry;
  while (std::getline(list, entry, ',')) {
    entry.erase(0, entry.find_first_not_of(" \n"));
    const std::string key = entry.substr(0, entry.find(':'));
    const std::size_t at = map.find(key + ":");
    if (at == std::string::npos) {
      map += ", " + entry;
    } else {
      const std::size_t end = map.find_first_of(",}", at);
      map.replace(at, (end == std::string::npos ? map.size() : end) - at, entry);
    }
  }
  text.replace(open + 9, close - open - 9, map);
}

}  // namespace detail

/// configs/local.yaml shortened and edited as `options` says.
inline std::string local_cluster_yaml(const LocalClusterOptions& options = {}) {
  std::ifstream in(std::string(TAGFLOW_SOURCE_DIR) + "/configs/local.yaml");
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  detail::replace_first(text, "target_return: 475", options.stop);
  if (!options.keep_seconds_limit) detail::replace_first(text, "  seconds: 900\n", "");
  detail::replace_first(text, "min_size: 1000", "min_size: " + std::to_string(options.min_size));
  detail::replace_top_level_line(text, "checkpoint", options.checkpoint);
  detail::replace_top_level_line(text, "restart", options.restart);
  if (!options.mode.empty()) detail::replace_first(text, "mode: reactor", "mode: " + options.mode);
  if (options.port) {
    for (const int p : local_cluster_ports()) {
      detail::replace_first(text, ": " + std::to_string(p) + "\n",
                            ": " + std::to_string(options.port(p)) + "\n");
    }
  }
  for (const auto& [group, entries] : options.params) detail::set_params(text, group, entries);
  for (const auto& [group, process] : options.process) {
    detail::replace_first(text, "    kind: " + group + "\n",
                          "    kind: " + group + "\n    process: " + process + "\n");
  }
  if (!options.hosts.empty()) {
    detail::replace_first(text, "  local: {address: 127.0.0.1}\n", options.hosts);
    const auto host_of = [&](const std::string& who) {
      const auto found = options.host.find(who);
      if (found == options.host.end()) ADD_FAILURE() << "no host for " << who;
      return found == options.host.end() ? std::string("local") : found->second;
    };
    detail::replace_first(
        text, "  host: local\n  port:", "  host: " + host_of("coordinator") + "\n  port:");
    for (const std::string group : {"sampler", "replay", "learner", "inference"}) {
      const std::size_t kind = text.find("    kind: " + group + "\n");
      detail::replace_first(text, "    host: local\n", "    host: " + host_of(group) + "\n", kind);
    }
  }
  return text;
}

}  // namespace tagflow::testing
