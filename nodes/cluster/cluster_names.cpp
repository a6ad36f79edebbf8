#include "nodes/cluster/cluster_names.hpp"

#include <algorithm>

#include "common/log_text.hpp"

namespace tagflow::cluster {
namespace {

bool is_ascii_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

}  // namespace

bool is_safe_cluster_name(const std::string& name) {
  if (name.empty() || name.size() > kMaxClusterNameChars || !is_ascii_alnum(name.front())) {
    return false;
  }
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return is_ascii_alnum(c) || c == '_' || c == '-' || c == '.'; });
}

std::string safe_cluster_name_rule(const std::string& name, const std::string& names) {
  return names + " are 1 to " + std::to_string(kMaxClusterNameChars) +
         " letters, digits, '_', '-' and '.', starting with a letter or a digit; got '" +
         escape_for_log(name) + "'";
}

}  // namespace tagflow::cluster
