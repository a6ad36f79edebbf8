// `tagflow coordinator --config FILE`: runs the federation coordinator (coordinator/PROTOCOL.md)
// until every federate resigned (exit 0) or the run failed (exit 1, naming the federate).
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "coordinator/coordinator.hpp"
#include "transport/curve_keys.hpp"

namespace tagflow::cli {

void add_coordinator_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "coordinator",
      "Run the federation coordinator of a cluster file's `federation:` section (reactor mode)");
  auto config = std::make_shared<std::string>();
  auto endpoint = std::make_shared<std::string>();
  command->add_option("--config", *config, "Cluster YAML file")->required();
  command->add_option(
      "--bind", *endpoint,
      "Endpoint to bind instead of federation.coordinator (e.g. tcp://0.0.0.0:7600)");
  command->callback([config, endpoint] {
    try {
      coordinator::Coordinator coordinator(coordinator::load_federation_spec(*config));
      const std::string bound = coordinator.bind(*endpoint);
      std::cout << "tagflow coordinator: listening on " << bound << std::endl;
      const coordinator::CoordinatorResult result = coordinator.run();
      if (!result.ok) {
        std::cerr << "tagflow coordinator: run failed: " << result.error << "\n";
        throw CLI::RuntimeError(1);
      }
      std::cout << "tagflow coordinator: run finished (" << result.grants_sent << " grants, "
                << result.messages_handled << " messages)" << std::endl;
    } catch (const coordinator::FederationConfigError& e) {
      std::cerr << "tagflow coordinator: " << e.what() << "\n";
      throw CLI::RuntimeError(2);
    } catch (const transport::CurveKeyError& e) {
      std::cerr << "tagflow coordinator: " << e.what() << "\n";
      throw CLI::RuntimeError(2);
    } catch (const zmq::error_t& e) {
      std::cerr << "tagflow coordinator: cannot bind: " << e.what() << "\n";
      throw CLI::RuntimeError(2);
    }
  });
}

}  // namespace tagflow::cli
