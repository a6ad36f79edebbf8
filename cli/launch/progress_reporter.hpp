// ProgressReporter: a thread that scrapes a cluster's metrics endpoints and keeps one progress
// line on stderr while `tagflow up` runs.
//
// Every period it probes each target (metrics_probe.hpp, a short timeout per target), folds the
// round into a ProgressLine and prints it: on a terminal as one line rewritten in place ("\r",
// at most 4 times per second), otherwise as a new line at most once per second (so logs and pipes
// still show progress without being flooded).
//
// With follow_joined_samplers() it also follows samplers that join the running cluster (actor
// mode, cli/launch/joined_roster.hpp): their endpoints join the rounds while they are in, and
// joined_samplers() tells, after stop(), what each one did (for the run summary). It then runs
// even when it prints nothing (`print` false, `tagflow up --quiet`).
//
// Ownership: owns its thread; stop() (or the destructor) joins it and ends the line with a
// newline. Thread-safety: start(), stop(), follow_joined_samplers() (before start) and
// joined_samplers() (after stop) from the owning thread only. While it prints, the owner must not
// write to stderr (stop it first), or the lines interleave.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli/launch/joined_roster.hpp"
#include "nodes/cluster/scrape_targets.hpp"

namespace tagflow::cli {

class ProgressReporter {
 public:
  /// `targets`: the node endpoints to scrape (the coordinator's is skipped). `terminal`: whether
  /// stderr is a terminal (decides the period and "\r" versus newlines).
  ProgressReporter(std::vector<cluster::ScrapeTarget> targets, bool terminal, bool print = true);
  ~ProgressReporter();
  ProgressReporter(const ProgressReporter&) = delete;
  ProgressReporter& operator=(const ProgressReporter&) = delete;

  void start();
  void stop();

  /// Before start(): also follow samplers that join, with the endpoints of `config`.
  void follow_joined_samplers(const cluster::ClusterConfig& config);
  /// After stop(): every sampler that joined while it ran, with its last counts.
  [[nodiscard]] std::vector<JoinedReplica> joined_samplers() const;

  /// The last count each replica's endpoint gave (env steps, replay inserts, learner updates,
  /// inference rows: the counters of its process, which start at 0 in every process), by
  /// replica name. Any thread.
  [[nodiscard]] std::map<std::string, double> last_counts() const;
  /// Drops the last counts of `replicas` (their process was started again). Any thread.
  void forget_counts(const std::vector<std::string>& replicas);

 private:
  void run();

  std::vector<cluster::ScrapeTarget> targets_;
  bool terminal_;
  bool print_;
  std::optional<JoinedRoster> roster_;  // used by the thread while it runs
  std::chrono::milliseconds period_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;  // guarded by mutex_
  bool printed_ = false;   // written by the thread; read by stop() after join
  mutable std::mutex counts_mutex_;
  std::map<std::string, double> counts_;  // guarded by counts_mutex_
};

}  // namespace tagflow::cli
