// ProgressLine: the text of `tagflow up`'s live progress line, from rounds of metric scrapes.
//
//   12s | env 8.2k steps/s | learner 51.3 updates/s | return 131.5 | weights v1664 | samplers 2/2
//
// - env steps/s: the increase of `tagflow_env_steps_total` over the samplers that answered in
//   this round and the previous one, divided by the time between the rounds;
// - learner updates/s: the same over `tagflow_learner_updates_total`;
// - return: the mean of `tagflow_episode_return_mean` over the samplers that answered and have
//   finished an episode (`tagflow_episodes_total` > 0); "-" before the first episode;
// - weights: the newest `tagflow_weights_version` a learner reports (else any process);
// - samplers N/M: how many of the M sampler endpoints answered this round or within the last
//   kAnswerGrace (a scrape that times out on a busy machine is no lost sampler); M counts the
//   samplers of the file and the samplers that joined and are still in (actor mode's elasticity
//   shows here), and " (J joined)" follows when J > 0 of them joined
//   (cli/launch/joined_roster.hpp). Multi-agent nodes step envs too: they count as samplers for env
//   steps/s and the return (a team return), and the column reads "env nodes N/M" when the file has
//   any.
// A process that did not answer is left out of the round; its counter is compared again when it
// answers (so a missed scrape never gives a negative or doubled rate).
//
// Pure: no I/O and no clock of its own (the caller passes the time of each round). Not
// thread-safe: one owner calls update().
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "cli/launch/metrics_probe.hpp"

namespace tagflow::cli {

/// One process's answer in a round of scrapes.
struct ProcessSample {
  std::string process;  // sampler-0, learner, ...
  std::string kind;     // the `kind` label value: coordinator or a node kind's name
  ProbeResult probe;
  bool joined = false;  // a sampler that joined the running cluster (not a process of the file)
};

class ProgressLine {
 public:
  using Clock = std::chrono::steady_clock;
  /// How long a sampler that answered still counts as answering while its scrapes time out.
  static constexpr std::chrono::seconds kAnswerGrace{5};

  /// `start` is when the run started (the elapsed seconds at the line's start count from it).
  explicit ProgressLine(Clock::time_point start) : start_(start) {}

  /// The metric families the line reads (what to pass to probe_metrics).
  static const std::vector<std::string>& families();

  /// Folds in one round of scrapes taken at `now` and returns the line.
  std::string update(Clock::time_point now, const std::vector<ProcessSample>& round);

 private:
  struct Previous {
    Clock::time_point at;
    double value = 0.0;
  };
  /// Sum over processes of (value now - value at their previous answer) / elapsed, for `family`.
  double rate(Clock::time_point now, const std::vector<ProcessSample>& round,
              const std::string& family, std::map<std::string, Previous>& previous) const;

  Clock::time_point start_;
  std::map<std::string, Previous> steps_;              // by process
  std::map<std::string, Previous> updates_;            // by process
  std::map<std::string, Clock::time_point> answered_;  // a sampler's last answer, by process
};

/// 8213.4 → "8.2k", 51.26 → "51.3", 1.5e6 → "1.50M".
std::string format_rate(double value);

}  // namespace tagflow::cli
