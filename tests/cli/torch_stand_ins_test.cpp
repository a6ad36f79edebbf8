// The libraries LibTorch names but never calls are replaced by empty ones in BUILD/lib/tagflow
// (cmake/TagflowTorch.cmake): tagflow-torch loads those stand-ins and none of the real ones, and
// still finds every symbol that anything it loads takes.
#include <gtest/gtest.h>
#include <fstream>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/run_command.hpp"

namespace tagflow::cli {
namespace {

namespace fs = std::filesystem;
using testing::run_command;
using testing::tagflow_binary;

/// BUILD/lib/tagflow, where tagflow-torch's DT_RPATH ($ORIGIN/../lib/tagflow) points.
fs::path stand_in_dir() { return fs::path(TAGFLOW_BIN_DIR).parent_path() / "lib" / "tagflow"; }

std::vector<std::string> stand_ins() {
  std::vector<std::string> names;
  if (!fs::is_directory(stand_in_dir())) return names;
  for (const auto& entry : fs::directory_iterator(stand_in_dir())) {
    names.push_back(entry.path().filename().string());
  }
  return names;
}

TEST(TorchStandIns, EverySymbolOfEveryLoadedLibraryIsFoundAtStart) {
  // LD_BIND_NOW resolves every symbol of every object at load, so a stand-in for a library that
  // something still calls fails here ("undefined symbol") rather than at that call.
  const auto r =
      run_command("LD_BIND_NOW=1 " + tagflow_binary("tagflow-torch") + " --version 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("tagflow-torch "), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("undefined symbol"), std::string::npos) << r.output;
}

/// Why configuring found no stand-ins because its check failed (cmake/TagflowTorch.cmake keeps
/// it in the build's CMakeCache.txt); empty when the check ran, or never ran.
std::string stand_in_check_failure() {
  std::ifstream cache(fs::path(TAGFLOW_BIN_DIR).parent_path() / "CMakeCache.txt");
  const std::string key = "_TAGFLOW_TORCH_UNUSED_FAILURE:INTERNAL=";
  std::string line;
  while (std::getline(cache, line)) {
    if (line.rfind(key, 0) == 0) return line.substr(key.size());
  }
  return "";
}

TEST(TorchStandIns, TagflowTorchLoadsTheStandInsAndNoneOfTheLibrariesTheyReplace) {
  const std::vector<std::string> names = stand_ins();
  if (names.empty()) {
    const std::string failure = stand_in_check_failure();
    ASSERT_EQ(failure, "") << "configuring could not check LibTorch's libraries";
    GTEST_SKIP() << "this LibTorch names no library it never calls";
  }
  // What the loader maps for tagflow-torch, one "NAME => PATH (ADDRESS)" line per object.
  const auto r = run_command("LD_TRACE_LOADED_OBJECTS=1 " + tagflow_binary("tagflow-torch"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string dir = fs::canonical(stand_in_dir()).string();
  for (const std::string& name : names) {
    const auto at = r.output.find("\t" + name + " => ");
    ASSERT_NE(at, std::string::npos) << name << " is not loaded at all:\n" << r.output;
    const std::string line = r.output.substr(at, r.output.find('\n', at) - at);
    const auto path_at = line.find("=> ") + 3;
    const fs::path path = line.substr(path_at, line.find(" (", path_at) - path_at);
    EXPECT_EQ(fs::canonical(path).parent_path().string(), dir) << line;
  }
  // The libraries only they brought in are gone too (OpenCV's Qt, GDAL and codecs).
  EXPECT_EQ(r.output.find("libQt5"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("libgdal"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace tagflow::cli
