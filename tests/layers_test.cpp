// The layering rules of the tree (docs/ARCHITECTURE.md, Layers), checked on every source file: a
// includes only from the folders below it. Each rule names what a folder may use; an include of
// anything else — upward (monitoring/ → nodes/) or sideways (actors/ → coordinator/) — fails here
// with the file, the line and the rule it breaks.
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace {

namespace fs = std::filesystem;

// Bottom up. A folder may use itself and the folders listed.
const std::map<std::string, std::set<std::string>>& allowed() {
  static const std::map<std::string, std::set<std::string>> rules = {
      {"common", {}},
      {"rl", {"common"}},
      {"reactors", {"common"}},
      {"transport", {"common"}},
      {"monitoring", {"common", "tagflow"}},  // tagflow/build_info.hpp is generated
      {"federation", {"common", "transport", "monitoring"}},
      {"coordinator", {"common", "transport", "monitoring", "federation"}},
      {"federate", {"common", "reactors", "transport", "monitoring", "federation"}},
      {"actors", {"common", "transport", "monitoring"}},
      {"nodes",
       {"common", "rl", "reactors", "transport", "monitoring", "federation", "coordinator",
        "federate", "actors"}},
      {"tracing",
       {"common", "rl", "reactors", "transport", "monitoring", "federation", "coordinator",
        "federate", "actors", "nodes"}},
      {"hosts",
       {"common", "rl", "reactors", "transport", "monitoring", "federation", "coordinator",
        "federate", "actors", "nodes", "tracing"}},
      {"bench",
       {"common", "rl", "reactors", "transport", "monitoring", "federation", "coordinator",
        "federate", "actors", "nodes", "tracing", "hosts", "clients"}},
      {"cli",
       {"common", "rl", "reactors", "transport", "monitoring", "federation", "coordinator",
        "federate", "actors", "nodes", "tracing", "hosts", "bench", "tagflow"}},
      // Clients of outside programs use the documented protocols only, no tagflow code.
      {"clients", {}},
      // libFuzzer targets for the decoders of the layers below (preset `fuzz`).
      {"fuzz",
       {"common", "rl", "reactors", "transport", "monitoring", "federation", "coordinator",
        "federate", "nodes"}},
  };
  return rules;
}

struct Violation {
  std::string where;
  std::string include;
};

std::vector<Violation> violations_in(const fs::path& root, const std::string& folder) {
  const std::set<std::string>& may_use = allowed().at(folder);
  const std::regex include_line(R"re(^\s*#\s*include\s+"([^"/]+)/[^"]*")re");
  std::vector<Violation> found;
  for (const auto& entry : fs::recursive_directory_iterator(root / folder)) {
    const std::string ext = entry.path().extension().string();
    if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".hpp")) continue;
    std::ifstream in(entry.path());
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
      std::smatch m;
      if (!std::regex_search(line, m, include_line)) continue;
      const std::string used = m[1];
      if (used == folder || may_use.count(used) != 0) continue;
      found.push_back(
          {fs::relative(entry.path(), root).string() + ":" + std::to_string(number), m[0].str()});
    }
  }
  return found;
}

TEST(Layers, EveryIncludeRunsDownward) {
  const fs::path root(TAGFLOW_SOURCE_DIR);
  std::size_t folders = 0;
  for (const auto& [folder, may_use] : allowed()) {
    ASSERT_TRUE(fs::is_directory(root / folder)) << folder << " is in the rules but not the tree";
    ++folders;
    for (const Violation& v : violations_in(root, folder)) {
      ADD_FAILURE() << v.where << ": " << v.include << " — " << folder << "/ may not use that";
    }
  }
  EXPECT_EQ(folders, allowed().size());
}

TEST(Layers, EverySourceFolderHasARule) {
  const fs::path root(TAGFLOW_SOURCE_DIR);
  const std::set<std::string> not_sources = {"tests", "configs", "scripts",
                                             "cmake", "build",   "runs"};
  for (const auto& entry : fs::directory_iterator(root)) {
    if (!entry.is_directory()) continue;
    const std::string name = entry.path().filename().string();
    if (name.front() == '.' || not_sources.count(name) != 0) continue;
    bool has_sources = false;
    for (const auto& f : fs::recursive_directory_iterator(entry.path())) {
      const std::string ext = f.path().extension().string();
      has_sources = has_sources || ext == ".cpp" || ext == ".hpp";
    }
    if (has_sources) {
      EXPECT_EQ(allowed().count(name), 1U) << name << "/ has no layering rule";
    }
  }
}

TEST(Layers, TheCheckFindsAnUpwardInclude) {
  // The check itself: a file in monitoring/ that includes nodes/ is reported.
  const fs::path root = fs::path(::testing::TempDir()) / "layers_probe";
  fs::remove_all(root);
  fs::create_directories(root / "monitoring");
  std::ofstream(root / "monitoring" / "bad.cpp")
      << "#include \"monitoring/ok.hpp\"\n#include \"nodes/cluster/cluster_config.hpp\"\n";
  const std::vector<Violation> found = violations_in(root, "monitoring");
  ASSERT_EQ(found.size(), 1U);
  EXPECT_EQ(found[0].where, "monitoring/bad.cpp:2");
  fs::remove_all(root);
}

}  // namespace
