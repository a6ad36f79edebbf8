// MetricsProbe: reads a few metric families from a process's Prometheus endpoint, for the
// launcher's progress line (`tagflow up`).
//
// http_get() (monitoring/http_get.hpp) fetches the page.
// parse_exposition() reads the Prometheus text exposition format (version 0.0.4) and sums, per
// family name, the values of every series of that name (labels are ignored). probe_metrics() is
// both together.
//
// Errors are values: an unreachable, slow or non-200 endpoint gives nullopt / answered = false;
// malformed lines of the text are skipped. Nothing here throws on network input.
// Thread-safety: free functions without shared state; callable from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "monitoring/http_get.hpp"

namespace tagflow::cli {

/// monitoring/http_get.hpp, for the launcher's probes.
using monitoring::http_get;

/// For each name in `names` that has at least one sample in `text`, the sum of its samples'
/// values. A sample's name must match exactly (`tagflow_env_steps_total`, not a prefix).
[[nodiscard]] std::map<std::string, double> parse_exposition(const std::string& text,
                                                             const std::vector<std::string>& names);

/// For the samples of family `name` in `text`, the sum of their values per value of label
/// `label` (samples without that label are skipped). Escaped label values are unescaped.
[[nodiscard]] std::map<std::string, double> parse_label_values(const std::string& text,
                                                               const std::string& name,
                                                               const std::string& label);

/// The family through which actor-mode nodes list the samplers linked to them (label peer).
inline constexpr const char* kActorMembersFamily = "tagflow_actor_members";

struct ProbeResult {
  bool answered = false;                  // the endpoint returned 200
  std::map<std::string, double> values;   // parse_exposition() of its body
  std::map<std::string, double> members;  // tagflow_actor_members by peer (actor-mode nodes)
};

/// One scrape of http://HOST:PORT/metrics.
[[nodiscard]] ProbeResult probe_metrics(const std::string& host, std::uint16_t port,
                                        const std::vector<std::string>& names,
                                        std::chrono::milliseconds timeout);

}  // namespace tagflow::cli
