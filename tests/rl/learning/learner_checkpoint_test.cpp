#include "rl/learning/learner_checkpoint.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "rl/learning/dqn_learner.hpp"
#include "tests/rl/learning/learning_test_util.hpp"

namespace tagflow::learning {
namespace {

using testing::ScratchDir;
using testing::synthetic_batch;

DqnConfig config_with_seed(std::uint64_t seed) {
  DqnConfig config;
  config.network = MlpSpec{3, {16}, 2};
  config.target_update = 4;
  config.seed = seed;
  return config;
}

void train(DqnLearner& learner, int first, int count) {
  for (int i = first; i < first + count; ++i) {
    (void)learner.update(synthetic_batch(3, 2, 16, static_cast<std::uint64_t>(i), 0.9F));
  }
}

TEST(LearnerCheckpoint, RestoredLearnerContinuesBitForBit) {
  const ScratchDir dir("checkpoint_continue");
  DqnLearner original(config_with_seed(1));
  train(original, 0, 7);
  save_checkpoint(original.state(), dir.file("learner.ckpt"));
  train(original, 7, 6);

  DqnLearner restored(config_with_seed(2));
  restored.restore(load_checkpoint(dir.file("learner.ckpt")));
  EXPECT_EQ(restored.updates(), 7);
  train(restored, 7, 6);
  EXPECT_EQ(restored.weights().values, original.weights().values);
  EXPECT_EQ(restored.state().target, original.state().target);
  EXPECT_EQ(restored.state().adam_v, original.state().adam_v);
}

TEST(LearnerCheckpoint, OverwritesAtomicallyLeavingNoTemporaryFile) {
  const ScratchDir dir("checkpoint_atomic");
  DqnLearner learner(config_with_seed(3));
  const std::string path = dir.file("learner.ckpt");
  save_checkpoint(learner.state(), path);
  train(learner, 0, 2);
  save_checkpoint(learner.state(), path);
  EXPECT_EQ(load_checkpoint(path).updates, 2);
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    ++files;
    EXPECT_EQ(entry.path().filename(), "learner.ckpt");
  }
  EXPECT_EQ(files, 1);
}

TEST(LearnerCheckpoint, RejectsCorruptTruncatedAndForeignFiles) {
  const ScratchDir dir("checkpoint_corrupt");
  DqnLearner learner(config_with_seed(4));
  const std::string path = dir.file("learner.ckpt");
  save_checkpoint(learner.state(), path);
  const auto size = std::filesystem::file_size(path);
  {
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(size / 2));
    file.put('\x7f');
  }
  EXPECT_THROW((void)load_checkpoint(path), LearnerStateError);
  std::filesystem::resize_file(path, size / 3);
  EXPECT_THROW((void)load_checkpoint(path), LearnerStateError);
  std::ofstream(path, std::ios::trunc) << "hello, not a checkpoint at all";
  EXPECT_THROW((void)load_checkpoint(path), LearnerStateError);
  EXPECT_THROW((void)load_checkpoint(dir.file("missing.ckpt")), LearnerStateError);
}

TEST(LearnerCheckpoint, RefusesAStateOfAnotherNetworkShape) {
  DqnConfig wide = config_with_seed(5);
  wide.network = MlpSpec{3, {32}, 2};
  DqnLearner learner(wide);
  const DqnLearner narrow(config_with_seed(5));
  EXPECT_THROW(learner.restore(narrow.state()), LearnerStateError);
}

}  // namespace
}  // namespace tagflow::learning
