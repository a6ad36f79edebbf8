#include <CLI/CLI.hpp>

#include <iostream>

#include "cli/commands.hpp"
#include "common/atomic_file.hpp"

namespace tagflow::cli {

void fail_command(const std::string& command, const std::string& message, int code) {
  std::cerr << "tagflow " << command << ": " << message << "\n";
  throw CLI::RuntimeError(code);
}

std::string unwritable_output(const std::string& option, const std::string& path) {
  if (path.empty()) return "";
  const std::string why = prepare_output_file(path);
  return why.empty() ? "" : option + " " + path + ": " + why;
}

int parse_error_status(const CLI::App& app, const CLI::ParseError& error) {
  const int status = app.exit(error);
  // A command's own status, and 0 for --help and --version, stand; CLI11's codes for a refused
  // argument (105 a value it does not take, 106 a missing one, 109 one it does not know, ...)
  // are a bad argument, as a bad file is (docs/clusters.md, "Exit codes").
  if (status == kExitOk || dynamic_cast<const CLI::RuntimeError*>(&error) != nullptr) return status;
  return kExitBadFile;
}

}  // namespace tagflow::cli
