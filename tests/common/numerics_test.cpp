// common/numerics.hpp: which variables each mode sets, how a process's environment is brought to
// them, and how the reports of several processes read as one.
#include "common/numerics.hpp"

#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

namespace tagflow::numerics {
namespace {

std::string value_of(const std::vector<std::pair<std::string, std::string>>& variables,
                     const std::string& name) {
  for (const auto& [key, value] : variables) {
    if (key == name) return value;
  }
  return "(unset)";
}

/// Restores the variables a test changes.
class Environment : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : kNames) {
      const char* value = std::getenv(name);
      saved_.emplace_back(name, value == nullptr ? std::optional<std::string>()
                                                 : std::optional<std::string>(value));
      ::unsetenv(name);
    }
  }
  void TearDown() override {
    for (const auto& [name, value] : saved_) {
      if (value) {
        ::setenv(name.c_str(), value->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
  }
  static constexpr const char* kNames[] = {"OPENBLAS_CORETYPE",  "ATEN_CPU_CAPABILITY",
                                           "ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA",
                                           "GLIBC_TUNABLES",     "TAGFLOW_NUMERICS"};
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

TEST(Numerics, ModesParseByName) {
  EXPECT_EQ(parse_mode("portable"), Mode::portable);
  EXPECT_EQ(parse_mode("native"), Mode::native);
  EXPECT_FALSE(parse_mode("fast").has_value());
  EXPECT_STREQ(to_string(Mode::native), "native");
}

TEST_F(Environment, PortableOnAnX8664V3CpuPinsEveryLibrary) {
  const Cpu v3{"test CPU", true};
  const auto variables = variables_for(Mode::portable, v3);
  EXPECT_EQ(value_of(variables, "OPENBLAS_CORETYPE"), "Haswell");
  EXPECT_EQ(value_of(variables, "ATEN_CPU_CAPABILITY"), "avx2");
  EXPECT_EQ(value_of(variables, "ONEDNN_MAX_CPU_ISA"), "AVX2");
  EXPECT_EQ(value_of(variables, "GLIBC_TUNABLES"), kLibmTunable);
  EXPECT_EQ(value_of(variables, kMarker), "portable");
}

TEST_F(Environment, TheLibmPinKeepsOtherTunables) {
  ::setenv("GLIBC_TUNABLES", "glibc.malloc.arena_max=2", 1);
  const auto variables = variables_for(Mode::portable, Cpu{"test CPU", true});
  EXPECT_EQ(value_of(variables, "GLIBC_TUNABLES"),
            std::string("glibc.malloc.arena_max=2:") + kLibmTunable);
}

TEST_F(Environment, NoPinsWhereThePinnedKernelsCannotRun) {
  const Cpu old{"old CPU", false};
  const auto variables = variables_for(Mode::portable, old);
  EXPECT_EQ(value_of(variables, "OPENBLAS_CORETYPE"), "(unset)");
  EXPECT_EQ(value_of(variables, kMarker), "portable");
  EXPECT_NE(unportable_cpu_line(old).find("old CPU"), std::string::npos);
  EXPECT_EQ(unportable_cpu_line(Cpu{"new CPU", true}), "");
}

TEST_F(Environment, NativeSetsOnlyTheMarker) {
  const auto variables = variables_for(Mode::native, Cpu{"test CPU", true});
  ASSERT_EQ(variables.size(), 1U);
  EXPECT_EQ(value_of(variables, kMarker), "native");
}

TEST_F(Environment, ApplyingAModeMakesTheEnvironmentMatchIt) {
  ::setenv("OPENBLAS_CORETYPE", "Sandybridge", 1);  // what a user's shell might hold
  EXPECT_FALSE(environment_matches(Mode::portable));
  apply_environment(Mode::portable);
  EXPECT_TRUE(environment_matches(Mode::portable));
  EXPECT_EQ(current_mode(), Mode::portable);
  if (this_cpu().x86_64_v3) {
    EXPECT_STREQ(std::getenv("OPENBLAS_CORETYPE"), "Haswell");
  }
  EXPECT_FALSE(environment_matches(Mode::native));
}

TEST_F(Environment, NativeDropsThePinsOfAPortableParentButNotAUsersSettings) {
  apply_environment(Mode::portable);
  apply_environment(Mode::native);
  EXPECT_TRUE(environment_matches(Mode::native));
  EXPECT_EQ(std::getenv("OPENBLAS_CORETYPE"), nullptr);
  EXPECT_EQ(std::getenv("GLIBC_TUNABLES"), nullptr);
  ::setenv("OPENBLAS_CORETYPE", "Sandybridge", 1);
  apply_environment(Mode::native);
  EXPECT_STREQ(std::getenv("OPENBLAS_CORETYPE"), "Sandybridge");
}

TEST(Numerics, ReportsOfSeveralProcessesMerge) {
  Report sampler{"portable", true, "CPU A", "plain", "", "", ""};
  Report learner{"portable", true, "CPU A", "plain", "/lib/libblas.so.3", "Haswell", "avx2"};
  Report merged = merge({sampler, learner});
  EXPECT_TRUE(merged.portable);
  EXPECT_EQ(merged.cpu, "CPU A");
  EXPECT_EQ(merged.blas_core, "Haswell");
  EXPECT_EQ(describe(merged), "portable (x86-64-v3: OpenBLAS Haswell, ATen avx2, plain libm)");

  Report other_host{"native", false, "CPU B", "cpu", "/lib/libblas.so.3", "Zen", "avx2"};
  merged = merge({learner, other_host, other_host});
  EXPECT_FALSE(merged.portable);
  EXPECT_EQ(merged.cpu, "CPU A / CPU B");
  EXPECT_EQ(merged.blas_core, "Haswell / Zen");
  EXPECT_EQ(merged.aten_capability, "avx2");
}

TEST(Numerics, AnotherBlasIsNotPortable) {
  const Report reference{"portable", false, "CPU A", "plain", "/usr/lib/blas/libblas.so.3",
                         "",         "avx2"};
  EXPECT_NE(describe(reference).find("digest specific to CPU A"), std::string::npos);
  EXPECT_NE(describe(reference).find("BLAS /usr/lib/blas/libblas.so.3"), std::string::npos);
}

}  // namespace
}  // namespace tagflow::numerics
