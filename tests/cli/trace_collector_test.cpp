#include "cli/launch/trace_collector.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "nodes/cluster/cluster_config.hpp"

namespace tagflow::cli {
namespace {

namespace fs = std::filesystem;

/// Samplers on host a, the replay and the coordinator on host b; digests on.
cluster::ClusterConfig two_hosts(const fs::path& dir) {
  const fs::path file = dir / "two.yaml";
  std::ofstream(file) << "cluster: two\nmode: reactor\n"
                         "hosts:\n  a: {address: 10.0.0.1}\n  b: {address: 10.0.0.2}\n"
                         "coordinator: {host: b, port: 7600}\n"
                         "nodes:\n"
                         "  sampler: {kind: sampler, host: a, replicas: 2, data_port: 7610,\n"
                         "            params: {env: CartPole-v1, policy: local}}\n"
                         "  replay: {kind: replay, host: b, data_port: 7620}\n"
                         "connections:\n  - {from: sampler.transitions, to: replay.transitions}\n"
                         "stop: {env_steps: 100}\n"
                         "trace: {digests: true}\n";
  return cluster::load_cluster_config(file.string());
}

coordinator::ControlMessage piece(const std::string& name, std::uint64_t offset,
                                  std::uint64_t total, std::string bytes) {
  coordinator::ControlMessage m;
  m.type = coordinator::ControlType::kTracePart;
  m.process = name;
  m.offset = offset;
  m.total = total;
  m.text = std::move(bytes);
  return m;
}

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class TraceCollectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("trace_collector_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  fs::path dir_;
};

TEST_F(TraceCollectorTest, StoresTheOtherHostsFilesPieceByPieceAndKnowsWhatIsMissing) {
  TraceCollector collector(two_hosts(dir_), dir_.string());
  // Each sampler is its own process: its trace and its value logs, none of the replay's.
  EXPECT_EQ(collector.missing(),
            (std::vector<std::string>{"sampler-0.trace.json", "sampler-0.values.bin",
                                      "sampler-0.values.tsv", "sampler-1.trace.json",
                                      "sampler-1.values.bin", "sampler-1.values.tsv"}));
  auto r = collector.receive("sampler-0", piece("sampler-0.trace.json", 0, 6, "abc"));
  EXPECT_TRUE(r.stored) << r.text;
  EXPECT_EQ(r.stored_bytes, 3U);
  EXPECT_FALSE(fs::exists(dir_ / "trace" / "sampler-0.trace.json"));  // not whole yet
  // The same piece again (its answer was lost): answered, not written twice.
  r = collector.receive("sampler-0", piece("sampler-0.trace.json", 0, 6, "abc"));
  EXPECT_TRUE(r.stored);
  EXPECT_EQ(r.stored_bytes, 3U);
  r = collector.receive("sampler-0", piece("sampler-0.trace.json", 3, 6, "def"));
  EXPECT_TRUE(r.stored);
  EXPECT_EQ(read(dir_ / "trace" / "sampler-0.trace.json"), "abcdef");
  // An empty file is one piece of no bytes.
  EXPECT_TRUE(collector.receive("sampler-0", piece("sampler-0.values.bin", 0, 0, "")).stored);
  EXPECT_TRUE(fs::exists(dir_ / "trace" / "sampler-0.values.bin"));
  EXPECT_EQ(collector.missing().size(), 4U);
  EXPECT_FALSE(collector.complete());
}

TEST_F(TraceCollectorTest, RefusesWhatIsNotAnotherHostsFileOrComesOutOfOrder) {
  TraceCollector collector(two_hosts(dir_), dir_.string());
  const auto refused = [&](const std::string& federate, const coordinator::ControlMessage& m,
                           const std::string& why) {
    const coordinator::TraceReceipt r = collector.receive(federate, m);
    EXPECT_FALSE(r.stored);
    EXPECT_NE(r.text.find(why), std::string::npos) << r.text;
  };
  refused("replay", piece("replay.trace.json", 0, 1, "x"),
          "no traced process that runs away from the coordinator");
  refused("sampler-1", piece("../evil.trace.json", 0, 1, "x"), "no traced process");
  refused("sampler-1", piece("sampler-0.trace.json", 0, 1, "x"), "key of 'sampler-1'");
  refused("sampler-0", piece("sampler-0.trace.json", 4, 10, "x"), "expected the piece at offset 0");
  refused("sampler-0", piece("sampler-0.trace.json", 0, 2, "xyz"), "ends past the file's size");
  refused("sampler-0", piece("sampler-0.trace.json", 0, kMaxTraceFileBytes + 1, "x"),
          "over the limit");
  ASSERT_TRUE(collector.receive("sampler-0", piece("sampler-0.trace.json", 0, 4, "ab")).stored);
  refused("sampler-0", piece("sampler-0.trace.json", 2, 5, "cd"), "size changed from 4 to 5");
}

}  // namespace
}  // namespace tagflow::cli
