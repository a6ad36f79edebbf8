#include "hosts/reactor/federate_checkpoint.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace tagflow::hosts {
namespace {

namespace fs = std::filesystem;

class PruneOwnParts : public ::testing::Test {
 protected:
  PruneOwnParts()
      : root_(fs::temp_directory_path() /
              ("tagflow-prune-" + std::to_string(::getpid()) + "-" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  ~PruneOwnParts() override { fs::remove_all(root_); }
  void touch(const std::string& checkpoint, const std::string& name) const {
    fs::create_directories(root_ / checkpoint);
    std::ofstream(root_ / checkpoint / name) << "x";
  }
  [[nodiscard]] bool exists(const std::string& relative) const {
    return fs::exists(root_ / relative);
  }
  fs::path root_;
};

TEST_F(PruneOwnParts, RemovesItsPartsAttachmentsAndAKilledWritersTemporariesOfOldCheckpoints) {
  // A checkpoint this federate alone wrote to (a host without the coordinator), where a writer
  // killed while it completed the table left its temporary: the whole directory goes.
  touch("1000", "replay.part");
  touch("1000", ".replay.table.tmp.4242");
  touch("1000", ".replay.part.tmp.4242");
  // One it shares with another federate of the host: only its own files go.
  touch("2000", "replay.part");
  touch("2000", "replay.table");
  touch("2000", "sampler_0.part");
  touch("2000", ".sampler_0.part.tmp.17");
  // New enough to keep.
  touch("3000", "replay.part");
  touch("3000", ".replay.table.tmp.4242");
  // Not checkpoints: never touched.
  touch("run", "replay.part");
  std::ofstream(root_ / "replay.stats") << "parts 3\n";

  prune_own_parts(root_.string(), "replay", 3000);

  EXPECT_FALSE(exists("1000")) << "emptied, so removed";
  EXPECT_FALSE(exists("2000/replay.part"));
  EXPECT_FALSE(exists("2000/replay.table"));
  EXPECT_TRUE(exists("2000/sampler_0.part"));
  EXPECT_TRUE(exists("2000/.sampler_0.part.tmp.17"));
  EXPECT_TRUE(exists("3000/replay.part"));
  EXPECT_TRUE(exists("3000/.replay.table.tmp.4242"));
  EXPECT_TRUE(exists("run/replay.part"));
  EXPECT_TRUE(exists("replay.stats"));
}

TEST_F(PruneOwnParts, AFederateWhoseNameStartsAnothersDoesNotTakeItsFiles) {
  touch("1000", "replay_2.part");
  touch("1000", ".replay_2.table.tmp.9");
  prune_own_parts(root_.string(), "replay", 5000);
  EXPECT_TRUE(exists("1000/replay_2.part"));
  EXPECT_TRUE(exists("1000/.replay_2.table.tmp.9"));
}

TEST_F(PruneOwnParts, AMissingRootIsNotAnError) {
  fs::remove_all(root_);
  prune_own_parts(root_.string(), "replay", 5000);
  EXPECT_FALSE(fs::exists(root_));
}

}  // namespace
}  // namespace tagflow::hosts
