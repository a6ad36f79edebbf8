// Tests of cli/process_defaults.hpp: what `tagflow` sets for the processes it starts unless the
// environment already says otherwise. End to end, `tagflow train --help` hands its command line
// to tagflow-torch (TAGFLOW_TORCH, cli/paths.cpp), here a script that prints what it inherited.
#include "cli/process_defaults.hpp"

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "common/numerics.hpp"
#include "tests/support/run_command.hpp"

namespace tagflow::cli {
namespace {

namespace fs = std::filesystem;
using testing::run_command;
using testing::tagflow_binary;

TEST(ProcessDefaults, TheHugePageTunableIsAddedOnceAndAUsersChoiceStays) {
  EXPECT_EQ(tunables_with_huge_page_malloc(""), "glibc.malloc.hugetlb=1");
  EXPECT_EQ(tunables_with_huge_page_malloc("glibc.cpu.hwcaps=-FMA,-FMA4"),
            "glibc.cpu.hwcaps=-FMA,-FMA4:glibc.malloc.hugetlb=1");
  const std::string twice = tunables_with_huge_page_malloc(tunables_with_huge_page_malloc(""));
  EXPECT_EQ(twice, "glibc.malloc.hugetlb=1");
  EXPECT_EQ(tunables_with_huge_page_malloc("glibc.malloc.hugetlb=0"), "glibc.malloc.hugetlb=0");
  EXPECT_EQ(tunables_with_huge_page_malloc("glibc.malloc.arena_max=2:glibc.malloc.hugetlb=2"),
            "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=2");
}

/// What a tagflow-torch started by `ENV tagflow train --help` finds in its environment.
std::string inherited(const std::string& env) {
  const fs::path script = fs::path(::testing::TempDir()) / "print-environment-torch";
  {
    std::ofstream out(script);
    out << "#!/bin/sh\necho \"GLIBC_TUNABLES=$GLIBC_TUNABLES\"\n"
        << "echo \"OPENBLAS_NUM_THREADS=$OPENBLAS_NUM_THREADS\"\necho \"ARGS=$*\"\n";
  }
  fs::permissions(script, fs::perms::owner_all);
  const auto r = run_command("env -u GLIBC_TUNABLES -u OPENBLAS_NUM_THREADS " + env +
                             " TAGFLOW_TORCH=" + script.string() + " " + tagflow_binary() +
                             " train --help 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("ARGS=train --help"), std::string::npos) << r.output;
  return r.output;
}

TEST(ProcessDefaults, TagflowStartsItsProcessesWithOneBlasThreadAndHugePageMalloc) {
  const std::string fresh = inherited("");
  EXPECT_NE(fresh.find("OPENBLAS_NUM_THREADS=1\n"), std::string::npos) << fresh;
  EXPECT_NE(fresh.find("glibc.malloc.hugetlb=1"), std::string::npos) << fresh;
  // Beside the numerics' own pin (common/numerics.hpp) where this CPU takes one, never in place
  // of it; alone where the numerics pin nothing.
  if (numerics::this_cpu().x86_64_v3) {
    EXPECT_NE(fresh.find(std::string("GLIBC_TUNABLES=") + numerics::kLibmTunable +
                         ":glibc.malloc.hugetlb=1\n"),
              std::string::npos)
        << fresh;
  }
  const std::string native = inherited("TAGFLOW_NUMERICS=native");
  EXPECT_NE(native.find("GLIBC_TUNABLES=glibc.malloc.hugetlb=1\n"), std::string::npos) << native;

  // The user's settings stay as they are.
  const std::string own = inherited("GLIBC_TUNABLES=glibc.malloc.hugetlb=0 OPENBLAS_NUM_THREADS=2");
  EXPECT_NE(own.find("OPENBLAS_NUM_THREADS=2\n"), std::string::npos) << own;
  EXPECT_NE(own.find("glibc.malloc.hugetlb=0"), std::string::npos) << own;
  EXPECT_EQ(own.find("glibc.malloc.hugetlb=1"), std::string::npos) << own;
}

}  // namespace
}  // namespace tagflow::cli
