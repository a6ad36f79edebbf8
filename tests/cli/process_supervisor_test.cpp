// Tests of cli/launch/process_supervisor.hpp with real processes: exits and signals are reported,
// output is kept, and no child outlives its supervisor or a killed launcher.
#include "cli/launch/process_supervisor.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "cli/launch/launch_plan.hpp"
#include "tests/support/launched_processes.hpp"

namespace tagflow::cli {
namespace {

using namespace std::chrono_literals;

ChildSpec shell(const std::string& name, const std::string& script, const std::string& log = "") {
  return ChildSpec{name, {"/bin/sh", "-c", script}, log};
}

using testing::alive;

TEST(ProcessSupervisor, ReportsTheExitCodeAndKeepsTheLastLines) {
  const std::string log = ::testing::TempDir() + "supervisor_child.log";
  ProcessSupervisor supervisor(3);
  supervisor.start(
      shell("worker", "for i in 1 2 3 4 5; do echo line $i; done; echo oops >&2; exit 3", log));
  const auto exit = supervisor.wait_for_exit(10s);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->name, "worker");
  EXPECT_FALSE(exit->signaled);
  EXPECT_EQ(exit->exit_code, 3);
  EXPECT_EQ(exit->describe(), "exited with code 3");
  EXPECT_EQ(supervisor.tail("worker"), (std::vector<std::string>{"line 4", "line 5", "oops"}));
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "line 1\nline 2\nline 3\nline 4\nline 5\noops\n");
  EXPECT_EQ(supervisor.running(), 0U);
}

TEST(ProcessSupervisor, AChildBoundToACpuRunsThereAndSoDoesWhatItStarts) {
  const std::vector<int> mine = usable_cpus();
  ASSERT_FALSE(mine.empty());
  const int last = mine.back();
  ProcessSupervisor supervisor;
  ChildSpec bound = shell("bound", "grep Cpus_allowed_list /proc/self/status");
  bound.cpu = last;
  supervisor.start(bound);
  auto exit = supervisor.wait_for_exit(10s);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->exit_code, 0);
  EXPECT_EQ(supervisor.tail("bound"),
            std::vector<std::string>{"Cpus_allowed_list:\t" + std::to_string(last)});
  // Unbound, a child may run wherever its launcher may.
  supervisor.start(shell("free", "grep Cpus_allowed_list /proc/self/status"));
  exit = supervisor.wait_for_exit(10s);
  ASSERT_TRUE(exit.has_value());
  ASSERT_EQ(supervisor.tail("free").size(), 1U);
  EXPECT_EQ(supervisor.tail("free")[0].rfind("Cpus_allowed_list:\t", 0), 0U);
  if (mine.size() > 1) {
    EXPECT_NE(supervisor.tail("free"), supervisor.tail("bound"));
  }
}

TEST(ProcessSupervisor, ReportsAChildKilledByASignal) {
  ProcessSupervisor supervisor;
  supervisor.start(shell("victim", "exec sleep 60"));
  ASSERT_TRUE(supervisor.signal_child("victim", SIGKILL));
  const auto exit = supervisor.wait_for_exit(10s);
  ASSERT_TRUE(exit.has_value());
  EXPECT_TRUE(exit->signaled);
  EXPECT_EQ(exit->signal, SIGKILL);
}

TEST(ProcessSupervisor, WaitTimesOutWhileChildrenRun) {
  ProcessSupervisor supervisor;
  supervisor.start(shell("sleeper", "exec sleep 60"));
  EXPECT_FALSE(supervisor.wait_for_exit(50ms).has_value());
  EXPECT_EQ(supervisor.running(), 1U);
}

TEST(ProcessSupervisor, StopAllEndsEveryChildAndItsProcessGroup) {
  ProcessSupervisor supervisor;
  const pid_t a = supervisor.start(shell("a", "exec sleep 60"));
  // `b` ignores SIGTERM, so only the SIGKILL after the grace period ends it.
  const pid_t b =
      supervisor.start(shell("b", "trap '' TERM; echo ignoring; while true; do sleep 0.05; done"));
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (supervisor.tail("b").empty() && std::chrono::steady_clock::now() < deadline) {
    (void)supervisor.wait_for_exit(20ms);  // reads the children's output
  }
  ASSERT_EQ(supervisor.tail("b"), std::vector<std::string>{"ignoring"});
  const std::vector<ChildExit> exits = supervisor.stop_all(300ms);
  ASSERT_EQ(exits.size(), 2U);
  EXPECT_EQ(supervisor.running(), 0U);
  EXPECT_FALSE(alive(a));
  EXPECT_FALSE(alive(b));
  // Each exit says whether the grace ran out: `a` ended on SIGTERM, `b` was killed.
  for (const ChildExit& exit : exits) {
    EXPECT_TRUE(exit.signaled) << exit.name;
    EXPECT_EQ(exit.signal, exit.name == "a" ? SIGTERM : SIGKILL) << exit.name;
    EXPECT_EQ(exit.killed_after_grace, exit.name == "b") << exit.name;
  }
}

TEST(ProcessSupervisor, AProgramThatCannotRunIsAnErrorAtStart) {
  ProcessSupervisor supervisor;
  try {
    supervisor.start(ChildSpec{"ghost", {"/nonexistent/tagflow-node"}, ""});
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot execute /nonexistent/tagflow-node"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(supervisor.running(), 0U);
}

TEST(ProcessSupervisor, DuplicateNamesAreRefused) {
  ProcessSupervisor supervisor;
  supervisor.start(shell("same", "exec sleep 60"));
  EXPECT_THROW(supervisor.start(shell("same", "exec sleep 60")), std::runtime_error);
}

TEST(ProcessSupervisor, DestructorLeavesNoChildBehind) {
  pid_t pid = -1;
  {
    ProcessSupervisor supervisor;
    pid = supervisor.start(shell("left", "exec sleep 60"));
    ASSERT_TRUE(alive(pid));
  }
  EXPECT_FALSE(alive(pid));
}

TEST(ProcessSupervisor, ChildrenDieWhenTheLauncherIsKilled) {
  // This test process adopts orphans, so it can see the grandchild's fate after the launcher dies.
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t launcher = ::fork();
  ASSERT_GE(launcher, 0);
  if (launcher == 0) {
    ProcessSupervisor supervisor;
    const pid_t child = supervisor.start(shell("node", "exec sleep 60"));
    [[maybe_unused]] const ssize_t n = ::write(pipe_fds[1], &child, sizeof(child));
    ::pause();
    ::_exit(0);
  }
  pid_t child = -1;
  ASSERT_EQ(::read(pipe_fds[0], &child, sizeof(child)), static_cast<ssize_t>(sizeof(child)));
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
  ASSERT_TRUE(alive(child));
  ::kill(launcher, SIGKILL);
  ::waitpid(launcher, nullptr, 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);  // reparented to us; returns once it died
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
}

}  // namespace
}  // namespace tagflow::cli
