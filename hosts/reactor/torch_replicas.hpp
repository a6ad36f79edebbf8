// make_replica: the ReplicaFactory for every node kind, including the LibTorch ones (learner,
// inference). Library tagflow_nodes_torch; processes without those kinds use
// make_torch_free_replica() (replica_binding.hpp) and never link LibTorch.
//
// The learner evaluates its policy (fixed-seed episodes) every eval_every updates when the file
// has stop.target_return, and stops the run when the mean reaches it. Its result carries the
// weights hash as of the cutoff and the run's mean return: the evaluation that reached the
// target, or else one evaluation of the weights it holds at the end.
// Errors and thread-safety as ReplicaFactory.
#pragma once

#include <memory>

#include "hosts/reactor/replica_binding.hpp"

namespace tagflow::hosts {

[[nodiscard]] std::unique_ptr<ReplicaBinding> make_replica(const ReplicaSetup& setup,
                                                           reactors::Environment& env);

}  // namespace tagflow::hosts
