// `tagflow keys generate DIR --config FILE` with a cluster file (one pair per federate of each
// process, plus the coordinator) and with a bare federation file; run through the command's own
// CLI11 definition.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <CLI/CLI.hpp>

#include "actors/actor_credentials.hpp"
#include "cli/commands.hpp"
#include "nodes/cluster/cluster_config.hpp"
#include "nodes/cluster/federation_plan.hpp"
#include "transport/curve_keys.hpp"

namespace tagflow::cli {
namespace {

namespace fs = std::filesystem;

struct Result {
  int exit_code = 0;
  std::string out;
  std::string err;
};

Result keys(std::vector<std::string> args) {
  CLI::App app("tagflow");
  add_keys_command(app);
  args.insert(args.begin(), {"tagflow", "keys", "generate"});
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  Result r;
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    r.exit_code = e.get_exit_code();
  }
  r.out = ::testing::internal::GetCapturedStdout();
  r.err = ::testing::internal::GetCapturedStderr();
  return r;
}

class KeysGenerate : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tagflow-keys-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }

  fs::path dir_;
};

// configs/two-host.yaml with replay and learner grouped into one process, `trainer`.
std::string grouped_two_host() {
  std::ifstream in(std::string(TAGFLOW_SOURCE_DIR) + "/configs/two-host.yaml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const std::string kind : {"    kind: replay\n", "    kind: learner\n"}) {
    const auto at = text.find(kind);
    EXPECT_NE(at, std::string::npos) << "configs/two-host.yaml no longer has " << kind;
    if (at != std::string::npos) text.insert(at + kind.size(), "    process: trainer\n");
  }
  return text;
}

