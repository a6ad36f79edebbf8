// Checkpoint files (federation/checkpoint_store.hpp): a manifest only once every federate
// reported, only the newest `keep` complete checkpoints kept, and a corrupt, truncated or
// missing part (or attachment) refused by name with the previous checkpoint used.
#include "federation/checkpoint_store.hpp"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

namespace tagflow::coordinator {
namespace {

namespace fs = std::filesystem;

class CheckpointStore : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = (fs::path(::testing::TempDir()) /
             ("checkpoint_store_" +
              std::string(::testing::UnitTest::GetInstance()->current_test_info()->name())))
                .string();
    fs::remove_all(root_);
  }
  /// Writes both federates' parts for time `t` (b attaches a `table`, completed as it is written)
  /// and reports them.
  void checkpoint(CheckpointManifest& manifest, std::int64_t t, bool report_b = true) {
    const std::string dir = checkpoint_directory(root_, t);
    std::vector<StateAttachment> none;
    std::vector<StateAttachment> table;
    table.push_back(start_attachment(dir, "b", "table", [](AtomicFile& file) {
      file.overwrite(0, "TABLE");  // a footer's hash, written over bytes already there
    }));
    table.back().file->write("table bytes at " + std::to_string(t));
    const PartInfo a = write_part(dir, "a", {t, 0}, none, "state of a at " + std::to_string(t));
    const PartInfo b = write_part(dir, "b", {t, 0}, table, "state of b");
    EXPECT_EQ(a.attachment_bytes, 0U);
    EXPECT_EQ(b.attachment_bytes, fs::file_size(fs::path(dir) / "b.table"));
    EXPECT_FALSE(manifest.on_written("a", {t, 0}, a).has_value());
    if (report_b) {
      EXPECT_TRUE(manifest.on_written("b", {t, 0}, b).has_value());
    }
  }
  std::string root_;
  const std::vector<std::string> federates_{"a", "b"};
};

TEST_F(CheckpointStore, TheManifestComesOnlyOnceEveryFederateReported) {
  CheckpointManifest manifest(root_, federates_, 2);
  checkpoint(manifest, 1000, /*report_b=*/false);
  EXPECT_FALSE(fs::exists(fs::path(checkpoint_directory(root_, 1000)) / "manifest"));
  EXPECT_FALSE(latest_usable_checkpoint(root_, federates_).has_value());
  checkpoint(manifest, 2000);
  const auto usable = latest_usable_checkpoint(root_, federates_);
  ASSERT_TRUE(usable.has_value());
  EXPECT_EQ(usable->tag.time_ns(), 2000);
  const Part a = read_part(usable->directory, "a");
  EXPECT_EQ(a.body, "state of a at 2000");
  // b's attachment, sealed before it was written, beside its part.
  std::ifstream table(fs::path(usable->directory) / "b.table");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(table), {}), "TABLE bytes at 2000");
  // The older incomplete checkpoint is gone once a newer one is complete.
  EXPECT_FALSE(fs::exists(checkpoint_directory(root_, 1000)));
}

// The manifest records which host holds each part; one written before hosts were recorded (three
// fields per part) still reads, with no hosts.
TEST_F(CheckpointStore, TheManifestRecordsWhichHostHoldsEachPart) {
  CheckpointManifest manifest(root_, federates_, 2, {{"a", "hostA"}});
  checkpoint(manifest, 1000);
  const std::string dir = checkpoint_directory(root_, 1000);
  const std::map<std::string, std::string> hosts = part_hosts(dir);
  EXPECT_EQ(hosts, (std::map<std::string, std::string>{{"a", "hostA"}, {"b", "-"}}));
  std::ifstream in(fs::path(dir) / "manifest");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("part a "), std::string::npos) << text;
  EXPECT_NE(text.find(" hostA\n"), std::string::npos) << text;
  // The same manifest without the host field: usable, and no hosts.
  std::string old;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("part ", 0) == 0) line = line.substr(0, line.rfind(' '));
    old += line + "\n";
  }
  std::ofstream(fs::path(dir) / "manifest", std::ios::trunc) << old;
  EXPECT_TRUE(part_hosts(dir).empty());
  ASSERT_TRUE(latest_usable_checkpoint(root_, federates_).has_value());
}

TEST_F(CheckpointStore, OnlyTheNewestKeepCheckpointsStay) {
  CheckpointManifest manifest(root_, federates_, 2);
  for (const std::int64_t t : {1000, 2000, 3000}) checkpoint(manifest, t);
  EXPECT_FALSE(fs::exists(checkpoint_directory(root_, 1000)));
  EXPECT_TRUE(fs::exists(checkpoint_directory(root_, 2000)));
  EXPECT_TRUE(fs::exists(checkpoint_directory(root_, 3000)));
  EXPECT_EQ(manifest.completed(), 3U);
}

