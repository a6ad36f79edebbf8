// tagflow_test_reactor_federate: runs one federate of the reactor pipeline (reactor_pipeline.hpp)
// in its own process.
//   tagflow_test_reactor_federate CONFIG ID EVENTS SEED MAX_SLEEP_US TRACE_FILE [PROTOCOL_VERSION]
// PROTOCOL_VERSION: the federation protocol version it joins with (default: the current one;
// federation/PROTOCOL.md §2.5).
// Exit status: 0 after a clean run, 3 on a federation error (message on stderr), 4 when a message
// arrived late (after its tag had started), 2 on bad usage.
#include <fstream>
#include <iostream>
#include <string>

#include "reactor_pipeline.hpp"

int main(int argc, char** argv) {
  using namespace tagflow::coordinator;
  if (argc != 7 && argc != 8) {
    std::cerr << "usage: tagflow_test_reactor_federate CONFIG ID EVENTS SEED MAX_SLEEP_US TRACE "
                 "[PROTOCOL_VERSION]\n";
    return 2;
  }
  try {
    const FederationSpec spec = load_federation_spec(argv[1]);
    ReactorFederateOptions options;
    if (argc == 8) options.protocol_version = static_cast<std::uint32_t>(std::stoul(argv[7]));
    const testing::FederateOutcome outcome = testing::run_reactor_pipeline_federate(
        spec, argv[2], std::stoi(argv[3]), std::stoull(argv[4]), std::stoi(argv[5]), 0, options);
    std::ofstream(argv[6]) << outcome.trace;
    if (outcome.late_events != 0) {
      std::cerr << "tagflow_test_reactor_federate " << argv[2] << ": " << outcome.late_events
                << " late events (messages that arrived after their tag had started)\n";
      return 4;
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "tagflow_test_reactor_federate " << argv[2] << ": " << e.what() << "\n";
    return 3;
  }
}
