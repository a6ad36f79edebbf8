#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/doctor.hpp"

namespace tagflow::cli {

void add_doctor_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "doctor",
      "Check this machine: CAF, ZeroMQ (+CURVE), MessagePack, LibTorch and its BLAS, "
      "prometheus-cpp, cores, and whether the cluster file's ports are free. Exits non-zero when "
      "a required piece is missing.");
  auto options = std::make_shared<DoctorOptions>();
  auto json = std::make_shared<bool>(false);
  command->add_option("--config", options->config_path, "Cluster file whose ports are checked")
      ->default_str("configs/local.yaml");
  command
      ->add_option("--host", options->host,
                   "The file's host this machine plays, as `tagflow up --host` (a multi-host "
                   "file's ports are checked where that host listens)")
      ->check(kNotEmpty);
  command->add_flag("--json", *json, "Print the report as JSON");
  command->callback([options, json] {
    if (options->config_path.empty()) options->config_path = default_config_path();
    options->torch_probe = torch_executable_path();
    const std::vector<Check> checks = run_doctor(*options);
    std::cout << (*json ? render_doctor_json(checks) : render_doctor_table(checks));
    if (!doctor_passed(checks)) throw CLI::RuntimeError(kExitFailed);
  });
}

}  // namespace tagflow::cli
