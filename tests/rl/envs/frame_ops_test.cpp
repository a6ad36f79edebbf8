#include "rl/envs/frame_ops.hpp"

#include <vector>

#include <gtest/gtest.h>

namespace tagflow::envs {
namespace {

TEST(FrameOps, GreyIsBt601Luma) {
  EXPECT_EQ(rgb_to_grey(0, 255, 0), 150);  // 149.685
  EXPECT_EQ(rgb_to_grey(0, 0, 0), 0);
  EXPECT_EQ(rgb_to_grey(255, 255, 255), 255);
  EXPECT_EQ(rgb_to_grey(144, 72, 17), 87);   // 0.299·144 + 0.587·72 + 0.114·17 = 87.26
  EXPECT_EQ(rgb_to_grey(92, 186, 92), 147);  // 0.299·92 + 0.587·186 + 0.114·92 = 147.18
}

TEST(AreaResizer, KeepsAConstantImageConstant) {
  std::vector<std::uint8_t> in(210 * 160, 87);
  std::vector<std::uint8_t> out(84 * 84);
  AreaResizer(210, 160, 84, 84, 1).resize(in.data(), out.data());
  for (std::uint8_t v : out) ASSERT_EQ(v, 87);
}

TEST(AreaResizer, AveragesIntegerBlocks) {
  // 4×4 → 2×2: each output is the mean of a 2×2 block.
  const std::vector<std::uint8_t> in = {0, 4, 10,  10,   //
                                        8, 4, 10,  10,   //
                                        1, 1, 0,   255,  //
                                        1, 1, 255, 0};
  std::vector<std::uint8_t> out(4);
  AreaResizer(4, 4, 2, 2, 1).resize(in.data(), out.data());
  EXPECT_EQ(out, (std::vector<std::uint8_t>{4, 10, 1, 128}));
}

TEST(AreaResizer, WeighsFractionalOverlaps) {
  // 1×5 → 1×2: scale 2.5; output 0 = (a + b + c/2) / 2.5, output 1 = (c/2 + d + e) / 2.5.
  const std::vector<std::uint8_t> in = {10, 20, 30, 40, 50};
  std::vector<std::uint8_t> out(2);
  AreaResizer(1, 5, 1, 2, 1).resize(in.data(), out.data());
  EXPECT_EQ(out, (std::vector<std::uint8_t>{18, 42}));  // 45 / 2.5, 105 / 2.5
}

TEST(AreaResizer, ResizesEachChannelSeparately) {
  std::vector<std::uint8_t> in(2 * 2 * 3);
  for (int p = 0; p < 4; ++p) {
    in[p * 3] = 200;
    in[p * 3 + 1] = static_cast<std::uint8_t>(p * 10);
    in[p * 3 + 2] = 7;
  }
  std::vector<std::uint8_t> out(3);
  AreaResizer(2, 2, 1, 1, 3).resize(in.data(), out.data());
  EXPECT_EQ(out, (std::vector<std::uint8_t>{200, 15, 7}));
}

TEST(AreaResizer, RejectsEmptySizes) {
  EXPECT_THROW(AreaResizer(0, 4, 2, 2, 1), std::invalid_argument);
}

}  // namespace
}  // namespace tagflow::envs
