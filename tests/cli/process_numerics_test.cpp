// Tests of cli/process_numerics.hpp: which numeric kernels a command line asks for, read before
// anything else runs. The cluster file's `numerics:` is read as the cluster loader reads it, merge
// keys included, so that the kernels a process pins agree with the mode its summary reports.
#include "cli/process_numerics.hpp"

#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace tagflow::cli {
namespace {

/// A file of `text` in the test's temporary directory; its path.
std::string numerics_file(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

/// numerics_of_command() of `tagflow up ARGS...`.
numerics::Mode mode_of(std::vector<std::string> args) {
  args.insert(args.begin(), {"tagflow", "up"});
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  return numerics_of_command(static_cast<int>(argv.size()), argv.data());
}

TEST(ProcessNumerics, TheFilesKeyDecidesAlsoWhenAMergeKeyBringsIt) {
  const std::string plain = numerics_file("numerics_plain.yaml", "cluster: t\nnumerics: native\n");
  EXPECT_EQ(mode_of({plain}), numerics::Mode::native);
  const std::string merged = numerics_file(
      "numerics_merged.yaml", "x-base: &base {numerics: native, seed: 3}\n<<: *base\ncluster: t\n");
  EXPECT_EQ(mode_of({merged}), numerics::Mode::native);
  // The command line wins; a file without the key is portable.
  EXPECT_EQ(mode_of({merged, "--numerics", "portable"}), numerics::Mode::portable);
  EXPECT_EQ(mode_of({numerics_file("numerics_none.yaml", "cluster: t\n")}),
            numerics::Mode::portable);
}

// The cluster file is found by what it is on the command line, not only by its name: `--config`
// takes any name, a positional file any existing one, and an output path is no cluster file.
TEST(ProcessNumerics, TheClusterFileIsFoundWhateverItsNameAndOutputPathsAreNotIt) {
  const std::string conf = numerics_file("numerics_native.conf", "cluster: t\nnumerics: native\n");
  EXPECT_EQ(mode_of({"--config", conf}), numerics::Mode::native);
  EXPECT_EQ(mode_of({conf}), numerics::Mode::native);
  const std::string portable = numerics_file("numerics_summary.yaml", "cluster: t\n");
  EXPECT_EQ(mode_of({"--summary", portable, conf}), numerics::Mode::native);
  EXPECT_EQ(mode_of({"--trace", conf}), numerics::Mode::native);  // a flag of `tagflow up`
}

}  // namespace
}  // namespace tagflow::cli
