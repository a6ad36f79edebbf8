#include "common/value_log.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/fnv1a.hpp"

namespace tagflow {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ValueLog, WritesALinePerMessageAndKeepsBytesUpToItsBudget) {
  const fs::path prefix = fs::path(::testing::TempDir()) / "value_log_budget";
  const std::vector<std::uint8_t> first{1, 2, 3, 4};
  const std::vector<std::uint8_t> second{9, 9, 9, 9, 9, 9};
  {
    ValueLog log(prefix.string(), 8);
    log.record(Tag(1000, 0), "replay", 65536, first.data(), first.size());
    log.record(Tag(2000, 1), "learner-0", 3 << 16, nullptr, 0);               // an ABSENT
    log.record(Tag(3000, 0), "replay", 65536, second.data(), second.size());  // over the budget
    EXPECT_EQ(log.messages(), 3U);
    EXPECT_EQ(log.kept_bytes(), 4U);
  }
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx",
                static_cast<unsigned long long>(fnv1a64_wide(first.data(), first.size())));
  char empty[17];
  std::snprintf(empty, sizeof empty, "%016llx",
                static_cast<unsigned long long>(fnv1a64_wide(nullptr, 0)));
  char late[17];
  std::snprintf(late, sizeof late, "%016llx",
                static_cast<unsigned long long>(fnv1a64_wide(second.data(), second.size())));
  EXPECT_EQ(read(prefix.string() + ".values.tsv"),
            std::string("1000\t0\treplay\t65536\t4\t") + hash + "\t0\n" +
                "2000\t1\tlearner-0\t196608\t0\t" + empty + "\t4\n" +
                "3000\t0\treplay\t65536\t6\t" + late + "\t-\n");
  EXPECT_EQ(read(prefix.string() + ".values.bin"), std::string("\x01\x02\x03\x04", 4));
}

TEST(ValueLog, AnUnwritableDirectoryIsNamed) {
  try {
    ValueLog log("/nonexistent-dir/x", 8);
    FAIL() << "opened a log in a directory that does not exist";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/x.values.tsv"), std::string::npos);
  }
}

}  // namespace
}  // namespace tagflow
