// Tests of cli/launch/slurm_script.hpp: the batch script of a file whose hosts are Slurm
// resources, and the requests refused with the file's line and key before anything is submitted.
#include "cli/launch/slurm_script.hpp"

#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/launched_processes.hpp"
#include "tests/support/run_command.hpp"

namespace tagflow::cli {
namespace {

std::string slurm_file(const std::string& act) {
  return "cluster: slurm-test\n"
         "hosts:\n"
         "  learn: {slurm: {partition: gpu, nodes: 1, gres: \"gpu:1\", cpus_per_task: 8}}\n"
         "  act: " +
         act +
         "\n"
         "coordinator: {host: learn, port: 7600}\n"
         "nodes:\n"
         "  sampler: {kind: sampler, replicas: 3, host: act, data_port: 7610}\n"
         "  replay: {kind: replay, host: learn, data_port: 7620}\n"
         "connections:\n"
         "  - {from: sampler.transitions, to: replay.transitions}\n"
         "stop: {env_steps: 100}\n";
}

cluster::ClusterConfig parse(const std::string& act) {
  return cluster::parse_cluster_config(slurm_file(act), "slurm-test.yaml");
}

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const cluster::ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(SlurmScript, EveryHostIsOneComponentSeparatedByHetjobThenOneSrunStep) {
  const cluster::ClusterConfig config = parse("{slurm: {partition: cpu, nodes: 3}}");
  const auto components = slurm_components(config);
  ASSERT_EQ(components.size(), 2U);
  EXPECT_EQ(components[0].host, "act");
  EXPECT_EQ(components[1].host, "learn");
  EXPECT_TRUE(components[1].coordinator);
  const std::string script = slurm_batch_script(
      config, components, {"/data/slurm.yaml", "/opt/tagflow", "/data/s.json", {}});
  const auto act = script.find("#SBATCH --partition=cpu");
  const auto hetjob = script.find("#SBATCH hetjob");
  const auto gres = script.find("#SBATCH --gres=gpu:1");
  ASSERT_NE(act, std::string::npos) << script;
  EXPECT_LT(act, hetjob);
  EXPECT_LT(hetjob, gres);
  EXPECT_NE(script.find("#SBATCH --nodes=3\n"), std::string::npos) << script;
  // Once, in the first block: a requeued attempt's output goes after the earlier one's.
  const auto append = script.find("#SBATCH --open-mode=append\n");
  EXPECT_LT(append, act) << script;
  EXPECT_EQ(script.rfind("--open-mode"), append + 8) << script;  // 8: "#SBATCH "
  EXPECT_NE(script.find("#SBATCH --cpus-per-task=8\n"), std::string::npos) << script;
  EXPECT_NE(script.find("'/opt/tagflow' slurm-node '/data/slurm.yaml' --run-dir \"$run_dir\" "
                        "--mint-keys\n"),
            std::string::npos)
      << script;
  // Each component's CPUs asked again for the step (srun does not take sbatch's): act asks for
  // none, learn for 8.
  EXPECT_NE(script.find("srun --het-group=0 --kill-on-bad-exit=1 : --het-group=1 "
                        "--cpus-per-task=8 --kill-on-bad-exit=1 '/opt/tagflow' slurm-node "
                        "'/data/slurm.yaml' --run-dir \"$run_dir\" --summary '/data/s.json'\n"),
            std::string::npos)
      << script;
  EXPECT_NE(script.find("umask 077"), std::string::npos);
}

/// The batch script of `config` (with `resume` as tagflow slurm --resume gives it) run by bash from
/// a submit directory whose path has a space, with srun and tagflow stood in by programs that
/// record their arguments one per line.
class RecordedScript {
 public:
  RecordedScript(const cluster::ClusterConfig& config, const std::vector<std::string>& resume) {
    namespace fs = std::filesystem;
    dir_ = fs::path(::testing::TempDir()) / ("slurm requeue " + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "bin");
    for (const std::string name : {"srun", "tagflow"}) {
      std::ofstream(dir_ / "bin" / name)
          << "#!/bin/sh\n{ echo \"" << name << "\"; for a in \"$@\"; do echo \"  $a\"; done; } >> '"
          << (dir_ / "calls").string() << "'\n";
      fs::permissions(dir_ / "bin" / name, fs::perms::owner_all);
    }
    std::ofstream(dir_ / "job.sh") << slurm_batch_script(
        config, slurm_components(config),
        {"/data/slurm.yaml", (dir_ / "bin" / "tagflow").string(), "", resume});
  }
  ~RecordedScript() { std::filesystem::remove_all(dir_); }
  RecordedScript(const RecordedScript&) = delete;
  RecordedScript& operator=(const RecordedScript&) = delete;

