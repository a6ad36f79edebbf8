// Tests of cli/launch/result_collector.hpp: which results the coordinator's host accepts from
// other hosts' launchers (PROTOCOL.md §8), where it writes them, and what it answers.
#include "cli/launch/result_collector.hpp"

#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "nodes/kind/process_result.hpp"
#include "tests/support/launched_processes.hpp"

namespace tagflow::cli {
namespace {

namespace fs = std::filesystem;

// Two samplers on host a (grouped as process `acting`) and a replay on host b, the coordinator's.
cluster::ClusterConfig cluster_of_two_hosts() {
  return cluster::parse_cluster_config(
      "cluster: collector-test\n"
      "hosts:\n  a: {address: 10.1.0.1}\n  b: {address: 10.1.0.2}\n"
      "coordinator: {host: b, port: 7600}\n"
      "nodes:\n"
      "  sampler: {kind: sampler, replicas: 2, host: a, data_port: 7610, process: acting}\n"
      "  replay: {kind: replay, host: b, data_port: 7620}\n"
      "connections:\n  - {from: sampler.transitions, to: replay.transitions}\n"
      "stop: {env_steps: 100}\n",
      "collector-test.yaml");
}

std::string result_json(const std::string& process) {
  hosts::ProcessResult result;
  result.process = process;
  return result.to_json();
}

class ResultCollectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("result_collector_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ResultCollectorTest, StoresAnotherHostsResultAndAnswersWhereTheSummaryIs) {
  ResultCollector collector(cluster_of_two_hosts(), dir_.string());
  EXPECT_EQ(collector.missing(), std::vector<std::string>{"acting"});
  const coordinator::ResultReceipt receipt =
      collector.receive("sampler-1", "acting", result_json("acting"));
  EXPECT_TRUE(receipt.stored) << receipt.text;
  EXPECT_EQ(receipt.text, (dir_ / "summary.json").string());
  EXPECT_EQ(testing::read_text_file(dir_ / "acting.json"), result_json("acting"));
  EXPECT_TRUE(collector.complete());
}

TEST_F(ResultCollectorTest, RefusesWhatItMustNotWriteNamingWhy) {
  ResultCollector collector(cluster_of_two_hosts(), dir_.string());
  // The coordinator's own host writes its results itself; a launcher cannot overwrite them.
  EXPECT_NE(collector.receive("replay", "replay", result_json("replay")).text.find("no process"),
            std::string::npos);
  // Only a replica of the process may send its result.
  EXPECT_NE(collector.receive("replay", "acting", result_json("acting")).text.find("'replay'"),
            std::string::npos);
  // The JSON must be that process's result.
  EXPECT_NE(collector.receive("sampler-0", "acting", result_json("other")).text.find("'other'"),
            std::string::npos);
  EXPECT_FALSE(collector.receive("sampler-0", "acting", "{not json").stored);
  EXPECT_FALSE(fs::exists(dir_ / "acting.json"));
  EXPECT_FALSE(fs::exists(dir_ / "replay.json"));
  EXPECT_FALSE(collector.complete());
}

// One Slurm host of two nodes, the coordinator's: processes are dealt over its nodes in file order
// (sampler-0 and the replay on node 0, beside the coordinator; sampler-1 on node 1), so the
// result of sampler-1 comes from the launcher of node 1, and only that one is taken.
TEST_F(ResultCollectorTest, TakesTheResultsOfTheCoordinatorHostsOtherNodes) {
  const cluster::ClusterConfig config = cluster::parse_cluster_config(
      "cluster: collector-test\n"
      "hosts:\n  all: {slurm: {nodes: 2}}\n"
      "coordinator: {host: all, port: 7600}\n"
      "nodes:\n"
      "  sampler: {kind: sampler, replicas: 2, host: all, data_port: 7610}\n"
      "  replay: {kind: replay, host: all, data_port: 7620}\n"
      "connections:\n  - {from: sampler.transitions, to: replay.transitions}\n"
      "stop: {env_steps: 100}\n",
      "collector-test.yaml");
  ResultCollector collector(config, dir_.string());
  EXPECT_EQ(collector.missing(), std::vector<std::string>{"sampler-1"});
  EXPECT_FALSE(collector.receive("sampler-0", "sampler-0", result_json("sampler-0")).stored);
  const coordinator::ResultReceipt receipt =
      collector.receive("sampler-1", "sampler-1", result_json("sampler-1"));
  EXPECT_TRUE(receipt.stored) << receipt.text;
  EXPECT_TRUE(collector.complete());
}

}  // namespace
}  // namespace tagflow::cli
