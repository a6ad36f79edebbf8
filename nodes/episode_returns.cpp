#include "nodes/episode_returns.hpp"

#include <limits>
#include <string>

namespace tagflow::nodes {
namespace {

// A legacy checkpoint starts with the count of a vector of doubles, which can never be this.
constexpr std::uint64_t kBoundedLayout = std::numeric_limits<std::uint64_t>::max();

}  // namespace

void EpisodeReturns::add(double episode_return) {
  ++count_;
  if (first_.size() < kFirst) {
    first_.push_back(episode_return);
    return;
  }
  latest_.push_back(episode_return);
  if (latest_.size() > kLatest) latest_.pop_front();
}

void EpisodeReturns::add(const std::vector<double>& returns) {
  for (const double r : returns) add(r);
}

double EpisodeReturns::last() const {
  if (!latest_.empty()) return latest_.back();
  return first_.empty() ? 0.0 : first_.back();
}

std::vector<double> EpisodeReturns::kept() const {
  std::vector<double> out(first_);
  out.insert(out.end(), latest_.begin(), latest_.end());
  return out;
}

void EpisodeReturns::save(StateWriter& out) const {
  out.u64(kBoundedLayout);
  out.i64(count_);
  out.f64_vector(first_);
  out.f64_vector(std::vector<double>(latest_.begin(), latest_.end()));
}

void EpisodeReturns::load(StateReader& in) {
  *this = EpisodeReturns{};
  const std::uint64_t head = in.u64();
  if (head != kBoundedLayout) {
    // Every return, as a vector (its count already read).
    if (head > in.left() / sizeof(double)) {
      in.fail("a vector of " + std::to_string(head) + " episode returns");
    }
    for (std::uint64_t i = 0; i < head; ++i) add(in.f64());
    return;
  }
  const std::int64_t count = in.i64();
  std::vector<double> first = in.f64_vector();
  std::vector<double> latest = in.f64_vector();
  if (first.size() > kFirst || latest.size() > kLatest ||
      (!latest.empty() && first.size() != kFirst) ||
      count < static_cast<std::int64_t>(first.size() + latest.size()) ||
      (count > static_cast<std::int64_t>(first.size() + latest.size()) &&
       latest.size() != kLatest)) {
    in.fail("episode returns: " + std::to_string(count) + " episodes with " +
            std::to_string(first.size()) + " first and " + std::to_string(latest.size()) +
            " latest returns kept");
  }
  count_ = count;
  first_ = std::move(first);
  latest_.assign(latest.begin(), latest.end());
}

}  // namespace tagflow::nodes
