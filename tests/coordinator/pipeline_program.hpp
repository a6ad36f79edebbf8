// A small federated program for the federation tests and benchmark: `source` emits a value
// every millisecond, `left` and `right` transform it, `sink` gathers both. Every federate keeps
// a trace of what it read and wrote at each tag; the digest of the traces must not depend on
// whether the program runs federated or in one process, nor on timing (random sleeps).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>

#include "federate/federate_runtime.hpp"

namespace tagflow::coordinator::testing {

/// Cluster YAML with the pipeline's federation section; `address` is the coordinator's.
std::string pipeline_config(const std::string& address, const std::string& heartbeat = "1s");

class PipelineProgram : public FederatedProgram {
 public:
  PipelineProgram(std::string id, int events, std::uint64_t seed, int max_sleep_us);

  WireTag next_local_event() override;
  void react(const WireTag& tag, const std::vector<InputMessage>& inputs, Outbox& out) override;
  std::vector<std::pair<std::string, std::uint32_t>> input_ports() override;

  const std::string& trace() const { return trace_; }

 private:
  std::string id_;
  int events_;
  std::uint64_t seed_;
  int max_sleep_us_;
  int emitted_ = 0;
  std::mt19937 sleeps_;
  std::string trace_;
};

/// Runs every federate of `spec` in this process, in tag order (federates at the same tag in
/// spec order, which is topological for the pipeline); returns each federate's trace.
std::map<std::string, std::string> run_in_one_process(const FederationSpec& spec, int events,
                                                      std::uint64_t seed);

/// FNV-1a 64 of the traces in federate-id order.
std::uint64_t digest(const std::map<std::string, std::string>& traces);

}  // namespace tagflow::coordinator::testing
