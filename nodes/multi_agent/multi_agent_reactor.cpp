#include "nodes/multi_agent/multi_agent_reactor.hpp"

#include <iostream>
#include <stdexcept>

namespace tagflow::nodes {

MultiAgentReactor::MultiAgentReactor(std::string name, reactors::Environment& env,
                                     const MultiAgentNodeConfig& config,
                                     const MultiAgentPortWidths& widths,
                                     std::chrono::nanoseconds round_period)
    : reactors::Reactor(std::move(name), env),
      actions("actions", this, widths.actions),
      observations("observations", this, widths.observations.size()),
      transitions("transitions", this, widths.transitions.size()),
      server_(config),
      observation_policies_(widths.observations),
      transition_policies_(widths.transitions),
      observation_storage_(widths.observations.size()),
      round_("round", this, reactors::Duration::zero(), round_period),
      observations_digest_(widths.observations.size(), env),
      transitions_digest_(widths.transitions.size(), env) {
  if (widths.observations.empty() || widths.actions == 0) {
    throw std::invalid_argument("multi_agent " + this->name() +
                                ": connect its observations to inference servers and their "
                                "actions back (nobody would act for its agents)");
  }
  reaction("request_actions").triggers(round_).effects(observations).body([this] { request(); });
  reaction("step_env").triggers(actions).effects(transitions, observations).body([this] {
    on_answers();
  });
}

void MultiAgentReactor::request() {
  if (waiting_ || server_.finished()) return;
  for (std::size_t c = 0; c < observations.size(); ++c) {
    AgentObservationsMessage& message = observation_storage_[c].next();
    server_.observations(observation_policies_[c], message);
    if (message.rows() == 0) continue;
    auto encoded = observation_storage_[c].share();
    observations_digest_.record(c, tag(), encoded->bytes());
    observations[c].set(std::move(encoded));  // moved: no count taken and dropped again
  }
  waiting_ = true;
}

void MultiAgentReactor::on_answers() {
  for (std::size_t c = 0; c < actions.size(); ++c) {
    if (!actions[c].is_present()) continue;
    std::string why;
    if (!server_.on_actions(actions[c].get()->value(), &why)) {
      if (dropped_answers.fetch_add(1) == 0) {
        std::cerr << name() << ": dropped an answer on actions[" << c << "]: " << why
                  << " (further drops are only counted)\n";
      }
    }
  }
  if (!waiting_ || !server_.ready()) return;
  waiting_ = false;
  std::vector<TransitionsMessage> rows = server_.step(transitions.size() > 0);
  const auto now = std::chrono::steady_clock::now();
  if (last_step_ != std::chrono::steady_clock::time_point{}) {
    const float seconds = std::chrono::duration<float>(now - last_step_).count();
    if (step_intervals_.size() < kKeptIntervals) {
      step_intervals_.push_back(seconds);
    } else {
      step_intervals_[intervals_seen_ % kKeptIntervals] = seconds;
    }
    ++intervals_seen_;
  }
  last_step_ = now;
  if (!rows.empty()) {
    for (std::size_t c = 0; c < transitions.size(); ++c) {
      for (const int policy : transition_policies_[c]) {
        TransitionsMessage& m = rows[static_cast<std::size_t>(policy)];
        if (m.rows() == 0) continue;
        auto encoded = make_encoded(std::move(m));
        transitions_digest_.record(c, tag(), encoded->bytes());
        transitions[c].set(std::move(encoded));
        break;  // a replay replica hosts one policy (policy_config.hpp)
      }
    }
  }
  publish_stats();
  if (step_limit_ >= 0 && server_.joint_steps() >= step_limit_) server_.finish();
  if (server_.finished() && !step_limit_reached_) {
    step_limit_reached_ = true;
    request_stop();
  }
  // The episode goes on: its next joint step starts at this tag (the answers come one microstep
  // later), so a joint step costs one tag. A new episode waits for the next round.
  if (!server_.finished() && !server_.episode_starting()) request();
}

void MultiAgentReactor::publish_stats() {
  env_steps.store(server_.joint_steps(), std::memory_order_relaxed);
  const MultiAgentServer::Finished finished = published_.publish(server_, metrics_);
  if (!finished.returns.empty()) {
    last_return.store(finished.returns.back(), std::memory_order_relaxed);
    returns_.add(finished.returns);
  }
  if (!server_.evaluations().empty()) {
    last_evaluation.store(server_.evaluations().back(), std::memory_order_relaxed);
  }
}

}  // namespace tagflow::nodes
