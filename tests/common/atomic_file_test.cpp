#include "common/atomic_file.hpp"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace tagflow {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("atomic_file_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  /// Files in the directory besides `path` (temporaries left behind).
  std::size_t entries() const {
    return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir_), {}));
  }
  fs::path dir_;
};

TEST_F(AtomicFileTest, ReplacesTheOldFileWithTheWholeNewOne) {
  const fs::path path = dir_ / "state.json";
  write_file_atomically(path.string(), "old\n");
  write_file_atomically(path.string(), "new\n");
  EXPECT_EQ(read(path), "new\n");
  EXPECT_EQ(entries(), 1U) << "no temporary is left behind";
}

TEST_F(AtomicFileTest, LeavesTheOldFileWhenTheWriterGivesUpBeforeCommit) {
  const fs::path path = dir_ / "checkpoint";
  write_file_atomically(path.string(), "complete");
  try {
    AtomicFile file(path.string());
    file.write("half of a new ch");
    EXPECT_TRUE(fs::exists(file.temporary_path()));
    throw std::runtime_error("crash mid-write");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(read(path), "complete");
  EXPECT_EQ(entries(), 1U) << "the temporary is removed";
}

TEST_F(AtomicFileTest, TheTemporaryCanBeReadBackBeforeCommit) {
  const fs::path path = dir_ / "with_footer";
  AtomicFile file(path.string());
  file.write("body");
  ASSERT_EQ(std::fseek(file.get(), 0, SEEK_SET), 0);
  char back[4];
  ASSERT_EQ(std::fread(back, 1, 4, file.get()), 4U);
  EXPECT_EQ(std::string(back, 4), "body");
  ASSERT_EQ(std::fseek(file.get(), 0, SEEK_END), 0);
  file.write("+footer");
  file.commit();
  EXPECT_EQ(read(path), "body+footer");
}

TEST_F(AtomicFileTest, AWrittenFileIsReadBackAndCompletedInPlaceBeforeCommit) {
  const fs::path path = dir_ / "table";
  AtomicFile file(path.string());
  file.write("0123456789");
  file.write("footer:????");
  file.flush();
  EXPECT_EQ(file.size(), 21U);
  char back[10];
  file.read(0, back, sizeof back);
  EXPECT_EQ(std::string(back, sizeof back), "0123456789");
  file.overwrite(17, "45");  // a hash written into its footer
  EXPECT_THROW(file.overwrite(20, "xy"), std::logic_error) << "past the end";
  char beyond[4];
  EXPECT_THROW(file.read(19, beyond, sizeof beyond), AtomicFileError) << "past the end";
  EXPECT_FALSE(fs::exists(path)) << "nothing in place before commit";
  file.commit();
  EXPECT_EQ(read(path), "0123456789footer:45??");
}

TEST_F(AtomicFileTest, ALargeFileIsReadBackInPiecesOfAtMostOneMebibyte) {
  AtomicFile file((dir_ / "large").string());
  std::string bytes(5 * (std::size_t{1} << 19) + 3, '\0');  // 2.5 MiB and 3 bytes
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 31 % 251);
  file.write(bytes);
  file.flush();
  std::string back;
  std::vector<std::size_t> pieces;
  file.read_pieces(file.size(), [&](const char* data, std::size_t n) {
    back.append(data, n);
    pieces.push_back(n);
  });
  EXPECT_TRUE(back == bytes);
  EXPECT_EQ(pieces, (std::vector<std::size_t>{1U << 20, 1U << 20, (1U << 19) + 3}));
  std::size_t calls = 0;
  file.read_pieces(0, [&](const char*, std::size_t) { ++calls; });
  EXPECT_EQ(calls, 0U);
}

TEST_F(AtomicFileTest, ASecretIsCreatedWithTheModeItAsksFor) {
  const fs::path path = dir_ / "key";
  write_file_atomically(path.string(), "secret", 0600);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600U);
}

