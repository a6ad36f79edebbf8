// A stand-in for `tagflow node --mode actor` used by the multi-process actor tests: runs one
// process of a cluster file with actors::run_actor_process and writes its result JSON.
//   actor_node_helper CONFIG NAME RESULT_PATH [--join]
//   actor_node_helper --cluster CONFIG   (every replica in this process; prints the summary)
// Exit status 0 after a normal end, 2 for a bad config or name, 1 for anything else.
#include <fstream>
#include <iostream>
#include <string>

#include "actors/actor_cluster.hpp"
#include "actors/actor_process.hpp"
#include "actors/torch_replica_spawner.hpp"
#include "nodes/cluster/process_plan.hpp"

int main(int argc, char** argv) {
  using namespace tagflow;
  if (argc == 3 && std::string(argv[1]) == "--cluster") {
    try {
      actors::ActorClusterOptions options;
      options.torch = actors::torch_replica_spawner();
      options.progress = true;
      const auto summary =
          actors::run_actor_cluster(cluster::load_cluster_config(argv[2]), options);
      std::cout << summary.to_json() << "\n";
      return 0;
    } catch (const std::exception& e) {
      std::cerr << "actor_node_helper: " << e.what() << "\n";
      return 1;
    }
  }
  if (argc < 4) {
    std::cerr << "usage: actor_node_helper CONFIG NAME RESULT_PATH [--join]\n";
    return 2;
  }
  const std::string name = argv[2];
  const bool join = argc > 4 && std::string(argv[4]) == "--join";
  try {
    const cluster::ClusterConfig config = cluster::load_cluster_config(argv[1]);
    const auto plans = cluster::plan_processes(config);
    cluster::ProcessPlan plan;
    if (const cluster::ProcessPlan* p = cluster::find_process(plans, name)) {
      plan = *p;
    } else if (join) {
      plan.name = name;
      plan.replicas = {name};
    } else {
      std::cerr << "actor_node_helper: no process '" << name << "'\n";
      return 2;
    }
    actors::ActorProcessOptions options;
    options.join = join;
    options.torch = actors::torch_replica_spawner();
    options.worker_threads = 2;
    const nodes::ProcessResult result = actors::run_actor_process(config, plan, options);
    std::ofstream(argv[3]) << result.to_json() << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "actor_node_helper " << name << ": " << e.what() << "\n";
    return 1;
  }
}
