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

namespace {

/// This process's executable as a path, or "" when /proc cannot say. A binary replaced while it
/// runs (a rebuild, an upgrade) reads as "PATH (deleted)": the processes a launcher starts or
/// restarts later run the file now at PATH.
std::string self_path() {
  std::error_code error;
  std::string self = std::filesystem::read_symlink("/proc/self/exe", error).string();
  if (error) return "";
  const std::string deleted = " (deleted)";
  if (self.size() > deleted.size() &&
      self.compare(self.size() - deleted.size(), deleted.size(), deleted) == 0) {
    self.resize(self.size() - deleted.size());
  }
  return self;
}

}  // namespace

std::string own_executable() {
  const std::string self = self_path();
  return self.empty() ? std::string("tagflow") : self;
}

std::string torch_executable_path() {
  if (const char* override_path = std::getenv("TAGFLOW_TORCH")) return override_path;
  const std::string self = self_path();
  if (self.empty()) return "tagflow-torch";
  return (std::filesystem::path(self).parent_path() / "tagflow-torch").string();
}

int exec_torch_command(int argc, char** argv) {
  const std::string path = torch_executable_path();
  ::setenv("TAGFLOW_INVOKED_AS", "tagflow", 1);  // its help says `tagflow COMMAND`
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
