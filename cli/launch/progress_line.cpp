#include "cli/launch/progress_line.hpp"

#include <algorithm>
#include <cstdio>

#include "monitoring/metric_catalogue.hpp"
#include "nodes/kind/registry.hpp"
#include "nodes/node_metrics.hpp"

namespace tagflow::cli {
namespace {

using nodes::family::kEnvSteps;
using nodes::family::kEpisodes;
using nodes::family::kLearnerUpdates;
using nodes::family::kReturnMean;
using nodes::family::kWeightsVersion;

/// Reactor mode: 1 while a federate waits for the coordinator's START (0 in actor mode).
const std::string& waiting_family() {
  static const std::string name =
      monitoring::spec(monitoring::Metric::federation_waiting_for_start).name;
  return name;
}

std::optional<double> value_of(const ProbeResult& probe, const std::string& family) {
  const auto it = probe.values.find(family);
  if (!probe.answered || it == probe.values.end()) return std::nullopt;
  return it->second;
}

std::string fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.*f", decimals, value);
  return text;
}

}  // namespace

std::string format_rate(double value) {
  if (value >= 1e6) return fixed(value / 1e6, 2) + "M";
  if (value >= 1e4) return fixed(value / 1e3, 1) + "k";
  if (value >= 100) return fixed(value, 0);
  return fixed(value, 1);
}

const std::vector<std::string>& ProgressLine::families() {
  static const std::vector<std::string> names{kEnvSteps,       kEpisodes,       kReturnMean,
                                              kLearnerUpdates, kWeightsVersion, waiting_family()};
  return names;
}

double ProgressLine::rate(Clock::time_point now, const std::vector<ProcessSample>& round,
                          const std::string& family,
                          std::map<std::string, Previous>& previous) const {
  double total = 0.0;
  for (const ProcessSample& sample : round) {
    const std::optional<double> value = value_of(sample.probe, family);
    if (!value) continue;
    const auto it = previous.find(sample.process);
    if (it != previous.end() && now > it->second.at && *value >= it->second.value) {
      const double seconds = std::chrono::duration<double>(now - it->second.at).count();
      total += (*value - it->second.value) / seconds;
    }
    previous[sample.process] = Previous{now, *value};
  }
  return total;
}

std::string ProgressLine::update(Clock::time_point now, const std::vector<ProcessSample>& round) {
  const double steps_per_second = rate(now, round, kEnvSteps, steps_);
  const double updates_per_second = rate(now, round, kLearnerUpdates, updates_);

  int samplers = 0;  // every node that steps an env: samplers and multi-agent nodes
  bool multi_agent = false;
  int joined = 0;
  int samplers_answering = 0;
  double return_sum = 0.0;
  int returns = 0;
  std::optional<double> learner_version;
  std::optional<double> any_version;
  int federates = 0;  // replicas that answered with tagflow_federation_waiting_for_start
  int waiting = 0;    // of which still wait for the coordinator's START (reactor mode)
  for (const ProcessSample& sample : round) {
    if (const auto waits = value_of(sample.probe, waiting_family())) {
      ++federates;
      if (*waits > 0.0) ++waiting;
    }
    if (const auto version = value_of(sample.probe, kWeightsVersion)) {
      any_version = std::max(any_version.value_or(0.0), *version);
      if (sample.kind == "learner") {
        learner_version = std::max(learner_version.value_or(0.0), *version);
      }
    }
    const nodes::NodeKind* kind = nodes::find_node_kind(sample.kind);
    if (kind == nullptr || !kind->steps_env) continue;
    multi_agent = multi_agent || kind->multi_agent_env();
    ++samplers;
    if (sample.joined) ++joined;
    if (!sample.probe.answered) {
      const auto last = answered_.find(sample.process);
      if (last != answered_.end() && now - last->second <= kAnswerGrace) ++samplers_answering;
      continue;
    }
    answered_[sample.process] = now;
    ++samplers_answering;
    const auto episodes = value_of(sample.probe, kEpisodes);
    const auto mean = value_of(sample.probe, kReturnMean);
    if (episodes && *episodes > 0 && mean) {
      return_sum += *mean;
      ++returns;
    }
  }

  const auto elapsed = std::chrono::duration_cast<std::chrono::seconds>(now - start_).count();
  std::string line = std::to_string(elapsed) + "s | env " + format_rate(steps_per_second) +
                     " steps/s | learner " + format_rate(updates_per_second) +
                     " updates/s | return ";
  line += returns > 0 ? fixed(return_sum / returns, 1) : std::string("-");
  const std::optional<double> version = learner_version ? learner_version : any_version;
  line += " | weights ";
  line += version ? "v" + fixed(*version, 0) : std::string("-");
  line += multi_agent ? " | env nodes " : " | samplers ";
  line += std::to_string(samplers_answering) + "/" + std::to_string(samplers);
  if (joined > 0) line += " (" + std::to_string(joined) + " joined)";
  if (waiting > 0) {
    line += " | waiting for the coordinator's START: " + std::to_string(waiting) + "/" +
            std::to_string(federates);
  }
  return line;
}

}  // namespace tagflow::cli
