// A reactor program for the federation tests: `source` emits a value every millisecond, `mid`
// transforms it, `sink` gathers the raw value and the transformed one one millisecond later.
// It runs either in one Environment or split over three processes (one federate each) with
// ReactorFederate; the traces must be identical.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>

#include "federate/reactor_federate.hpp"
#include "payload_text.hpp"
#include "reactors/reactors.hpp"

namespace tagflow::coordinator::testing {

/// The federation section for the three-federate split.
std::string reactor_pipeline_config(const std::string& address);

/// Sleeps up to `max_us` microseconds (timing noise that must not change any result).
class Jitter {
 public:
  explicit Jitter(int max_us);
  void operator()();

 private:
  int max_us_;
  std::mt19937 random_;
};

class Source : public reactors::Reactor {
 public:
  reactors::Output<transport::Payload> out{"out", this};
  reactors::Timer tick{"tick", this, std::chrono::milliseconds(0), std::chrono::milliseconds(1)};
  Source(std::string name, reactors::Environment& env, std::uint64_t seed, int max_sleep_us);
  std::string trace;

 private:
  std::uint64_t seed_;
  std::uint64_t count_ = 0;
  Jitter jitter_;
};

class Mid : public reactors::Reactor {
 public:
  reactors::Input<transport::Payload> in{"in", this};
  reactors::Output<transport::Payload> out{"out", this};
  /// With `stop_after` > 0, requests a stop after that many values.
  Mid(std::string name, reactors::Environment& env, int max_sleep_us, int stop_after = 0);
  std::string trace;

 private:
  Jitter jitter_;
  int stop_after_;
  int count_ = 0;
};

class Sink : public reactors::Reactor {
 public:
  reactors::Input<transport::Payload> direct{"direct", this};
  reactors::Input<transport::Payload> processed{"processed", this};
  Sink(std::string name, reactors::Environment& env, int max_sleep_us);
  std::string trace;

 private:
  Jitter jitter_;
};

/// Logical run length for `events` source events.
inline std::chrono::milliseconds reactor_pipeline_timeout(int events) {
  return std::chrono::milliseconds(events);
}

/// Runs the whole program in one environment; returns the traces by federate id.
std::map<std::string, std::string> run_reactor_pipeline_in_one_process(int events,
                                                                       std::uint64_t seed);

struct FederateOutcome {
  std::string trace;
  std::uint64_t late_events = 0;
  std::optional<reactors::Tag> stop_proposal;
  std::optional<reactors::Tag> stop_tag;
};

/// Runs federate `id` of the split program (joins, runs, resigns) on `workers` workers. With
/// `mid_stop_after` > 0, `mid` requests a stop after that many values.
FederateOutcome run_reactor_pipeline_federate(const FederationSpec& spec, const std::string& id,
                                              int events, std::uint64_t seed, int max_sleep_us,
                                              int mid_stop_after = 0,
                                              ReactorFederateOptions options = {},
                                              unsigned workers = 2);

}  // namespace tagflow::coordinator::testing
