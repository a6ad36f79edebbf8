#include <CLI/CLI.hpp>

#include <iostream>

#include "cli/commands.hpp"

namespace tagflow::cli {

void fail_command(const std::string& command, const std::string& message, int code) {
  std::cerr << "tagflow " << command << ": " << message << "\n";
  throw CLI::RuntimeError(code);
}

}  // namespace tagflow::cli
