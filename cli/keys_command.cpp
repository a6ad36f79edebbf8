// `tagflow keys generate DIR [--name NAME]...`: writes CURVE key pairs (transport/WIRE.md §5).
#include <iostream>
#include <memory>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "coordinator/federation_spec.hpp"
#include "transport/curve_keys.hpp"

namespace tagflow::cli {

void add_keys_command(CLI::App& app) {
  auto* keys = app.add_subcommand("keys", "CURVE keys for encrypted federations");
  keys->require_subcommand(1);
  auto* generate = keys->add_subcommand(
      "generate",
      "Write NAME.pub and NAME.key (mode 0600) into DIR for the coordinator and every federate");
  auto dir = std::make_shared<std::string>();
  auto names = std::make_shared<std::vector<std::string>>();
  auto config = std::make_shared<std::string>();
  generate->add_option("dir", *dir, "Directory to write the keys into")->required();
  generate->add_option("--name", *names, "Key pair names (repeatable)");
  generate->add_option("--config", *config,
                       "Cluster file: one pair per federate of its federation section");
  generate->add_flag("--force", "Overwrite existing key files");
  generate->callback([dir, names, config, generate] {
    std::vector<std::string> wanted = *names;
    try {
      if (!config->empty()) {
        for (const auto& federate : coordinator::load_federation_spec(*config).federates) {
          wanted.push_back(federate.id);
        }
      }
      if (wanted.empty() || !config->empty()) wanted.insert(wanted.begin(), "coordinator");
      const bool force = generate->count("--force") > 0;
      for (const std::string& name : wanted) {
        const std::filesystem::path secret = std::filesystem::path(*dir) / (name + ".key");
        if (!force && std::filesystem::exists(secret)) {
          std::cerr << "tagflow keys: " << secret.string()
                    << " exists; pass --force to overwrite it\n";
          throw CLI::RuntimeError(1);
        }
        transport::write_key_pair(*dir, name, transport::generate_curve_key_pair());
        std::cout << "wrote " << (std::filesystem::path(*dir) / (name + ".pub")).string() << " and "
                  << secret.string() << "\n";
      }
    } catch (const transport::CurveKeyError& e) {
      std::cerr << "tagflow keys: " << e.what() << "\n";
      throw CLI::RuntimeError(1);
    } catch (const coordinator::FederationConfigError& e) {
      std::cerr << "tagflow keys: " << e.what() << "\n";
      throw CLI::RuntimeError(2);
    }
  });
}

}  // namespace tagflow::cli
