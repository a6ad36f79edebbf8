#include "cli/launch/joined_roster.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "nodes/node_metrics.hpp"

namespace tagflow::cli {
namespace {

using nodes::family::kEnvSteps;
using nodes::family::kEpisodes;

}  // namespace

JoinedRoster::JoinedRoster(cluster::ClusterConfig config,
                           const std::vector<cluster::ScrapeTarget>& planned)
    : config_(std::move(config)) {
  for (const cluster::ScrapeTarget& target : planned) planned_.insert(target.process);
  for (const cluster::NodeConfig& node : config_.nodes) {
    for (int i = 0; i < node.replicas; ++i) planned_.insert(cluster::replica_name(node, i));
  }
}

JoinedReplica* JoinedRoster::find(const std::string& name) {
  for (JoinedReplica& sampler : joined_) {
    if (sampler.name == name) return &sampler;
  }
  return nullptr;
}

std::vector<cluster::ScrapeTarget> JoinedRoster::update_members(
    const std::vector<ProcessSample>& round) {
  std::map<std::string, bool> listed;  // name → some answering node lists it as in
  for (const ProcessSample& sample : round) {
    if (!sample.probe.answered) continue;
    for (const auto& [name, value] : sample.probe.members) {
      listed[name] = listed[name] || value >= 0.5;
    }
  }
  for (const auto& [name, in] : listed) {
    if (planned_.count(name) != 0) continue;
    JoinedReplica* sampler = find(name);
    if (sampler == nullptr) {
      if (!in || !cluster::transient_scrape_target(config_, name)) continue;
      const std::string group = name.substr(0, name.rfind('-'));
      joined_.push_back(JoinedReplica{name, config_.find_node(group)->kind->name});
      sampler = &joined_.back();
    }
    if (in && !sampler->in) {  // back after it left: a new process, whose counters restart
      sampler->base_steps = sampler->env_steps;
      sampler->base_episodes = sampler->episodes;
    }
    sampler->in = in;
  }
  std::vector<cluster::ScrapeTarget> targets;
  for (const JoinedReplica& sampler : joined_) {
    if (!sampler.in) continue;
    if (auto target = cluster::transient_scrape_target(config_, sampler.name)) {
      targets.push_back(std::move(*target));
    }
  }
  return targets;
}

void JoinedRoster::record(const ProcessSample& sample) {
  JoinedReplica* sampler = find(sample.process);
  if (sampler == nullptr || !sample.probe.answered) return;
  const auto steps = sample.probe.values.find(kEnvSteps);
  if (steps != sample.probe.values.end()) {
    sampler->env_steps = std::max(sampler->env_steps,
                                  sampler->base_steps + static_cast<std::int64_t>(steps->second));
  }
  const auto episodes = sample.probe.values.find(kEpisodes);
  if (episodes != sample.probe.values.end()) {
    sampler->episodes = std::max(
        sampler->episodes, sampler->base_episodes + static_cast<std::int64_t>(episodes->second));
  }
}

}  // namespace tagflow::cli
