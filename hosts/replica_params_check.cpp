#include "hosts/replica_params_check.hpp"

#include <stdexcept>

#include "nodes/kind/replica_config.hpp"
#include "nodes/node_params.hpp"

namespace tagflow::hosts {

namespace {

/// Where an error about a group's params as a whole points: its `params` key, else its name.
int params_line(const cluster::NodeConfig& group) {
  return group.params_line > 0 ? group.params_line : group.line;
}

}  // namespace

void check_replica_params(const cluster::ClusterConfig& config) {
  const ClusterFacts facts = ClusterFacts::of(config);
  for (const cluster::NodeConfig& group : config.nodes) {
    for (int index = 0; index < group.replicas; ++index) {
      try {
        (void)replica_config(config, facts, cluster::replica_name(group, index));
      } catch (const nodes::ParamError& e) {  // the param's own line and key, when it has them
        const bool named = !e.param().empty() && e.line() > 0;
        throw cluster::ConfigError(
            config.file, named ? e.line() : params_line(group),
            "nodes." + group.name + ".params" + (named ? "." + e.param() : std::string()),
            e.what());
      } catch (const std::invalid_argument& e) {
        throw cluster::ConfigError(config.file, params_line(group),
                                   "nodes." + group.name + ".params", e.what());
      }
    }
  }
}

}  // namespace tagflow::hosts
