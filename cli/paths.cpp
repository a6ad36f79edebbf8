#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <vector>

#include "cli/commands.hpp"
#include "tagflow/build_info.hpp"

namespace tagflow::cli {

std::string own_executable() {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::string("tagflow") : self.string();
}

std::string torch_executable_path() {
  if (const char* override_path = std::getenv("TAGFLOW_TORCH")) return override_path;
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return "tagflow-torch";
  return (self.parent_path() / "tagflow-torch").string();
}

int exec_torch_command(int argc, char** argv) {
  const std::string path = torch_executable_path();
  std::vector<char*> args;
  args.push_back(const_cast<char*>(path.c_str()));
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  ::execv(path.c_str(), args.data());
  std::cerr << "tagflow: cannot run " << path << ": " << std::strerror(errno)
            << " (it holds the LibTorch commands; build the tagflow-torch target)\n";
  return 127;
}

std::string default_config_path() {
  const std::filesystem::path local = "configs/local.yaml";
  if (std::filesystem::exists(local)) return local.string();
  return (std::filesystem::path(build_info::kSourceDir) / local).string();
}

}  // namespace tagflow::cli
