// `tagflow up FILE --placement single [--summary PATH] [--workers N]`: the whole cluster file in
// this process as one reactor program (hosts/reactor/single_process_cluster.hpp), in tagflow-torch.
// `tagflow` (cli/main.cpp) checks the command line and the file (up_single_options.hpp) and hands
// the command over when --placement single is given; every other placement is the multi-process
// launcher of the plain tagflow binary (cli/up_command.cpp).
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/launch/up_single_options.hpp"
#include "cli/torch_commands.hpp"
#include "common/atomic_file.hpp"
#include "hosts/actor/actor_cluster.hpp"
#include "hosts/reactor/single_process_cluster.hpp"
#include "nodes/cluster/cluster_config.hpp"
#include "nodes/cluster/service_endpoints.hpp"
#include "nodes/node_params.hpp"
#include "rl/learning/learner_checkpoint.hpp"

namespace tagflow::cli {
namespace {

/// Ctrl-C or SIGTERM ends a one-process run at once with status 130, as the process placement's
/// launcher ends (docs/clusters.md, "Exit codes"); nothing is combined, so there is no summary.
void interrupt_run(int /*signal*/) {
  static const char message[] = "\ntagflow up: interrupted\n";
  (void)!::write(STDERR_FILENO, message, sizeof message - 1);
  ::_exit(kExitInterrupted);
}

void run_up(const UpSingleOptions& options) {
  // Run through `tagflow`, these were checked before LibTorch started; run directly, here.
  const cluster::ClusterConfig config = load_up_single(options);
  set_torch_threads(1);  // the learner's sums in one order: the digest is the same every run
  struct sigaction interrupt {};
  interrupt.sa_handler = interrupt_run;
  ::sigemptyset(&interrupt.sa_mask);
  ::sigaction(SIGINT, &interrupt, nullptr);
  ::sigaction(SIGTERM, &interrupt, nullptr);
  hosts::SingleProcessOptions run_options;
  run_options.workers = std::max(1U, options.workers);
  run_options.progress = !options.quiet;
  const bool actors = config.mode == cluster::Mode::actor;
  hosts::RunSummary summary;
  try {
    std::cerr << "tagflow up: " << config.name << " (" << options.file << "), placement single, ";
    if (!actors) {
      std::cerr << "mode reactor, " << run_options.workers << " worker(s)\n";
    } else if (options.workers != 0) {
      std::cerr << "mode actor, " << options.workers << " actor scheduler thread(s)\n";
    } else {
      std::cerr << "mode actor, actor scheduler threads: one per core\n";
    }
    // Where outside programs reach the policies (nodes/gateway/PROTOCOL.md §1).
    if (const std::string gateways = cluster::describe_gateways(cluster::gateway_endpoints(config));
        !gateways.empty()) {
      std::cerr << "tagflow up: inference service: " << gateways << "\n";
    }
    if (config.trace.enabled) {
      std::cerr << "tagflow up: trace: records the processes of the process placement (tagflow up "
                   "FILE); this one-process run is not traced\n";
    }
    if (actors) {  // every replica a CAF actor (actors/README.md)
      hosts::ActorClusterOptions actor_options;
      actor_options.worker_threads = options.workers;  // 0: CAF's default, one per core
      actor_options.progress = !options.quiet;
      summary = hosts::run_actor_cluster(config, actor_options);
    } else {
      summary = hosts::run_single_process_cluster(config, run_options);
    }
  } catch (const cluster::ConfigError& e) {
    fail_command("up", e.what(), kExitBadFile);
  } catch (const nodes::ParamError& e) {  // FILE:LINE when the param's line is known
    fail_command("up", e.in_file(options.file), kExitBadFile);
  } catch (const std::invalid_argument& e) {
    fail_command("up", e.what(), kExitBadFile);
  }
  std::cout << "stop " << summary.stop_reason << ": mean_return " << summary.mean_return
            << ", env_steps " << summary.env_steps << ", updates " << summary.updates << ", "
            << summary.seconds << " s, digest " << summary.digest_hex()
            << (summary.digest_reproducible ? ""
                                            : " (" + summary.unreproducible + ": not reproducible)")
            << "\n";
  for (const std::string& line : summary.detail_lines()) std::cout << line << "\n";
  if (!options.summary_path.empty()) {
    try {
      write_file_atomically(options.summary_path, summary.to_json() + "\n");
    } catch (const std::exception& e) {
      fail_command("up", e.what(), kExitFailed);
    }
  }
  if (config.stop.target_return && !summary.target_reached) {
    std::cerr << "tagflow up: stopped (" << summary.stop_reason << ") before reaching the target "
              << "return " << *config.stop.target_return << "\n";
    throw CLI::RuntimeError(kExitBeforeTarget);
  }
}

}  // namespace

void add_up_single_command(CLI::App& app) {
  auto options = std::make_shared<UpSingleOptions>();
  CLI::App* command = add_up_single_options(app, *options);
  command->callback([options] { run_up(*options); });
}

}  // namespace tagflow::cli