// The umask narrows the mode, as for any new file: `umask 077` (a Slurm job's script) keeps even
// the files others could read private.
TEST_F(AtomicFileTest, TheUmaskNarrowsTheModeItAsksFor) {
  const ::mode_t before = ::umask(077);
  write_file_atomically((dir_ / "private").string(), "run data");
  ::umask(022);
  write_file_atomically((dir_ / "shared").string(), "run data");
  ::umask(before);
  struct stat st {};
  ASSERT_EQ(::stat((dir_ / "private").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600U);
  ASSERT_EQ(::stat((dir_ / "shared").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644U);
}

TEST_F(AtomicFileTest, AnUnwritableDirectoryIsANamedError) {
  const fs::path path = dir_ / "missing" / "file";
  try {
    write_file_atomically(path.string(), "x");
    FAIL() << "expected AtomicFileError";
  } catch (const AtomicFileError& e) {
    EXPECT_NE(std::string(e.what()).find("missing"), std::string::npos) << e.what();
  }
}

// The name of an AtomicFile's temporary, as it makes it, is told apart from finished files.
TEST_F(AtomicFileTest, ATemporarysNameIsToldApartFromAFinishedFilesName) {
  const fs::path path = dir_ / "part.ckpt";
  {
    AtomicFile file(path.string());
    bool found = false;
    for (const auto& entry : fs::directory_iterator(dir_)) {
      EXPECT_TRUE(is_atomic_temporary(entry.path().filename().string())) << entry.path();
      found = true;
    }
    EXPECT_TRUE(found);
  }  // not committed: removed
  for (const std::string name : {".part.ckpt.tmp.12", ".manifest.tmp.3"}) {
    EXPECT_TRUE(is_atomic_temporary(name)) << name;
  }
  for (const std::string name :
       {"part.ckpt", "part.tmp.12", ".part.ckpt", ".part.tmp.", ".x.tmp.1a", ".tmp.12", "."}) {
    EXPECT_FALSE(is_atomic_temporary(name)) << name;
  }
}

TEST_F(AtomicFileTest, AnOutputFileIsReadiedBeforeItIsWrittenOrRefusedWithTheReason) {
  // Missing directories are made, and the file can then be written.
  const fs::path nested = dir_ / "a" / "b" / "summary.json";
  EXPECT_EQ(prepare_output_file(nested.string()), "");
  EXPECT_TRUE(fs::is_directory(dir_ / "a" / "b"));
  write_file_atomically(nested.string(), "x");
  // A directory where the file should be, and a file where a directory should be.
  EXPECT_EQ(prepare_output_file(dir_.string()), dir_.string() + " is a directory");
  const std::string under_file = prepare_output_file((nested / "inner.json").string());
  EXPECT_EQ(under_file.rfind("cannot create the directory " + nested.string() + ": ", 0), 0U)
      << under_file;
  // A directory's name that does not exist yet is refused, and nothing is made.
  for (const std::string name : {"new/", "new/.", "new/.."}) {
    const std::string path = (dir_ / name).string();
    EXPECT_EQ(prepare_output_file(path), path + " names a directory, not a file");
  }
  EXPECT_FALSE(fs::exists(dir_ / "new"));
  // A plain name is written in the working directory.
  EXPECT_EQ(prepare_output_file("summary.json"), "");
  // A name the temporary beside it could not have is refused before anything is done.
  EXPECT_NE(prepare_output_file((dir_ / std::string(240, 'a')).string()).find("longer than"),
            std::string::npos);
}

// A rename over a device, a pipe or a directory would replace it with a regular file (/dev/null
// once became one): such a path is refused, and stays what it was. A symbolic link is replaced
// itself, never what it points to.
TEST_F(AtomicFileTest, APathThatIsNoRegularFileIsRefusedAndLeftAsItWas) {
  const fs::path pipe = dir_ / "pipe";
  ASSERT_EQ(::mkfifo(pipe.c_str(), 0600), 0);
  EXPECT_THROW(write_file_atomically(pipe.string(), "x"), AtomicFileError);
  EXPECT_TRUE(fs::is_fifo(pipe));
  EXPECT_NE(prepare_output_file(pipe.string()).find("is not a regular file"), std::string::npos);
  EXPECT_NE(prepare_output_file("/dev/null").find("is not a regular file"), std::string::npos);
  EXPECT_THROW(write_file_atomically("/dev/null", "x"), AtomicFileError);
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  const fs::path link = dir_ / "link";
  fs::create_symlink("/dev/null", link);
  write_file_atomically(link.string(), "x");
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(link)));
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
}

}  // namespace
}  // namespace tagflow
