#include "nodes/replay/replay_reactor.hpp"

#include <cstdio>
#include <stdexcept>

#include "common/log_text.hpp"

namespace tagflow::nodes {

ReplayReactor::ReplayReactor(std::string name, reactors::Environment& env,
                             const ReplayConfig& config, const ReplayPortWidths& widths)
    : reactors::Reactor(std::move(name), env),
      transitions("transitions", this, widths.transitions),
      priorities("priorities", this, widths.priorities),
      batches("batches", this, widths.batches),
      server_(config, this->name()),
      batches_digest_(widths.batches, env) {
  if (config.sample_threads > 1) {
    workers_ = std::make_unique<envs::StepWorkers>(config.sample_threads);
    server_.set_parallel_for([workers = workers_.get()](
                                 std::size_t count, const std::function<void(std::size_t)>& body) {
      workers->run(count, [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) body(i);
      });
    });
  }
  if (widths.priorities > 0) {
    reaction("update_priorities").triggers(priorities).body([this] {
      for (std::size_t c = 0; c < priorities.size(); ++c) {
        if (!priorities[c].is_present()) continue;
        const PriorityUpdateMessage& update = priorities[c].get()->value();
        try {
          server_.update(update);
        } catch (const std::invalid_argument& e) {
          reject("priorities", e);
          continue;
        }
        if (metrics_ != nullptr) metrics_->add_replay_priority_updates(update.keys.size());
      }
    });
  }
  if (widths.transitions > 0) {
    reaction("insert_and_sample").triggers(transitions).effects(batches).body([this] {
      for (std::size_t c = 0; c < transitions.size(); ++c) {
        if (!transitions[c].is_present()) continue;
        try {
          server_.insert(transitions[c].get()->value());
        } catch (const std::invalid_argument& e) {
          reject("transitions", e);
        }
      }
      const auto inserted = static_cast<std::int64_t>(server_.inserts());
      if (metrics_ != nullptr) {
        metrics_->add_replay_inserted(static_cast<std::uint64_t>(inserted - inserts.load()));
      }
      inserts.store(inserted, std::memory_order_relaxed);
      SampleBatchList due = server_.due_batches();
      if (metrics_ != nullptr) {
        std::uint64_t rows = 0;
        for (const auto& b : due) rows += b.rows();
        metrics_->add_replay_sampled(rows);
        metrics_->set_replay_size(server_.size(), server_.stored_bytes());
      }
      if (due.empty()) return;
      batches_sent.fetch_add(static_cast<std::int64_t>(due.size()), std::memory_order_relaxed);
      send_on_every_channel(batches, batches_digest_, tag(), make_encoded(std::move(due)));
    });
  }
  // Checkpoint at stop, after the last tag's inserts (declaration order). A reaction must not
  // throw, so a failed checkpoint is reported on stderr.
  if (!server_.config().checkpoint_dir.empty()) {
    reaction("checkpoint_at_stop").triggers(shutdown()).body([this] {
      const std::string error = server_.checkpoint_at_stop();
      if (!error.empty())
        std::fprintf(stderr, "replay %s: %s\n", this->name().c_str(), error.c_str());
    });
  }
}

void ReplayReactor::reject(const char* port, const std::invalid_argument& error) {
  // A value whose content does not fit the table (another observation width or type, sizes that
  // disagree): checked before anything is stored, so dropping it leaves the table as it was, and
  // every run that receives the same values drops the same ones (deterministic).
  if (rejected_inputs.fetch_add(1, std::memory_order_relaxed) == 0) {
    std::fprintf(stderr,
                 "replay %s: dropped a value on '%s': %s (further ones are counted, not logged)\n",
                 this->name().c_str(), port, escape_for_log(error.what(), 512).c_str());
  }
  if (metrics_ != nullptr) metrics_->add_rejected_input(port);
}

void ReplayReactor::save(StateWriter& out, StateAttachments& files) {
  const bool table = server_.has_table();
  if (table) server_.write_checkpoint(files.add("table", &ReplayServer::seal_checkpoint));
  out.boolean(table);
  batches_digest_.save(out);
  out.i64(batches_sent.load(std::memory_order_relaxed));
  out.i64(rejected_inputs.load(std::memory_order_relaxed));
}

void ReplayReactor::load(StateReader& in, const std::string& table_path) {
  if (in.boolean()) server_.restore_from(table_path);
  batches_digest_.load(in);
  batches_sent.store(in.i64(), std::memory_order_relaxed);
  rejected_inputs.store(in.i64(), std::memory_order_relaxed);
  inserts.store(static_cast<std::int64_t>(server_.inserts()), std::memory_order_relaxed);
}

}  // namespace tagflow::nodes
