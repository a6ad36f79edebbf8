#include "hosts/run_summary.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>

namespace tagflow::hosts {

std::string RunSummary::digest_hex() const {
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(digest));
  return text;
}

std::string RunSummary::to_json() const {
  nlohmann::ordered_json j;
  j["mode"] = mode;
  j["placement"] = placement;
  j["stop_reason"] = stop_reason;
  j["mean_return"] = mean_return;
  j["env_steps"] = env_steps;
  j["seconds"] = seconds;
  j["updates"] = updates;
  j["weights_version"] = weights_version;
  j["digest"] = digest_hex();
  j["digest_reproducible"] = digest_reproducible;
  j["evaluations"] = evaluations;
  nlohmann::ordered_json per_node = nlohmann::ordered_json::object();
  for (const NodeThroughput& n : nodes) {
    per_node[n.name] = {
        {"kind", n.kind}, {"unit", n.unit}, {"count", n.count}, {"per_second", n.per_second}};
  }
  j["nodes"] = per_node;
  return j.dump(2);
}

}  // namespace tagflow::hosts
