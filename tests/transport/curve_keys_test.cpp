#include "transport/curve_keys.hpp"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tagflow::transport {
namespace {

std::filesystem::path temp_dir() {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("tagflow-keys-" + std::to_string(::getpid()) + "-" +
                    ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::remove_all(dir);
  return dir;
}

TEST(CurveKeys, GeneratedPairsAreValidAndDistinct) {
  const CurveKeyPair a = generate_curve_key_pair();
  const CurveKeyPair b = generate_curve_key_pair();
  EXPECT_TRUE(is_valid_z85_key(a.public_key));
  EXPECT_TRUE(is_valid_z85_key(a.secret_key));
  EXPECT_NE(a.public_key, b.public_key);
  EXPECT_NE(a.secret_key, a.public_key);
}

TEST(CurveKeys, WrittenPairReadsBackAndTheSecretIsPrivate) {
  const auto dir = temp_dir();
  const CurveKeyPair pair = generate_curve_key_pair();
  write_key_pair(dir, "learner", pair);
  const CurveKeyPair read = read_key_pair(dir, "learner");
  EXPECT_EQ(read.public_key, pair.public_key);
  EXPECT_EQ(read.secret_key, pair.secret_key);
  struct stat info {};
  ASSERT_EQ(::stat((dir / "learner.key").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600U);
  std::filesystem::remove_all(dir);
}

TEST(CurveKeys, MissingOrCorruptKeyFilesRaiseErrorsNamingTheFile) {
  const auto dir = temp_dir();
  std::filesystem::create_directories(dir);
  EXPECT_THROW((void)read_key_pair(dir, "nobody"), CurveKeyError);
  std::ofstream(dir / "bad.pub") << "not-a-key\n";
  try {
    (void)read_key_pair(dir, "bad", true);
    FAIL() << "a corrupt key was accepted";
  } catch (const CurveKeyError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.pub"), std::string::npos);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tagflow::transport
