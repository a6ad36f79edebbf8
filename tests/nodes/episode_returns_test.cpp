#include "nodes/episode_returns.hpp"

#include <numeric>
#include <vector>

#include <gtest/gtest.h>

namespace tagflow::nodes {
namespace {

std::vector<double> returns_upto(int n) {
  std::vector<double> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 1.0);
  return v;
}

EpisodeReturns reloaded(const EpisodeReturns& r) {
  StateWriter out;
  r.save(out);
  const std::string bytes = out.take();
  StateReader in(bytes, "returns");
  EpisodeReturns back;
  back.load(in);
  in.expect_end();
  return back;
}

TEST(EpisodeReturns, KeepsEveryReturnUpToTheBound) {
  EpisodeReturns r;
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(r.last(), 0.0);
  const int bound = static_cast<int>(EpisodeReturns::kFirst + EpisodeReturns::kLatest);
  r.add(returns_upto(bound));
  EXPECT_EQ(r.count(), bound);
  EXPECT_EQ(r.kept(), returns_upto(bound));
  EXPECT_EQ(r.last(), static_cast<double>(bound));
}

TEST(EpisodeReturns, PastTheBoundKeepsTheFirstAndTheLatest) {
  EpisodeReturns r;
  for (const double v : returns_upto(250'000)) r.add(v);
  EXPECT_EQ(r.count(), 250'000);
  const std::vector<double> kept = r.kept();
  ASSERT_EQ(kept.size(), EpisodeReturns::kFirst + EpisodeReturns::kLatest);
  EXPECT_EQ(kept.front(), 1.0);
  EXPECT_EQ(kept[EpisodeReturns::kFirst - 1], static_cast<double>(EpisodeReturns::kFirst));
  EXPECT_EQ(kept[EpisodeReturns::kFirst], 250'000.0 - EpisodeReturns::kLatest + 1);
  EXPECT_EQ(kept.back(), 250'000.0);
  EXPECT_EQ(r.last(), 250'000.0);
}

TEST(EpisodeReturns, CheckpointKeepsCountAndReturns) {
  for (const int n : {0, 7, 1500, 4321}) {
    EpisodeReturns r;
    r.add(returns_upto(n));
    const EpisodeReturns back = reloaded(r);
    EXPECT_EQ(back.count(), n);
    EXPECT_EQ(back.kept(), r.kept());
    EXPECT_EQ(back.last(), r.last());
    // Going on after the resume keeps what an uninterrupted run keeps.
    EpisodeReturns on = back;
    r.add(returns_upto(3000));
    on.add(returns_upto(3000));
    EXPECT_EQ(on.kept(), r.kept());
    EXPECT_EQ(on.count(), r.count());
  }
}

TEST(EpisodeReturns, ReadsTheEarlierLayoutOfEveryReturn) {
  StateWriter out;
  out.f64_vector(returns_upto(2500));
  out.boolean(true);  // what follows in the part stays where it was
  const std::string bytes = out.take();
  StateReader in(bytes, "old part");
  EpisodeReturns r;
  r.load(in);
  EXPECT_TRUE(in.boolean());
  in.expect_end();
  EpisodeReturns expected;
  expected.add(returns_upto(2500));
  EXPECT_EQ(r.count(), 2500);
  EXPECT_EQ(r.kept(), expected.kept());
}

TEST(EpisodeReturns, RefusesInconsistentState) {
  const auto load = [](std::int64_t count, const std::vector<double>& first,
                       const std::vector<double>& latest) {
    StateWriter out;
    out.u64(~std::uint64_t{0});
    out.i64(count);
    out.f64_vector(first);
    out.f64_vector(latest);
    const std::string bytes = out.take();
    StateReader in(bytes, "part sampler-0");
    EpisodeReturns r;
    r.load(in);
  };
  EXPECT_NO_THROW(load(3, {1, 2, 3}, {}));
  EXPECT_THROW(load(2, {1, 2, 3}, {}), StateError);           // fewer episodes than returns
  EXPECT_THROW(load(5, {1, 2, 3}, {}), StateError);           // episodes missing
  EXPECT_THROW(load(4, {1, 2, 3}, {4}), StateError);          // latest before first is full
  EXPECT_THROW(load(3, returns_upto(1001), {}), StateError);  // more first than kept
  // A legacy vector longer than the bytes left.
  StateWriter out;
  out.u64(1000);
  out.f64(1.0);
  const std::string bytes = out.take();
  StateReader in(bytes, "old part");
  EpisodeReturns r;
  try {
    r.load(in);
    FAIL() << "a truncated vector was read";
  } catch (const StateError& e) {
    EXPECT_NE(std::string(e.what()).find("old part"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tagflow::nodes
