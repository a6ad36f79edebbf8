// `tagflow keys generate DIR [--config FILE] [--name NAME]...`: writes CURVE key pairs
// (transport/WIRE.md §5).
//
// --config takes a cluster file (configs/README.md) or a bare `federation:` file. For a cluster
// file it writes a pair for the coordinator and one for every federate of every process of the
// cluster (nodes/cluster/process_plan.hpp): in reactor mode each replica of a process is its own
// federate and reads the key named by the replica (sampler-0, replay, ...), so a process that
// groups several replicas needs one pair per replica. For a `federation:` file it writes the
// coordinator's pair and one per federate listed there. --name adds pairs by name (names already
// listed are written once); with neither option it writes the coordinator's pair. For a cluster
// file it also writes the actor-mode TLS credentials into DIR/actor: a CA certificate and a
// certificate + key per process, plus `join` (actors/actor_credentials.hpp). Errors: exit 2
// for a file that does not load or a DIR that cannot be made, 1 for an existing key without
// --force (every file it would write is looked for before any is written) or a write failure.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "actors/actor_credentials.hpp"
#include "cli/commands.hpp"
#include "cli/launch/launch_plan.hpp"
#include "common/log_text.hpp"
#include "federation/federation_spec.hpp"
#include "hosts/replica_params_check.hpp"
#include "nodes/cluster/cluster_config.hpp"
#include "nodes/cluster/cluster_names.hpp"
#include "nodes/cluster/process_plan.hpp"
#include "transport/curve_keys.hpp"

namespace tagflow::cli {
namespace {

/// One key pair to write and, for a cluster file, where its owner runs.
struct KeyOwner {
  std::string name;
  std::string where;  // "process trainer on host b", or empty
};

/// Whether `path` is a bare federation file (a top-level `federation:` and no `nodes:`). A file
/// that is not YAML at all is left to the cluster loader, which names the line.
bool is_federation_file(const std::string& path) {
  try {
    const YAML::Node root = YAML::LoadFile(path);
    return root.IsMap() && root["federation"] && !root["nodes"];
  } catch (const YAML::Exception&) {
    return false;
  }
}

std::vector<KeyOwner> owners_in(const std::string& path, std::vector<std::string>& processes) {
  std::vector<KeyOwner> owners{{"coordinator", ""}};
  if (is_federation_file(path)) {
    for (const auto& federate : coordinator::load_federation_spec(path).federates) {
      owners.push_back({federate.id, ""});
    }
    return owners;
  }
  const cluster::ClusterConfig config = cluster::load_cluster_config(path);
  hosts::check_replica_params(config);  // a file `tagflow up` refuses is refused here too
  processes = actor_credential_names(config);
  owners.front().where = "host " + config.coordinator.host;
  for (const cluster::ProcessPlan& process : cluster::plan_processes(config)) {
    for (const std::string& replica : process.replicas) {
      owners.push_back({replica, "process " + process.name + " on host " + process.host});
    }
  }
  return owners;
}

}  // namespace

void add_keys_command(CLI::App& app) {
  auto* keys = app.add_subcommand("keys", "Keys for closed clusters (CURVE; TLS in actor mode)");
  keys->require_subcommand(1);
  auto* generate = keys->add_subcommand(
      "generate",
      "Write NAME.key (mode 0600) and NAME.pub (0644) into DIR for the coordinator and every "
      "federate");
  auto dir = std::make_shared<std::string>();
  auto names = std::make_shared<std::vector<std::string>>();
  auto config = std::make_shared<std::string>();
  generate->add_option("dir", *dir, "Directory to write the keys into")->required();
  generate->add_option("--name", *names, "Key pair names (repeatable)");
  generate->add_option("--config", *config,
                       "Cluster file (one pair per federate of each of its processes, plus the "
                       "coordinator) or a bare federation file");
  generate->add_flag("--force", "Overwrite existing key files");
  generate->callback([dir, names, config, generate] {
    std::vector<KeyOwner> wanted;
    std::vector<std::string> processes;  // actor-mode credentials (a cluster file only)
    try {
      if (!config->empty()) wanted = owners_in(*config, processes);
      for (const std::string& name : *names) {
        // A name is a file name in DIR, never a path (`--name ../x` wrote outside it).
        if (!cluster::is_safe_cluster_name(name)) {
          fail_command("keys generate",
                       "--name '" + single_line(name) +
                           "': a key pair's name is 1 to 64 letters, digits, '_', '-' and '.', "
                           "starting with a letter or a digit (it names the files in DIR)",
                       kExitBadFile);
        }
        const bool listed = std::any_of(wanted.begin(), wanted.end(),
                                        [&](const KeyOwner& o) { return o.name == name; });
        if (!listed) wanted.push_back({name, ""});
      }
      if (wanted.empty()) wanted.push_back({"coordinator", ""});
      const bool force = generate->count("--force") > 0;
      // Every refusal comes before any key is written: a refused command leaves DIR as it was
      // (made, when it was missing).
      std::error_code made;
      std::filesystem::create_directories(*dir, made);
      if (made) {
        fail_command("keys generate", *dir + ": cannot create the directory: " + made.message(),
                     kExitBadFile);
      }
      if (!force) {
        // Every file it would write: each pair's two files, and the actor-mode directory, which
        // the credentials replace whole.
        std::vector<std::string> existing;
        for (const KeyOwner& owner : wanted) {
          for (const char* suffix : {".key", ".pub"}) {
            const std::filesystem::path file = std::filesystem::path(*dir) / (owner.name + suffix);
            if (std::filesystem::exists(file)) existing.push_back(file.string());
          }
        }
        const std::filesystem::path actor = std::filesystem::path(*dir) / "actor";
        if (!processes.empty() && std::filesystem::exists(actor)) {
          existing.push_back(actor.string() + "/");
        }
        if (!existing.empty()) {
          std::string more;
          if (existing.size() > 1) more = " (and " + std::to_string(existing.size() - 1) + " more)";
          fail_command("keys generate",
                       existing.front() + " exists" + more +
                           "; nothing was written; pass --force to overwrite",
                       kExitFailed);
        }
      }
      for (const KeyOwner& owner : wanted) {
        const std::filesystem::path secret = std::filesystem::path(*dir) / (owner.name + ".key");
        transport::write_key_pair(*dir, owner.name, transport::generate_curve_key_pair());
        std::cout << "wrote " << (std::filesystem::path(*dir) / (owner.name + ".pub")).string()
                  << " and " << secret.string();
        if (!owner.where.empty()) std::cout << " (" << owner.where << ")";
        std::cout << "\n";
      }
      if (!processes.empty()) {
        const std::filesystem::path ca = std::filesystem::path(*dir) / "actor" / "ca.crt";
        actors::mint_actor_credentials(*dir, processes);
        std::cout << "wrote " << ca.string() << " and a TLS certificate and key per process for "
                  << "actor mode (" << processes.size() << ", with join)\n";
      }
    } catch (const actors::ActorCredentialError& e) {
      fail_command("keys generate", e.what(), kExitFailed);
    } catch (const transport::CurveKeyError& e) {
      fail_command("keys generate", e.what(), kExitFailed);
    } catch (const coordinator::FederationConfigError& e) {
      fail_command("keys generate", e.what(), kExitBadFile);
    } catch (const cluster::ConfigError& e) {
      fail_command("keys generate", e.what(), kExitBadFile);
    }
  });
}

}  // namespace tagflow::cli
