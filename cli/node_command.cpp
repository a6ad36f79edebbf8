// `tagflow node --config FILE --name PROCESS [--mode reactor|actor] [--result PATH] [--join]
// [--checkpoints DIR] [--resume DIR] [--trace DIR] [--peers-restart] [--quiet]`: runs the replicas
// of one process of a cluster file (nodes/README.md) until the cluster stops. Built into both
// executables: `tagflow` runs processes of kinds without LibTorch and hands the others (learner,
// inference) to `tagflow-torch` (cli/main.cpp), which installs the LibTorch kinds at start
// (nodes/kind/torch_registry.hpp). Exit codes: 0 the cluster stopped normally; 2 bad file, param or
// process name; 4 federation failure (the message names the federate); 1 anything else. Errors go
// to stderr as one line starting `tagflow node PROCESS:`.
#include <fstream>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "actors/actor_credentials.hpp"
#include "common/atomic_file.hpp"
#include "hosts/actor/actor_process.hpp"

#include "federate/federate_client.hpp"
#include "federation/federation_spec.hpp"
#include "hosts/reactor/federated_process.hpp"
#include "hosts/replica_params_check.hpp"
#include "nodes/cluster/process_plan.hpp"
#include "nodes/message_text.hpp"
#include "nodes/node_params.hpp"
#include "transport/curve_keys.hpp"

#ifdef TAGFLOW_NODE_COMMAND_TORCH
#include "cli/torch_commands.hpp"
#else
#include "cli/commands.hpp"
#endif

namespace tagflow::cli {
namespace {

struct NodeOptions {
  std::string config;
  std::string name;
  std::string mode;
  std::string result;
  std::string run_keys;
  std::string checkpoints;
  std::string trace;  // --trace DIR
  std::string resume;
  bool peers_restart = false;
  bool join = false;
  bool quiet = false;
};

[[noreturn]] void fail(const NodeOptions& o, const std::string& message, int code) {
  fail_command("node " + o.name, message, code);
}

/// Writes the process result JSON to --result, when given.
void write_result(const NodeOptions& o, const hosts::ProcessResult& result) {
  if (o.result.empty()) return;
  try {
    write_file_atomically(o.result, result.to_json() + "\n");
  } catch (const AtomicFileError& e) {
    fail(o, std::string("cannot write the result: ") + e.what(), kExitFailed);
  }
}

/// The replicas of `plan` as CAF actors (actors/README.md).
void run_actor_node(const NodeOptions& o, const cluster::ClusterConfig& config,
                    const cluster::ProcessPlan& plan) {
  hosts::ActorProcessOptions actor_options;
  actor_options.join = o.join;
  actor_options.quiet = o.quiet;
  actor_options.checkpoints = o.checkpoints;
  actor_options.resume = o.resume;
  actor_options.peers_restart = o.peers_restart;
  actor_options.trace_dir = o.trace;
  hosts::ProcessResult result;
  try {
    result = hosts::run_actor_process(config, plan, actor_options);
  } catch (const cluster::ConfigError& e) {
    fail(o, e.what(), kExitBadFile);
  } catch (const nodes::ParamError& e) {  // a policy's TorchScript file: FILE:LINE: KEY
    fail(o, e.in_file(o.config), kExitBadFile);
  } catch (const std::invalid_argument& e) {
    fail(o, e.what(), kExitBadFile);
  } catch (const actors::ActorCredentialError& e) {  // a certificate --run-keys or keys_dir lacks
    fail(o, e.what(), kExitBadFile);
  } catch (const std::exception& e) {
    fail(o, e.what(), kExitFailed);
  }
  write_result(o, result);
}

/// The replicas of `plan` as federates of the coordinator (federation/PROTOCOL.md).
void run_reactor_node(const NodeOptions& o, const cluster::ClusterConfig& config,
                      const cluster::ProcessPlan& plan) {
  hosts::FederatedProcessOptions options;
  options.checkpoints = o.checkpoints;
  options.resume = o.resume;
  options.trace_dir = o.trace;
  options.warn = [name = o.name](const std::string& line) {
    std::cerr << "tagflow node " + name + ": " + line + "\n";
  };
  if (!o.quiet) options.log = options.warn;
  hosts::ProcessResult result;
  try {
    result = hosts::run_federated_process(config, plan, options);
  } catch (const cluster::ConfigError& e) {
    fail(o, e.what(), kExitBadFile);
  } catch (const nodes::ParamError& e) {  // a policy's TorchScript file: FILE:LINE: KEY
    fail(o, e.in_file(o.config), kExitBadFile);
  } catch (const std::invalid_argument& e) {  // an unknown env, ...
    fail(o, e.what(), kExitBadFile);
  } catch (const coordinator::FederateSetupError& e) {  // its own, not the federation's
    fail(o, e.what(), kExitFailed);
  } catch (const coordinator::MessageCapError& e) {  // the file's: a restart would fail alike
    fail(o, std::string(e.what()) + "; " + nodes::message_cap_advice(e.port()), kExitBadFile);
  } catch (const coordinator::FederationError& e) {
    fail(o, e.what(), kExitFederation);
  } catch (const coordinator::FederationConfigError& e) {
    fail(o, e.what(), kExitBadFile);
  } catch (const transport::CurveKeyError& e) {  // a key file --run-keys or keys_dir lacks
    fail(o, e.what(), kExitBadFile);
  } catch (const std::exception& e) {
    fail(o, e.what(), kExitFailed);
  }
  write_result(o, result);
  if (!o.quiet) {
    std::cerr << "tagflow node " << o.name << ": stopped ("
              << (result.stop_reason.empty() ? "by another process" : result.stop_reason)
              << ") after " << result.seconds << " s" << std::endl;
  }
}

void run_node(const NodeOptions& o) {
  cluster::ClusterConfig config;
  try {
    config = cluster::load_cluster_config(o.config);
    if (o.mode == "actor") config.mode = cluster::Mode::actor;
    if (o.mode == "reactor") config.mode = cluster::Mode::reactor;
    // Every node's params, as `tagflow up` and `tagflow doctor` check them: FILE:LINE: KEY.
    hosts::check_replica_params(config);
  } catch (const cluster::ConfigError& e) {
    fail(o, e.what(), kExitBadFile);
  }
  if (!o.run_keys.empty()) cluster::use_run_keys(config, o.run_keys);
  if (o.join && config.mode != cluster::Mode::actor) {
    fail(o,
         "--join is for actor mode only: " + o.config +
             " runs in reactor mode (add --mode actor, or write mode: actor in the file)",
         kExitBadFile);
  }
  if (o.peers_restart && config.mode != cluster::Mode::actor) {
    fail(o,
         "--peers-restart is for actor mode only (a reactor-mode run restarts whole, from a "
         "checkpoint): " +
             o.config + " runs in reactor mode",
         kExitBadFile);
  }
  const std::vector<cluster::ProcessPlan> plans = cluster::plan_processes(config);
  const cluster::ProcessPlan* plan = cluster::find_process(plans, o.name);
  cluster::ProcessPlan joining{o.name, "", {o.name}, false};  // --join: a sampler GROUP-K
  if (plan == nullptr && o.join && config.mode == cluster::Mode::actor) plan = &joining;
  if (plan == nullptr) {
    std::string known;
    for (const auto& p : plans) known += (known.empty() ? "" : ", ") + p.name;
    fail(o, "no process '" + o.name + "' in " + o.config + " (processes: " + known + ")",
         kExitBadFile);
  }
  // A joining process is a sampler: replicas of other kinds are looked up by name and linked when
  // the cluster starts, and cannot come later.
  if (o.join) {
    for (const std::string& replica : plan->replicas) {
      const cluster::NodeConfig* group = cluster::find_replica(config, replica).first;
      if (group != nullptr && !group->kind->transient) {
        fail(o,
             "--join starts a sampler (a replica of a transient kind): " + replica + " is a " +
                 group->kind->name + " of " + o.config,
             kExitBadFile);
      }
    }
  }
  if (config.mode == cluster::Mode::actor) {
    run_actor_node(o, config, *plan);
    return;
  }
  run_reactor_node(o, config, *plan);
}

}  // namespace

#ifndef TAGFLOW_NODE_COMMAND_TORCH
bool node_needs_torch(int argc, char** argv) {
  std::string config, name;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--config" && has_value)
      config = argv[++i];
    else if (arg.rfind("--config=", 0) == 0)
      config = arg.substr(9);
    else if (arg == "--name" && has_value)
      name = argv[++i];
    else if (arg.rfind("--name=", 0) == 0)
      name = arg.substr(7);
  }
  if (config.empty() || name.empty()) return false;
  try {
    const auto plans = cluster::plan_processes(cluster::load_cluster_config(config));
    const cluster::ProcessPlan* plan = cluster::find_process(plans, name);
    return plan != nullptr && plan->needs_torch;
  } catch (const std::exception&) {
    return false;
  }
}
#endif

