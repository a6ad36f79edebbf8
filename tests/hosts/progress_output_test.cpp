// ProgressOutput (hosts/progress_output.hpp): a one-process run's live line is rewritten in place
// on a terminal and is a new line once a second into a file or a pipe.
#include "hosts/progress_output.hpp"

#include <algorithm>
#include <string>

#include <gtest/gtest.h>

namespace tagflow::hosts {
namespace {

ProgressFigures at(double elapsed) {
  ProgressFigures f;
  f.elapsed = elapsed;
  f.env_steps = static_cast<std::int64_t>(elapsed * 1000);
  return f;
}

TEST(ProgressOutput, IntoAFileItWritesANewLineOnceASecondAndNoCarriageReturn) {
  ::testing::internal::CaptureStderr();
  ProgressOutput output(false);
  for (const double elapsed : {0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.25}) {
    output.show(at(elapsed));
  }
  output.finish();
  const std::string text = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3) << text;  // at 0.25, 1.0 and 2.0
  EXPECT_EQ(text.find('\r'), std::string::npos) << text;
  EXPECT_NE(text.find("env steps       250"), std::string::npos) << text;
  EXPECT_NE(text.find("env steps      2000"), std::string::npos) << text;
  // The rate is over the last show() (0.25 s and 250 steps before), shown or not.
  EXPECT_NE(text.find("env steps      2000 (    1000/s)"), std::string::npos) << text;
}

TEST(ProgressOutput, OnATerminalItRewritesTheLineAtEveryShowAndEndsIt) {
  ::testing::internal::CaptureStderr();
  ProgressOutput output(true);
  for (const double elapsed : {0.25, 0.5, 0.75}) output.show(at(elapsed));
  output.finish();
  const std::string text = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\r'), 3) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
  EXPECT_EQ(text.back(), '\n');
}

TEST(ProgressOutput, TheSamplerCountIsShownOnlyWhenGiven) {
  ProgressFigures f = at(1.0);
  EXPECT_EQ(progress_text(f, 0.0, 0.0).find("samplers"), std::string::npos);
  f.samplers = 2;
  EXPECT_NE(progress_text(f, 0.0, 0.0).find("samplers 2"), std::string::npos);
}

TEST(ProgressOutput, NoEvaluationYetIsADashNotAZero) {
  ProgressFigures f = at(1.0);
  EXPECT_NE(progress_text(f, 0.0, 0.0).find("  eval      -  weights"), std::string::npos)
      << progress_text(f, 0.0, 0.0);
  f.evaluation = 0.0;
  EXPECT_NE(progress_text(f, 0.0, 0.0).find("  eval    0.0  weights"), std::string::npos)
      << progress_text(f, 0.0, 0.0);
}

}  // namespace
}  // namespace tagflow::hosts