TEST_F(KeysGenerate, AClusterFileGetsAPairForEveryFederateItsProcessesRunAndTheCoordinator) {
  const std::string file = write("two-host.yaml", grouped_two_host());
  const std::string out = (dir_ / "keys").string();
  const Result r = keys({out, "--config", file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Exactly the keys the federation of this file reads: every federate's and the coordinator's.
  const auto spec = cluster::federation_spec(cluster::load_cluster_config(file));
  std::vector<std::string> expected{"coordinator"};
  for (const auto& federate : spec.federates) expected.push_back(federate.id);
  EXPECT_EQ(expected.size(), 6U);  // coordinator, sampler-0, sampler-1, inference, replay, learner
  for (const std::string& name : expected) {
    const transport::CurveKeyPair pair = transport::read_key_pair(out, name);
    EXPECT_TRUE(transport::is_valid_z85_key(pair.secret_key)) << name;
  }
  std::size_t files = 0;
  for (const auto& entry : fs::directory_iterator(out)) files += entry.is_regular_file() ? 1 : 0;
  EXPECT_EQ(files, 2 * expected.size());
  // Each line says which process and host needs the secret key.
  EXPECT_NE(r.out.find("learner.key (process trainer on host b)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sampler-1.key (process sampler-1 on host a)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("coordinator.key (host b)"), std::string::npos) << r.out;
  // Actor mode's TLS credentials: one CA, a certificate per process (trainer holds replay and
  // learner) and one for joining samplers.
  for (const char* process : {"sampler-0", "sampler-1", "trainer", "join"}) {
    const actors::ActorCredentials c = actors::actor_credentials(out, process);
    EXPECT_EQ(fs::status(c.key_file).permissions(), fs::perms::owner_read | fs::perms::owner_write)
        << process;
  }
  EXPECT_FALSE(fs::exists(fs::path(out) / "actor" / "learner.crt"));  // per process, not replica
}

TEST_F(KeysGenerate, ABareFederationFileStillWorks) {
  const std::string file = write("federation.yaml",
                                 "federation:\n  federates:\n"
                                 "    a: {downstreams: [b]}\n    b: {upstreams: [a]}\n");
  const std::string out = (dir_ / "keys").string();
  const Result r = keys({out, "--config", file, "--name", "extra"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* name : {"coordinator", "a", "b", "extra"}) {
    EXPECT_TRUE(transport::is_valid_z85_key(transport::read_key_pair(out, name).secret_key))
        << name;
  }
}

TEST_F(KeysGenerate, ABadClusterFileExitsTwoNamingTheKey) {
  std::string text = grouped_two_host();
  text.replace(text.find("replicas: 2"), 11, "replicas: two");
  const std::string file = write("bad.yaml", text);
  const Result r = keys({(dir_ / "keys").string(), "--config", file});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bad.yaml"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("replicas"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "keys" / "coordinator.key"));  // nothing written
}

// A node param `tagflow up` would refuse is refused here too, before any key is written.
TEST_F(KeysGenerate, ABadNodeParamExitsTwoNamingItsLine) {
  std::string text = grouped_two_host();
  const std::size_t at = text.find("capacity: 50000");
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, 15, "capacity: -5");
  const std::string file = write("bad-param.yaml", text);
  const Result r = keys({(dir_ / "keys").string(), "--config", file});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("nodes.replay.params.capacity"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "keys" / "coordinator.key"));
}

TEST_F(KeysGenerate, ExistingKeysNeedForce) {
  const std::string file = write("two-host.yaml", grouped_two_host());
  const std::string out = (dir_ / "keys").string();
  ASSERT_EQ(keys({out, "--config", file}).exit_code, 0);
  const std::string before = transport::read_key_pair(out, "replay").secret_key;
  const Result again = keys({out, "--config", file});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.err.find("--force"), std::string::npos) << again.err;
  EXPECT_EQ(transport::read_key_pair(out, "replay").secret_key, before);
  ASSERT_EQ(keys({out, "--config", file, "--force"}).exit_code, 0);
  EXPECT_NE(transport::read_key_pair(out, "replay").secret_key, before);
}

TEST_F(KeysGenerate, OneExistingKeyAmongManyWritesNothing) {
  const std::string out = (dir_ / "keys").string();
  ASSERT_EQ(keys({out, "--name", "b"}).exit_code, 0);  // b.key exists, a and c do not
  const std::string before = transport::read_key_pair(out, "b").secret_key;
  const Result again = keys({out, "--name", "a", "--name", "b", "--name", "c"});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.err.find("b.key exists"), std::string::npos) << again.err;
  EXPECT_NE(again.err.find("nothing was written"), std::string::npos) << again.err;
  EXPECT_FALSE(fs::exists(dir_ / "keys" / "a.key"));  // a comes before b: checked, not written
  EXPECT_FALSE(fs::exists(dir_ / "keys" / "c.key"));
  EXPECT_EQ(transport::read_key_pair(out, "b").secret_key, before);
  // A public key alone is a file it would write too.
  ASSERT_TRUE(fs::remove(dir_ / "keys" / "b.key"));
  const Result public_only = keys({out, "--name", "a", "--name", "b"});
  EXPECT_EQ(public_only.exit_code, 1);
  EXPECT_NE(public_only.err.find("b.pub exists"), std::string::npos) << public_only.err;
  EXPECT_FALSE(fs::exists(dir_ / "keys" / "a.key"));
}

// The actor-mode credentials replace DIR/actor whole: an existing one, whatever it holds, is
// refused without --force.
TEST_F(KeysGenerate, AnExistingActorDirectoryNeedsForce) {
  const std::string file = write("two-host.yaml", grouped_two_host());
  const std::string out = (dir_ / "keys").string();
  fs::create_directories(dir_ / "keys" / "actor");
  std::ofstream(dir_ / "keys" / "actor" / "learner.key") << "mine\n";
  const Result r = keys({out, "--config", file});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(out + "/actor/ exists"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "keys" / "coordinator.key"));
  std::ifstream kept(dir_ / "keys" / "actor" / "learner.key");
  std::string line;
  std::getline(kept, line);
  EXPECT_EQ(line, "mine");
}

TEST_F(KeysGenerate, ADirectoryThatCannotBeMadeIsABadArgumentWithTheReason) {
  const std::string file = write("plain-file", "not a directory\n");
  const Result r = keys({file + "/keys", "--name", "a"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(file + "/keys: cannot create the directory: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Not a directory"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

// A name is a file name in DIR: `--name ../x` wrote a secret key outside it, and `--name ''` wrote
// hidden files; both are refused before anything is written.
TEST_F(KeysGenerate, ANameThatIsNoPlainFileNameIsRefused) {
  for (const std::string bad : {"../escaped", "", "a/b", ".hidden"}) {
    const Result r = keys({(dir_ / "keys").string(), "--name", bad});
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_NE(r.err.find("--name '" + bad + "': a key pair's name is 1 to 64 letters"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(r.out, "") << bad;
  }
  EXPECT_FALSE(fs::exists(dir_ / "escaped.key"));
  EXPECT_FALSE(fs::exists(dir_ / "keys"));
  EXPECT_EQ(keys({(dir_ / "keys").string(), "--name", "sampler-2"}).exit_code, 0);
  EXPECT_TRUE(fs::exists(dir_ / "keys" / "sampler-2.key"));
}

}  // namespace
}  // namespace tagflow::cli