void add_node_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "node",
      "Run one process of a cluster file (its replicas, as federates) until the cluster stops");
  auto o = std::make_shared<NodeOptions>();
  command->add_option("--config", o->config, "Cluster YAML file")->required();
  command->add_option("--name", o->name, "Process name (a `process:` value or a replica name)")
      ->required();
  command->add_option("--mode", o->mode, "Override the file's mode")
      ->check(CLI::IsMember({"reactor", "actor"}));
  command->add_option("--result", o->result, "Write the process result JSON here at a normal end");
  command->add_option("--run-keys", o->run_keys,
                      "The keys `tagflow up` minted for this run: CURVE pairs, and TLS "
                      "certificates under actor/ for actor mode (docs/ARCHITECTURE.md)");
  command->add_option("--checkpoints", o->checkpoints,
                      "Write this process's checkpoint parts under this directory (a file with "
                      "checkpoint:; actor mode: each replica's own, every checkpoint.every)");
  command->add_option("--resume", o->resume,
                      "Resume from the checkpoint in this directory (CHECKPOINTS/<time_ns>; actor "
                      "mode: each replica from its own in CHECKPOINTS)");
  command->add_option("--trace", o->trace, "Record the run into DIR (tracing/README.md)");
  command->add_flag("--peers-restart", o->peers_restart,
                    "Actor mode: a dead replay, learner or inference process is restarted by the "
                    "launcher: wait for it instead of ending the run");
  command->add_flag("--join", o->join, "Join a running cluster (actor mode)");
  command->add_flag("--quiet", o->quiet, "Print errors only");
  command->callback([o] { run_node(*o); });
}

}  // namespace tagflow::cli
