// Tests of common/process_id.cpp: the process id asked of the kernel once per process is the
// kernel's, in a forked child too; the libraries of a program that links it (ZeroMQ here) call it;
// and the tagflow programs export it, so theirs do.
#include <dlfcn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <zmq.h>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/run_command.hpp"

namespace {

pid_t kernel_pid() { return static_cast<pid_t>(syscall(SYS_getpid)); }

TEST(ProcessId, IsTheKernelsAtEveryCall) {
  EXPECT_EQ(getpid(), kernel_pid());
  EXPECT_EQ(getpid(), kernel_pid());
}

TEST(ProcessId, AForkedChildAndItsOwnChildEachSeeTheirOwn) {
  const pid_t parent = getpid();
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Exit codes say which check failed: 1 the child's own id, 2 its child's.
    if (getpid() != kernel_pid() || getpid() == parent) ::_exit(1);
    const pid_t own = getpid();
    const pid_t grandchild = ::fork();
    if (grandchild == 0) ::_exit(getpid() == kernel_pid() && getpid() != own ? 0 : 2);
    int status = 0;
    if (grandchild < 0 || ::waitpid(grandchild, &status, 0) != grandchild) ::_exit(3);
    ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 4);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(getpid(), parent);
  EXPECT_EQ(getpid(), kernel_pid());
}

TEST(ProcessId, TheLibrariesOfAProgramThatLinksItCallIt) {
  // The dynamic linker binds a library's call (ZeroMQ's, linked here: zmq_version keeps it
  // linked) to the first definition in the program's global scope, which is what dlsym finds.
  int major = 0, minor = 0, patch = 0;
  zmq_version(&major, &minor, &patch);
  EXPECT_GE(major, 4);
  EXPECT_EQ(dlsym(RTLD_DEFAULT, "getpid"), reinterpret_cast<void*>(&getpid));
  EXPECT_NE(dlsym(RTLD_NEXT, "getpid"), reinterpret_cast<void*>(&getpid))
      << "glibc's own definition should come after this program's";
}

TEST(ProcessId, TheTagflowProgramsExportIt) {
  std::vector<std::string> programs{"tagflow"};
  if (TAGFLOW_HAS_TORCH) programs.emplace_back("tagflow-torch");
  for (const std::string& program : programs) {
    const auto listed = tagflow::testing::run_command(
        "nm -D --defined-only " + tagflow::testing::tagflow_binary(program) + " 2>&1");
    ASSERT_EQ(listed.exit_code, 0) << listed.output;
    std::istringstream lines(listed.output);
    bool exported = false;
    for (std::string line; std::getline(lines, line);) {
      exported =
          exported || (line.size() > 9 && line.compare(line.size() - 9, 9, " T getpid") == 0);
    }
    EXPECT_TRUE(exported) << program << " does not export getpid:\n"
                          << listed.output.substr(0, 2000);
  }
}

}  // namespace
