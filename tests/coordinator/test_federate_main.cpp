// tagflow_test_federate: runs one federate of the pipeline test program (pipeline_program.hpp)
// in its own process, for the multi-process federation tests.
//   tagflow_test_federate CONFIG ID EVENTS SEED MAX_SLEEP_US TRACE_FILE ENDPOINT_FILE [FORGET_PORT]
// With FORGET_PORT, the federate does not accept that input port: what its upstream sends there
// is dropped on receipt (unknown_port), as from a peer that disagrees about the ports.
// Exit status: 0 after a clean run, 3 on a federation error (message on stderr), 2 on bad usage.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

#include "common/atomic_file.hpp"
#include "federate/federate_runtime.hpp"
#include "pipeline_program.hpp"

namespace {

using namespace tagflow::coordinator;

/// The program without one of its input ports.
class ForgetfulProgram : public FederatedProgram {
 public:
  ForgetfulProgram(FederatedProgram& program, std::uint32_t forgotten)
      : program_(program), forgotten_(forgotten) {}
  WireTag next_local_event() override { return program_.next_local_event(); }
  void react(const WireTag& tag, const std::vector<InputMessage>& inputs, Outbox& out) override {
    program_.react(tag, inputs, out);
  }
  std::vector<std::pair<std::string, std::uint32_t>> input_ports() override {
    std::vector<std::pair<std::string, std::uint32_t>> ports = program_.input_ports();
    ports.erase(std::remove_if(ports.begin(), ports.end(),
                               [this](const auto& port) { return port.second == forgotten_; }),
                ports.end());
    return ports;
  }

 private:
  FederatedProgram& program_;
  std::uint32_t forgotten_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 8 && argc != 9) {
    std::cerr << "usage: tagflow_test_federate CONFIG ID EVENTS SEED MAX_SLEEP_US TRACE_FILE "
                 "ENDPOINT_FILE [FORGET_PORT]\n";
    return 2;
  }
  try {
    const FederationSpec spec = load_federation_spec(argv[1]);
    testing::PipelineProgram program(argv[2], std::stoi(argv[3]), std::stoull(argv[4]),
                                     std::stoi(argv[5]));
    ForgetfulProgram forgetful(program,
                               argc == 9 ? static_cast<std::uint32_t>(std::stoul(argv[8])) : 0);
    FederateRuntime runtime(spec, argv[2], forgetful);
    tagflow::write_file_atomically(argv[7], runtime.data_endpoint() + "\n");
    const FederateRunSummary summary = runtime.run();
    std::ofstream(argv[6]) << program.trace();
    std::cerr << argv[2] << ": " << summary.tags_processed << " tags, " << summary.messages_dropped
              << " dropped\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "tagflow_test_federate " << argv[2] << ": " << e.what() << "\n";
    return 3;
  }
}
