// The cluster's name is a path component (the run's log directory, runs/NAME-TIME) and a label:
// it is restricted to a safe alphabet so that a file cannot make `tagflow up` write outside
// runs/ (`cluster: ../../../tmp/x`) or put control characters in a log. `tagflow keys generate`
// holds the names of key pairs (file names in its DIR) to the same rule. Pure functions.
#pragma once

#include <cstddef>
#include <string>

namespace tagflow::cluster {

inline constexpr std::size_t kMaxClusterNameChars = 64;

/// 1..64 ASCII letters, digits, '_', '-' and '.', starting with a letter or a digit (so never
/// "." or "..", and never a path).
[[nodiscard]] bool is_safe_cluster_name(const std::string& name);

/// The rule above and the name given (escaped), for the error of a name that breaks it;
/// `names` says whose ("cluster names", "policy names").
[[nodiscard]] std::string safe_cluster_name_rule(const std::string& name,
                                                 const std::string& names = "cluster names");

}  // namespace tagflow::cluster
