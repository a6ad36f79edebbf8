#include "nodes/sampler/sampler_reactor.hpp"

namespace tagflow::nodes {

SamplerReactor::SamplerReactor(std::string name, reactors::Environment& env,
                               const SamplerConfig& config, const SamplerPortWidths& widths,
                               std::chrono::nanoseconds round_period)
    : reactors::Reactor(std::move(name), env),
      actions("actions", this, widths.actions),
      weights("weights", this, widths.weights),
      transitions("transitions", this, widths.transitions),
      observations("observations", this, widths.observations),
      server_(config),
      round_("round", this, reactors::Duration::zero(), round_period),
      transitions_digest_(widths.transitions, env),
      observations_digest_(widths.observations, env) {
  if (widths.weights > 0) {
    reaction("load_weights").triggers(weights).body([this] {
      for (std::size_t c = 0; c < weights.size(); ++c) {
        if (!weights[c].is_present()) continue;
        const WeightsMessage& loaded = weights[c].get()->value();
        server_.on_weights(loaded);
        if (metrics_ != nullptr) metrics_->set_weights_version(loaded.version);
      }
    });
  }
  if (server_.config().local_policy) {
    reaction("act_locally").triggers(round_).effects(transitions).body([this] {
      send_transitions(server_.step_local());
    });
    return;
  }
  reaction("request_actions").triggers(round_).effects(observations).body([this] {
    if (waiting_) return;
    send_on_every_channel(observations, observations_digest_, tag(),
                          make_encoded(server_.observations()));
    waiting_ = observations.size() > 0;
  });
  if (widths.actions > 0) {
    reaction("step_envs").triggers(actions).effects(transitions).body([this] {
      for (std::size_t c = 0; c < actions.size(); ++c) {
        if (!actions[c].is_present()) continue;
        waiting_ = false;
        const ActionBatchMessage& answer = actions[c].get()->value();
        // As in actor mode: the weights that chose the actions it acts on.
        if (metrics_ != nullptr) metrics_->set_weights_version(answer.weights_version);
        send_transitions(server_.step(answer.actions, answer.weights_version));
      }
    });
  }
}

void SamplerReactor::send_transitions(TransitionsMessage message) {
  send_on_every_channel(transitions, transitions_digest_, tag(), make_encoded(std::move(message)));
  publish_stats();
  if (step_limit_ >= 0 && server_.env_steps() >= step_limit_) {
    step_limit_reached_ = true;
    request_stop();
  }
}

void SamplerReactor::publish_stats() {
  env_steps.store(server_.env_steps(), std::memory_order_relaxed);
  const std::vector<double> returns = server_.take_finished_returns();
  if (metrics_ != nullptr) {
    metrics_->add_env_steps(server_.env_steps() - steps_reported_);
    steps_reported_ = server_.env_steps();
    metrics_->add_episodes(returns);
  }
  if (!returns.empty()) {
    returns_.add(returns);
    last_return.store(returns.back(), std::memory_order_relaxed);
    episodes.fetch_add(static_cast<std::int64_t>(returns.size()), std::memory_order_relaxed);
  }
}

void SamplerReactor::save(StateWriter& out) const {
  server_.save(out);
  transitions_digest_.save(out);
  observations_digest_.save(out);
  returns_.save(out);
  out.boolean(waiting_);
  out.boolean(step_limit_reached_);
}

void SamplerReactor::load(StateReader& in) {
  server_.load(in);
  transitions_digest_.load(in);
  observations_digest_.load(in);
  returns_.load(in);
  waiting_ = in.boolean();
  step_limit_reached_ = in.boolean();
  steps_reported_ = server_.env_steps();  // this process's metrics count from the resume on
  env_steps.store(server_.env_steps(), std::memory_order_relaxed);
  episodes.store(returns_.count(), std::memory_order_relaxed);
  if (!returns_.empty()) last_return.store(returns_.last(), std::memory_order_relaxed);
}

}  // namespace tagflow::nodes
