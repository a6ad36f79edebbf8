#include "cli/process_numerics.hpp"

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

#include <yaml-cpp/yaml.h>

#include "nodes/cluster/yaml_reader.hpp"

namespace tagflow::cli {
namespace {

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// The `numerics:` key of a cluster file, if it can be read and is valid.
std::optional<numerics::Mode> numerics_of_file(const std::string& path) {
  // Only what the cluster parser would read: a pipe would block here, a huge file be read whole.
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec) ||
      std::filesystem::file_size(path, ec) > cluster::kMaxClusterFileBytes || ec) {
    return std::nullopt;
  }
  try {
    YAML::Node root = YAML::LoadFile(path);
    cluster::resolve_merge_keys(root, path);  // a top-level `<<:` may bring `numerics:`
    if (!root.IsMap() || !root["numerics"] || !root["numerics"].IsScalar()) return std::nullopt;
    return numerics::parse_mode(root["numerics"].as<std::string>());
  } catch (const std::exception&) {
    return std::nullopt;  // the cluster parser reports it, with file and line
  }
}

}  // namespace

numerics::Mode numerics_of_command(int argc, char** argv) {
  // Options whose value is a path other than the cluster file's (outputs, directories). Not
  // --trace: `tagflow up --trace FILE` has it as a flag.
  static const char* const kOtherPaths[] = {
      "--summary",     "--json",         "--out",   "-o",         "--log-dir",
      "--resume",      "--result",       "--stats", "--run-keys", "--checkpoints",
      "--save-policy", "--save-weights", "--svg"};
  const auto other_path = [](const std::string& option) {
    for (const char* o : kOtherPaths) {
      if (option == o) return true;
    }
    return false;
  };
  std::string file;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--numerics" && i + 1 < argc) {
      if (auto mode = numerics::parse_mode(argv[i + 1])) return *mode;
    }
    if (arg.rfind("--numerics=", 0) == 0) {
      if (auto mode = numerics::parse_mode(arg.substr(11))) return *mode;
    }
    if (!file.empty()) continue;
    if (arg == "--config" && i + 1 < argc) {  // the file, whatever its name
      file = argv[++i];
    } else if (arg.rfind("--config=", 0) == 0) {
      file = arg.substr(9);
    } else if (std::error_code ec;  // a name too long or a link loop is no file, not an error
               !(i > 1 && other_path(argv[i - 1])) && arg.rfind('-', 0) != 0 &&
               (ends_with(arg, ".yaml") || ends_with(arg, ".yml") ||
                std::filesystem::is_regular_file(arg, ec))) {
      file = arg;  // a positional cluster file (tagflow up FILE)
    }
  }
  if (!file.empty()) {
    if (auto mode = numerics_of_file(file)) return *mode;
    return numerics::Mode::portable;
  }
  return numerics::current_mode();
}

void pin_process_numerics(int argc, char** argv) {
  const numerics::Mode mode = numerics_of_command(argc, argv);
  if (numerics::environment_matches(mode)) return;
  const bool first = std::getenv(numerics::kMarker) == nullptr;
  const std::string warning = numerics::unportable_cpu_line(numerics::this_cpu());
  if (first && mode == numerics::Mode::portable && !warning.empty()) {
    std::cerr << "tagflow: " << warning << "\n";
  }
  numerics::pin_or_reexec(mode, argv);
}

}  // namespace tagflow::cli
