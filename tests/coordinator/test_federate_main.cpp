// tagflow_test_federate: runs one federate of the pipeline test program (pipeline_program.hpp)
// in its own process, for the multi-process federation tests.
//   tagflow_test_federate CONFIG ID EVENTS SEED MAX_SLEEP_US TRACE_FILE ENDPOINT_FILE
// Exit status: 0 after a clean run, 3 on a federation error (message on stderr), 2 on bad usage.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

#include "common/atomic_file.hpp"
#include "coordinator/federate_runtime.hpp"
#include "pipeline_program.hpp"

int main(int argc, char** argv) {
  using namespace tagflow::coordinator;
  if (argc != 8) {
    std::cerr << "usage: tagflow_test_federate CONFIG ID EVENTS SEED MAX_SLEEP_US TRACE ENDPOINT\n";
    return 2;
  }
  try {
    const FederationSpec spec = load_federation_spec(argv[1]);
    testing::PipelineProgram program(argv[2], std::stoi(argv[3]), std::stoull(argv[4]),
                                     std::stoi(argv[5]));
    FederateRuntime runtime(spec, argv[2], program);
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
