#include "monitoring/process_identity.hpp"

#include <array>
#include <utility>

namespace tagflow::monitoring {
namespace {

constexpr std::array<std::pair<ProcessKind, const char*>, 5> kKindNames = {{
    {ProcessKind::coordinator, "coordinator"},
    {ProcessKind::sampler, "sampler"},
    {ProcessKind::replay, "replay"},
    {ProcessKind::learner, "learner"},
    {ProcessKind::inference, "inference"},
}};

}  // namespace

const char* to_string(ProcessKind kind) {
  for (const auto& [k, name] : kKindNames) {
    if (k == kind) return name;
  }
  return "unknown";
}

std::optional<ProcessKind> parse_process_kind(const std::string& text) {
  for (const auto& [k, name] : kKindNames) {
    if (text == name) return k;
  }
  return std::nullopt;
}

ProcessKind process_kind(cluster::NodeKind kind) {
  switch (kind) {
    case cluster::NodeKind::sampler:
      return ProcessKind::sampler;
    case cluster::NodeKind::replay:
      return ProcessKind::replay;
    case cluster::NodeKind::learner:
      return ProcessKind::learner;
    case cluster::NodeKind::inference:
      return ProcessKind::inference;
  }
  return ProcessKind::sampler;
}

}  // namespace tagflow::monitoring
