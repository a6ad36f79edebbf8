#include "cli/launch/progress_reporter.hpp"

#include <algorithm>
#include <iostream>
#include <utility>

#include "cli/launch/metrics_probe.hpp"
#include "cli/launch/progress_line.hpp"
#include "nodes/kind/registry.hpp"

namespace tagflow::cli {
namespace {

using namespace std::chrono_literals;

constexpr auto kProbeTimeout = 200ms;

/// The counter of a replica's count, by its kind (nodes/kind/node_kind.hpp); "" for the
/// coordinator.
std::string count_family(const std::string& kind) {
  const nodes::NodeKind* k = nodes::find_node_kind(kind);
  return k == nullptr ? "" : k->count_family;
}

/// What a round probes: the progress line's families and every kind's count.
const std::vector<std::string>& probed_families() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all = ProgressLine::families();
    for (const nodes::NodeKind* kind : nodes::node_kinds()) {
      if (std::find(all.begin(), all.end(), kind->count_family) == all.end()) {
        all.push_back(kind->count_family);
      }
    }
    return all;
  }();
  return names;
}

}  // namespace

ProgressReporter::ProgressReporter(std::vector<cluster::ScrapeTarget> targets, bool terminal,
                                   bool print)
    : terminal_(terminal), print_(print), period_(terminal ? 250ms : 1000ms) {
  for (cluster::ScrapeTarget& target : targets) {
    if (target.kind != "coordinator") targets_.push_back(std::move(target));
  }
}

ProgressReporter::~ProgressReporter() { stop(); }

void ProgressReporter::start() {
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] { run(); });
}

void ProgressReporter::stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
  if (terminal_ && printed_) std::cerr << "\n" << std::flush;
}

void ProgressReporter::follow_joined_samplers(const cluster::ClusterConfig& config) {
  if (!thread_.joinable()) roster_.emplace(config, targets_);
}

std::vector<JoinedReplica> ProgressReporter::joined_samplers() const {
  if (!roster_ || thread_.joinable()) return {};
  return roster_->joined();
}

std::map<std::string, double> ProgressReporter::last_counts() const {
  const std::lock_guard<std::mutex> lock(counts_mutex_);
  return counts_;
}

void ProgressReporter::forget_counts(const std::vector<std::string>& replicas) {
  const std::lock_guard<std::mutex> lock(counts_mutex_);
  for (const std::string& replica : replicas) counts_.erase(replica);
}

void ProgressReporter::run() {
  ProgressLine line(ProgressLine::Clock::now());
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    if (wake_.wait_for(lock, period_, [this] { return stopping_; })) return;
    lock.unlock();
    std::vector<ProcessSample> round;
    round.reserve(targets_.size());
    for (const cluster::ScrapeTarget& target : targets_) {
      round.push_back(
          ProcessSample{target.process, target.kind,
                        probe_metrics(target.host, target.port, probed_families(), kProbeTimeout)});
      const ProbeResult& probe = round.back().probe;
      const auto count = probe.values.find(count_family(target.kind));
      if (probe.answered && count != probe.values.end()) {
        const std::lock_guard<std::mutex> counts_lock(counts_mutex_);
        counts_[target.process] = count->second;
      }
    }
    if (roster_) {
      for (const cluster::ScrapeTarget& target : roster_->update_members(round)) {
        ProcessSample sample{
            target.process, target.kind,
            probe_metrics(target.host, target.port, ProgressLine::families(), kProbeTimeout), true};
        roster_->record(sample);
        round.push_back(std::move(sample));
      }
    }
    const std::string text = line.update(ProgressLine::Clock::now(), round);
    lock.lock();
    if (stopping_) return;  // the owner may be printing already
    if (!print_) continue;
    if (terminal_) {
      std::cerr << "\r" << text << "\x1b[K" << std::flush;
    } else {
      std::cerr << text << "\n" << std::flush;
    }
    printed_ = true;
  }
}

}  // namespace tagflow::cli