TEST_F(CheckpointStore, ACorruptPartIsRefusedByNameAndThePreviousCheckpointUsed) {
  CheckpointManifest manifest(root_, federates_, 2);
  checkpoint(manifest, 1000);
  checkpoint(manifest, 2000);
  const std::string part = part_path(checkpoint_directory(root_, 2000), "a");
  {
    std::fstream file(part, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(20);
    file.put('X');
  }
  std::vector<std::string> refused;
  const auto usable = latest_usable_checkpoint(root_, federates_, &refused);
  ASSERT_TRUE(usable.has_value());
  EXPECT_EQ(usable->tag.time_ns(), 1000);
  ASSERT_EQ(refused.size(), 1U);
  EXPECT_NE(refused[0].find("checkpoint 2000: part a: " + part + ": corrupt (checksum mismatch)"),
            std::string::npos)
      << refused[0];
}

TEST_F(CheckpointStore, ATruncatedPartOrAttachmentIsRefusedByName) {
  CheckpointManifest manifest(root_, federates_, 3);
  checkpoint(manifest, 1000);
  checkpoint(manifest, 2000);
  checkpoint(manifest, 3000);
  const std::string part = part_path(checkpoint_directory(root_, 3000), "b");
  fs::resize_file(part, fs::file_size(part) - 3);
  const fs::path table = fs::path(checkpoint_directory(root_, 2000)) / "b.table";
  fs::resize_file(table, 2);
  std::vector<std::string> refused;
  const auto usable = latest_usable_checkpoint(root_, federates_, &refused);
  ASSERT_TRUE(usable.has_value());
  EXPECT_EQ(usable->tag.time_ns(), 1000);
  ASSERT_EQ(refused.size(), 2U);
  EXPECT_NE(refused[0].find("checkpoint 3000: part b: " + part + ": truncated"), std::string::npos)
      << refused[0];
  EXPECT_NE(refused[1].find("checkpoint 2000: part b: " + table.string() + ": truncated"),
            std::string::npos)
      << refused[1];
}

// What a damaged directory can hold instead of its files: a pipe (whose reader would wait for
// ever), a part larger than its manifest lists (read whole, it could take any memory), a manifest
// line whose checksum is no number, a directory named by more digits than a time holds. Each
// checkpoint is refused by name and an older one used; a run that resumes from the older one
// writes the newer checkpoints anew over what the damage left.
TEST_F(CheckpointStore, PipesOversizedPartsAndGarbledManifestsAreRefusedByName) {
  CheckpointManifest manifest(root_, federates_, 5);
  for (const std::int64_t t : {1000, 2000, 3000, 4000}) checkpoint(manifest, t);
  const std::string pipe = part_path(checkpoint_directory(root_, 4000), "a");
  fs::remove(pipe);
  ASSERT_EQ(::mkfifo(pipe.c_str(), 0600), 0);
  const std::string big = part_path(checkpoint_directory(root_, 3000), "b");
  fs::resize_file(big, std::uintmax_t{1} << 34);  // sparse: 16 GiB, none of it on disk
  const std::string listing = (fs::path(checkpoint_directory(root_, 2000)) / "manifest").string();
  std::string text;
  {
    std::ifstream in(listing);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const auto at = text.find("part a ");
  ASSERT_NE(at, std::string::npos) << text;
  const auto checksum = text.find(' ', at + 7) + 1;  // "part a BYTES CHECKSUM HOST"
  text.replace(checksum, 4, "zzzz");
  std::ofstream(listing) << text;
  fs::create_directories(fs::path(root_) / "99999999999999999999");
  std::ofstream(fs::path(root_) / "99999999999999999999" / "manifest") << "x";

  std::vector<std::string> refused;
  const auto usable = latest_usable_checkpoint(root_, federates_, &refused);
  ASSERT_TRUE(usable.has_value());
  EXPECT_EQ(usable->tag.time_ns(), 1000);
  ASSERT_EQ(refused.size(), 3U);
  EXPECT_NE(refused[0].find(pipe + ": not a regular file"), std::string::npos) << refused[0];
  EXPECT_NE(refused[1].find(big + ": 17179869184 bytes, more than the"), std::string::npos)
      << refused[1];
  EXPECT_NE(refused[2].find(listing + ": bad line 'part a "), std::string::npos) << refused[2];
  // The run resumed from 1000 writes 4000 again: the pipe is replaced by the new part.
  std::vector<StateAttachment> none;
  const PartInfo again = write_part(checkpoint_directory(root_, 4000), "a", {4000, 0}, none, "a");
  EXPECT_TRUE(fs::is_regular_file(pipe));
  EXPECT_EQ(read_part(checkpoint_directory(root_, 4000), "a").info.checksum, again.checksum);
  checkpoint(manifest, 5000);  // completing one prunes: the oversized name is no time, left alone
  EXPECT_TRUE(fs::exists(fs::path(root_) / "99999999999999999999"));
}

TEST_F(CheckpointStore, APartOfAnotherFederateOrAnotherTagIsRefused) {
  CheckpointManifest manifest(root_, federates_, 2);
  checkpoint(manifest, 1000);
  checkpoint(manifest, 2000);
  // a's part of 1000 copied over a's part of 2000: readable, but not what the manifest lists.
  fs::copy_file(part_path(checkpoint_directory(root_, 1000), "a"),
                part_path(checkpoint_directory(root_, 2000), "a"),
                fs::copy_options::overwrite_existing);
  std::vector<std::string> refused;
  const auto usable = latest_usable_checkpoint(root_, federates_, &refused);
  ASSERT_TRUE(usable.has_value());
  EXPECT_EQ(usable->tag.time_ns(), 1000);
  ASSERT_EQ(refused.size(), 1U);
  EXPECT_NE(refused[0].find("not the part its manifest lists"), std::string::npos) << refused[0];
}

}  // namespace
}  // namespace tagflow::coordinator
