// Test helper: run a shell command, capture what it prints and how it exited.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace tagflow::testing {

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout, plus stderr when the command redirects it (2>&1)
};

/// Runs `command` through /bin/sh and waits for it. exit_code is -1 if it did not exit normally.
inline CommandResult run_command(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) {
    result.output.append(buffer.data(), n);
  }
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

/// Path of a tagflow executable in this build ("tagflow", "tagflow-torch").
inline std::string tagflow_binary(const std::string& name = "tagflow") {
  return std::string(TAGFLOW_BIN_DIR) + "/" + name;
}

}  // namespace tagflow::testing
