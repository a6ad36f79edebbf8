// `tagflow keys generate`: writes loadable key pairs for the coordinator and every federate of a
// cluster file, with private secret keys, and refuses to overwrite them without --force.
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "transport/curve_keys.hpp"

namespace tagflow::coordinator {
namespace {

namespace fs = std::filesystem;

int run(const std::string& arguments) {
  const int status = std::system(
      (std::string(TAGFLOW_BIN_DIR "/tagflow ") + arguments + " >/dev/null 2>&1").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(KeysCommand, GeneratesOnePairPerFederateAndForTheCoordinator) {
  const fs::path dir =
      fs::temp_directory_path() / ("tagflow-keys-cli-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "cluster.yaml") << "federation:\n  federates:\n"
                                         "    a: {downstreams: [b]}\n    b: {upstreams: [a]}\n";
  const std::string keys = (dir / "keys").string();
  ASSERT_EQ(run("keys generate " + keys + " --config " + (dir / "cluster.yaml").string()), 0);
  for (const char* name : {"coordinator", "a", "b"}) {
    const transport::CurveKeyPair pair = transport::read_key_pair(keys, name);
    EXPECT_TRUE(transport::is_valid_z85_key(pair.secret_key)) << name;
    struct stat info {};
    ASSERT_EQ(::stat((fs::path(keys) / (std::string(name) + ".key")).c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 0777, 0600U) << name;
  }
  const std::string before = transport::read_key_pair(keys, "a").secret_key;
  EXPECT_EQ(run("keys generate " + keys + " --name a"), 1);
  EXPECT_EQ(transport::read_key_pair(keys, "a").secret_key, before)
      << "overwritten without --force";
  EXPECT_EQ(run("keys generate " + keys + " --name a --force"), 0);
  EXPECT_NE(transport::read_key_pair(keys, "a").secret_key, before);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tagflow::coordinator
