// Tests of cli/launch/slurm_resume.hpp: where each node's place is recorded, which earlier run a
// node continues, and how its directory is started from that one's; and of `tagflow slurm FILE
// --resume RUN`'s checks and script (no Slurm needed: they come before sinfo).
#include "cli/launch/slurm_resume.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/support/launched_processes.hpp"
#include "tests/support/run_command.hpp"

namespace tagflow::cli {
namespace {

namespace fs = std::filesystem;

class SlurmResume : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("slurm_resume_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// RUN = DIR/NAME with host HOST's node K recorded as running on NODE, whose directory holds
  /// the run's record and, with `part`, one checkpoint part.
  std::string run(const std::string& name, const std::string& host, int k, const std::string& node,
                  bool part) {
    const fs::path run_dir = dir_ / name;
    record_slurm_node(run_dir.string(), host, k, node);
    fs::create_directories(run_dir / node / "checkpoints" / "50000000");
    std::ofstream(run_dir / node / "cluster.yaml") << "cluster: c\n";
    std::ofstream(run_dir / node / "mode") << "reactor\n";
    std::ofstream(run_dir / node / "sampler-0.log") << "a log, not continued\n";
    if (part) std::ofstream(run_dir / node / "checkpoints" / "50000000" / "sampler-0.ckpt") << "p";
    return run_dir.string();
  }

  fs::path dir_;
};

TEST_F(SlurmResume, ANodesPlaceIsRecordedAndLooksUpItsDirectory) {
  const std::string first = run("c-1", "act", 1, "n7", true);
  EXPECT_EQ(testing::read_text_file(fs::path(first) / "slurm-nodes" / "act" / "1"), "n7\n");
  EXPECT_EQ(recorded_node_directory(first, "act", 1), first + "/n7");
  EXPECT_EQ(recorded_node_directory(first, "act", 0), "");
  EXPECT_EQ(recorded_node_directory(first, "learn", 1), "");
}

TEST_F(SlurmResume, ARecordNamingNoSingleDirectoryOfTheRunIsNone) {
  const std::string first = run("c-1", "act", 0, "n1", true);
  fs::create_directories(dir_ / "elsewhere");
  for (const std::string name : {"../elsewhere", "..", ".", "", "a/b", "keys", "slurm-nodes"}) {
    std::ofstream(fs::path(first) / "slurm-nodes" / "act" / "0") << name << "\n";
    EXPECT_EQ(recorded_node_directory(first, "act", 0), "") << name;
  }
  std::ofstream(fs::path(first) / "slurm-nodes" / "act" / "0") << "gone\n";
  EXPECT_EQ(recorded_node_directory(first, "act", 0), "");
}

TEST_F(SlurmResume, AJobsAttemptsAreItsRunAndItsRequeuesNewestFirst) {
  const std::string run = (dir_ / "c-41").string();
  EXPECT_EQ(job_attempts(run), (std::vector<std::string>{run}));
  fs::create_directories(run + "-requeue1");
  fs::create_directories(run + "-requeue2");
  fs::create_directories(run + "-requeue4");  // after a gap: no attempt of this job's
  EXPECT_EQ(job_attempts(run),
            (std::vector<std::string>{run + "-requeue2", run + "-requeue1", run}));
}

TEST_F(SlurmResume, TheNewestEarlierRunWhoseNodeKeptCheckpointsIsContinued) {
  const std::string oldest = run("c-1", "act", 0, "n1", true);
  const std::string middle = run("c-1-requeue1", "act", 0, "n2", true);
  const std::string newest = run("c-1-requeue2", "act", 0, "n3", false);  // no part yet
  // An atomic write cut short leaves a hidden temporary file: no checkpoint.
  std::ofstream(fs::path(newest) / "n3" / "checkpoints" / "50000000" / ".sampler-0.ckpt.tmp.9")
      << "half";
  EXPECT_FALSE(kept_checkpoints(newest + "/n3"));
  EXPECT_TRUE(kept_checkpoints(middle + "/n2"));
  EXPECT_EQ(earlier_node_directory({newest, middle, oldest}, "act", 0), middle + "/n2");
  EXPECT_EQ(earlier_node_directory({newest, oldest, middle}, "act", 0), oldest + "/n1");
  EXPECT_EQ(earlier_node_directory({newest}, "act", 0), std::nullopt);
  EXPECT_EQ(earlier_node_directory({newest, middle}, "act", 1), std::nullopt);
  EXPECT_EQ(earlier_node_directory({(dir_ / "missing").string()}, "act", 0), std::nullopt);
}

TEST_F(SlurmResume, AContinuedDirectoryLinksTheCheckpointsAndLeavesTheEarlierOneAsItWas) {
  const std::string first = run("c-1", "act", 0, "n1", true);
  const fs::path from = fs::path(first) / "n1";
  std::ofstream(from / "checkpoints" / "50000000" / ".manifest.tmp.3") << "half";
  const fs::path to = dir_ / "c-2" / "n5";
  continue_run_directory(from.string(), to.string());
  EXPECT_EQ(testing::read_text_file(to / "cluster.yaml"), "cluster: c\n");
  EXPECT_EQ(testing::read_text_file(to / "mode"), "reactor\n");
  EXPECT_FALSE(fs::exists(to / "sampler-0.log"));
  const fs::path part = to / "checkpoints" / "50000000" / "sampler-0.ckpt";
  ASSERT_TRUE(fs::exists(part));
  EXPECT_FALSE(fs::exists(to / "checkpoints" / "50000000" / ".manifest.tmp.3"));
  // One inode for both runs (same file system), and the earlier file untouched.
  EXPECT_TRUE(fs::equivalent(part, from / "checkpoints" / "50000000" / "sampler-0.ckpt"));
  EXPECT_EQ(fs::hard_link_count(part), 2U);
  fs::remove(part);  // the new run pruning its checkpoint
  EXPECT_EQ(testing::read_text_file(from / "checkpoints" / "50000000" / "sampler-0.ckpt"), "p");
  EXPECT_TRUE(fs::exists(from / "checkpoints" / "50000000" / ".manifest.tmp.3"));
}

TEST_F(SlurmResume, ADirectoryThatIsNotEmptyIsNotContinuedInto) {
  const std::string first = run("c-1", "act", 0, "n1", true);
  fs::create_directories(dir_ / "c-2" / "n5");
  std::ofstream(dir_ / "c-2" / "n5" / "P.log") << "another run's\n";
  try {
    continue_run_directory(first + "/n1", (dir_ / "c-2" / "n5").string());
    FAIL() << "continued into a directory that is not empty";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("that directory is not empty"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(testing::read_text_file(dir_ / "c-2" / "n5" / "P.log"), "another run's\n");
}

// `tagflow slurm FILE --resume RUN` on runs laid out as jobs leave them: refusals (exit 2), a
// finished run (exit 0, nothing written), and the script of a run requeued once.
TEST_F(SlurmResume, TagflowSlurmResumeChecksTheRunAndContinuesItsNewestAttemptFirst) {
  std::string text =
      testing::read_text_file(fs::path(TAGFLOW_SOURCE_DIR) / "configs" / "slurm.yaml");
  const std::string without = (dir_ / "plain.yaml").string();
  std::ofstream(without) << text;
  text += "checkpoint: {every: 50ms, keep: 2}\n";
  const std::string file = (dir_ / "slurm.yaml").string();
  std::ofstream(file) << text;
  const std::string run = (dir_ / "runs" / "slurm-cartpole-41").string();
  const auto slurm = [&](const std::string& which, const std::string& resume,
                         const std::string& out) {
    return testing::run_command(testing::tagflow_binary() + " slurm '" + which + "' --resume '" +
                                resume + "' --out '" + (dir_ / out).string() + "' 2>&1");
  };
  testing::CommandResult said = slurm(file, run, "job.sh");
  EXPECT_EQ(said.exit_code, 2) << said.output;
  EXPECT_NE(said.output.find("tagflow slurm: --resume " + run + ": no such directory"),
            std::string::npos)
      << said.output;
  fs::create_directories(run);  // a directory, but no job's
  said = slurm(file, run, "job.sh");
  EXPECT_EQ(said.exit_code, 2) << said.output;
  EXPECT_NE(said.output.find("not the run directory of a job that `tagflow slurm` wrote"),
            std::string::npos)
      << said.output;
  // The job's first attempt and its requeue, each with the coordinator's node recorded.
  for (const auto& [attempt, node] : {std::pair{run, "n1"}, {run + "-requeue1", "n2"}}) {
    record_slurm_node(attempt, "learn", 0, node);
    fs::create_directories(fs::path(attempt) / node);
    std::ofstream(fs::path(attempt) / node / "cluster.yaml") << text;
  }
  said = slurm(without, run, "job.sh");
  EXPECT_EQ(said.exit_code, 2) << said.output;
  EXPECT_NE(said.output.find("--resume needs a reactor-mode file with checkpoint:"),
            std::string::npos)
      << said.output;
  said = slurm(file, run, "job.sh");
  ASSERT_EQ(said.exit_code, 0) << said.output;
  const std::string script = testing::read_text_file(dir_ / "job.sh");
  const std::size_t newest = script.find("--resume-from '" + run + "-requeue1'");
  const std::size_t oldest = script.find("--resume-from '" + run + "'");
  EXPECT_NE(newest, std::string::npos) << script;
  EXPECT_NE(oldest, std::string::npos) << script;
  EXPECT_LT(newest, oldest) << script;
  // Checked against the newest attempt: its record of the file, then its end.
  std::ofstream(fs::path(run + "-requeue1") / "n2" / "cluster.yaml") << text << "seed: 8\n";
  said = slurm(file, run, "edited.sh");
  EXPECT_EQ(said.exit_code, 2) << said.output;
  EXPECT_NE(said.output.find("is not the file this run started with (" + run +
                             "-requeue1/n2/cluster.yaml)"),
            std::string::npos)
      << said.output;
  std::ofstream(fs::path(run + "-requeue1") / "n2" / "cluster.yaml") << text;
  std::ofstream(fs::path(run + "-requeue1") / "n2" / "summary.json") << "{}";
  said = slurm(file, run, "again.sh");
  EXPECT_EQ(said.exit_code, 0) << said.output;
  EXPECT_NE(said.output.find("that run finished"), std::string::npos) << said.output;
  EXPECT_FALSE(fs::exists(dir_ / "again.sh"));
  EXPECT_FALSE(fs::exists(dir_ / "edited.sh"));
}

}  // namespace
}  // namespace tagflow::cli