  /// The calls of one run of the script as job 42 with `restarts` in its environment.
  std::string run(const std::string& restarts) const {
    std::filesystem::remove(dir_ / "calls");
    const std::string command = "cd '" + dir_.string() + "' && env -i PATH='" +
                                (dir_ / "bin").string() + ":/usr/bin:/bin' SLURM_SUBMIT_DIR='" +
                                dir_.string() + "' SLURM_JOB_ID=42 " + restarts + " bash job.sh";
    const testing::CommandResult result = testing::run_command(command);
    EXPECT_EQ(result.exit_code, 0) << command << "\n" << result.output;
    return testing::read_text_file(dir_ / "calls");
  }

  /// RUN of job 42 (`suffix`: "-requeueN").
  std::string run_dir(const std::string& suffix = "") const {
    return (dir_ / "runs" / ("slurm-test-42" + suffix)).string();
  }

 private:
  std::filesystem::path dir_;
};

/// The launcher's arguments as the stand-ins record them, one per line.
std::string launcher_call(const std::string& run_dir, const std::vector<std::string>& more) {
  std::string call = "  slurm-node\n  /data/slurm.yaml\n  --run-dir\n  " + run_dir + "\n";
  for (const std::string& argument : more) call += "  " + argument + "\n";
  return call;
}

bool ends_with(const std::string& text, const std::string& end) {
  return text.size() >= end.size() && text.compare(text.size() - end.size(), end.size(), end) == 0;
}

// A requeued job (Slurm runs the script again with the same SLURM_JOB_ID and SLURM_RESTART_COUNT
// N >= 1) of a file without checkpoint: starts over in RUN-requeueN.
TEST(SlurmScript, ARequeuedJobStartsOverInADirectoryOfItsOwn) {
  const RecordedScript script(parse("{slurm: {partition: cpu, nodes: 3}}"), {});
  const std::string first = script.run("");
  const std::string again = script.run("SLURM_RESTART_COUNT=1");
  for (const auto& [calls, run_dir] :
       {std::pair{first, script.run_dir()}, {again, script.run_dir("-requeue1")}}) {
    // The keys minted there, and the step's launchers given it, and nothing to continue.
    EXPECT_NE(calls.find("tagflow\n" + launcher_call(run_dir, {"--mint-keys"})), std::string::npos)
        << calls;
    EXPECT_TRUE(ends_with(calls, launcher_call(run_dir, {}))) << calls;  // srun's, last
    EXPECT_EQ(calls.find("--resume-from"), std::string::npos) << calls;
    EXPECT_TRUE(std::filesystem::is_directory(run_dir)) << run_dir;
  }
}

// With checkpoint:, a requeued job's launchers continue the earlier attempts, newest first, and
// the run `tagflow slurm --resume` named last; the first attempt only that run.
TEST(SlurmScript, ARequeuedJobWithCheckpointsContinuesTheEarlierAttemptsNewestFirst) {
  const cluster::ClusterConfig config = cluster::parse_cluster_config(
      slurm_file("{slurm: {partition: cpu, nodes: 3}}") + "checkpoint: {every: 1s}\n",
      "slurm-test.yaml");
  const std::string earlier = "/data/runs/slurm-test-41";
  const RecordedScript script(config, {earlier + "-requeue1", earlier});
  const std::string first = script.run("");
  EXPECT_TRUE(ends_with(
      first, launcher_call(script.run_dir(),
                           {"--resume-from", earlier + "-requeue1", "--resume-from", earlier})))
      << first;
  const std::string third = script.run("SLURM_RESTART_COUNT=2");
  EXPECT_TRUE(ends_with(third, launcher_call(script.run_dir("-requeue2"),
                                             {"--resume-from", script.run_dir("-requeue1"),
                                              "--resume-from", script.run_dir(), "--resume-from",
                                              earlier + "-requeue1", "--resume-from", earlier})))
      << third;
  EXPECT_NE(third.find("tagflow\n" + launcher_call(script.run_dir("-requeue2"), {"--mint-keys"})),
            std::string::npos)
      << third;
}

TEST(SlurmScript, AHostWithAnAddressIsRefusedWithItsLine) {
  const cluster::ClusterConfig config = parse("{address: 10.0.0.1}");
  EXPECT_EQ(
      error_of([&] { (void)slurm_components(config); }).rfind("slurm-test.yaml:4: hosts.act: ", 0),
      0U);
}

TEST(SlurmScript, RestartsAreAcceptedAcrossNodes) {
  const cluster::ClusterConfig config = cluster::parse_cluster_config(
      slurm_file("{slurm: {nodes: 2}}") + "restart: {max: 2}\n", "slurm-test.yaml");
  EXPECT_EQ(error_of([&] { (void)slurm_components(config); }), "(no error)");
}

TEST(SlurmScript, MoreNodesThanProcessesAreRefused) {
  const cluster::ClusterConfig config = parse("{slurm: {nodes: 4}}");
  EXPECT_EQ(error_of([&] { (void)slurm_components(config); }),
            "slurm-test.yaml:4: hosts.act.slurm.nodes: 4 nodes for 3 process(es): a node would "
            "have nothing to run");
}

TEST(SlurmScript, APartitionSlurmLacksOrTooFewNodesAreRefused) {
  const auto partitions = parse_sinfo_partitions("gpu 1\ncpu* 2\ncpu* 1\n");
  ASSERT_EQ(partitions.size(), 2U);
  EXPECT_EQ(partitions[1].nodes, 3);
  EXPECT_TRUE(partitions[1].is_default);
  const cluster::ClusterConfig fits = parse("{slurm: {nodes: 3}}");
  EXPECT_EQ(error_of([&] { check_slurm_partitions(fits, slurm_components(fits), partitions); }),
            "(no error)");
  const cluster::ClusterConfig unknown = parse("{slurm: {partition: big, nodes: 1}}");
  EXPECT_EQ(
      error_of([&] { check_slurm_partitions(unknown, slurm_components(unknown), partitions); }),
      "slurm-test.yaml:4: hosts.act.slurm.partition: Slurm has no partition 'big' (partitions: "
      "gpu, cpu)");
  const cluster::ClusterConfig many = parse("{slurm: {partition: gpu, nodes: 2}}");
  EXPECT_EQ(error_of([&] { check_slurm_partitions(many, slurm_components(many), partitions); }),
            "slurm-test.yaml:4: hosts.act.slurm.nodes: 2 nodes, but partition gpu has 1");
}

TEST(SlurmScript, ASlurmHostHasNoAddressAndItsKeysAreChecked) {
  EXPECT_EQ(error_of([] { (void)parse("{address: 10.0.0.1, slurm: {nodes: 1}}"); }),
            "slurm-test.yaml:4: hosts.act.address: a Slurm host has none: its nodes are found "
            "inside the allocation");
  EXPECT_EQ(error_of([] {
              (void)parse("{slurm: {gres: \"gpu 1\"}}");
            }).rfind("slurm-test.yaml:4: hosts.act.slurm.gres: must be one word", 0),
            0U);
  EXPECT_EQ(error_of([] { (void)parse("{slurm: {nodes: 0}}"); }),
            "slurm-test.yaml:4: hosts.act.slurm.nodes: 0 is outside 1..4096");
  // The job mints its own keys: a keys_dir of the file would be left unused, so it is refused.
  const cluster::ClusterConfig keyed = cluster::parse_cluster_config(
      slurm_file("{slurm: {nodes: 1}}") + "security:\n  curve: true\n  keys_dir: k\n",
      "slurm-test.yaml");
  const std::string refused = error_of([&] { (void)slurm_components(keyed); });
  EXPECT_NE(refused.find(": security.keys_dir: a Slurm job's keys are minted for it"),
            std::string::npos)
      << refused;
}

}  // namespace
}  // namespace tagflow::cli
