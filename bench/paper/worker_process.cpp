#include <cstdio>
#include <exception>
#include <string>

#include "bench/paper/placements.hpp"

namespace tagflow::bench::paper {

int run_paper_worker_process(const std::vector<std::string>& args) {
  try {
    std::string federate_address;
    std::string port_file;
    std::string raw_address;
    std::size_t index = 0;
    for (std::size_t i = 0; i + 1 < args.size(); ++i) {
      if (args[i] == "--federate") federate_address = args[i + 1];
      if (args[i] == "--actor-port-file") port_file = args[i + 1];
      if (args[i] == "--raw") raw_address = args[i + 1];
      if (args[i] == "--index") index = std::stoul(args[i + 1]);
    }
    const RoundWorkload workload = parse_round_workload(args);
    if (!federate_address.empty())
      return run_reactor_worker_federate(workload, federate_address, index);
    if (!port_file.empty()) return run_caf_worker_process(workload, port_file, index);
    if (!raw_address.empty()) return run_raw_worker_process(workload, raw_address, index);
    std::fprintf(stderr,
                 "bench-paper-worker: needs --federate ADDRESS, --actor-port-file FILE or --raw "
                 "ADDRESS\n");
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench-paper-worker: %s\n", e.what());
    return 1;
  }
}

}  // namespace tagflow::bench::paper
