#include "cli/launch/progress_reporter.hpp"

#include <iostream>
#include <utility>

#include "cli/launch/metrics_probe.hpp"
#include "cli/launch/progress_line.hpp"

namespace tagflow::cli {
namespace {

using namespace std::chrono_literals;

constexpr auto kProbeTimeout = 200ms;

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

std::vector<JoinedSampler> ProgressReporter::joined_samplers() const {
  if (!roster_ || thread_.joinable()) return {};
  return roster_->joined();
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
      round.push_back(ProcessSample{
          target.process, target.kind,
          probe_metrics(target.host, target.port, ProgressLine::families(), kProbeTimeout)});
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
