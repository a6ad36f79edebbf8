// JoinedRoster: the samplers that joined a running actor-mode cluster (`tagflow node --name
// GROUP-K --join`), as the launcher of `tagflow up` learns of them.
//
// The launcher starts only the processes of the cluster file; a joined sampler is started by
// someone else, so the launcher finds it through the nodes it links to: in actor mode replay,
// learner and inference export tagflow_actor_members{peer="GROUP-K"} (1 while linked, 0 once it
// left or died). Each round of the progress reporter:
//   1. update_members() reads the members every planned process reported. A name that is not a
//      process of the file and names a sampler group with a metrics port is a joined sampler. It
//      is in while some node that answered lists it with 1, out once every node that lists it says
//      0; a round in which no answering node lists it changes nothing (a missed scrape is not a
//      leave). It returns the endpoints of the joined samplers that are in (sampler metrics_port
//      + K, cluster::transient_scrape_target).
//   2. record() keeps each joined sampler's latest env steps and episodes from its own endpoint.
//      A sampler that left keeps its last count: what the run summary reports for it.
// Pure (no I/O). Not thread-safe: one owner (the reporter's thread; read joined() after it ended).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "cli/launch/progress_line.hpp"
#include "nodes/cluster/cluster_config.hpp"
#include "nodes/cluster/scrape_targets.hpp"

namespace tagflow::cli {

struct JoinedReplica {
  std::string name;            // GROUP-K
  std::string kind;            // its group's kind (a transient one)
  std::int64_t env_steps = 0;  // the last count its endpoint reported (over every time it joined)
  std::int64_t episodes = 0;
  bool in = true;  // linked to a node as of the latest round
  // The counts of its earlier stays, when the same name left and joined again (a new process,
  // whose counters start at 0).
  std::int64_t base_steps = 0;
  std::int64_t base_episodes = 0;
};

class JoinedRoster {
 public:
  /// `planned`: the processes of the file (their names are never joined samplers).
  JoinedRoster(cluster::ClusterConfig config, const std::vector<cluster::ScrapeTarget>& planned);

  /// Step 1 above; returns the endpoints to probe this round.
  std::vector<cluster::ScrapeTarget> update_members(const std::vector<ProcessSample>& round);

  /// Step 2 above: the answer of a joined sampler's endpoint (ignored when it did not answer).
  void record(const ProcessSample& sample);

  /// Every sampler that joined so far, in the order they were first seen.
  [[nodiscard]] const std::vector<JoinedReplica>& joined() const { return joined_; }

 private:
  JoinedReplica* find(const std::string& name);

  cluster::ClusterConfig config_;
  std::set<std::string> planned_;
  std::vector<JoinedReplica> joined_;
};

}  // namespace tagflow::cli
