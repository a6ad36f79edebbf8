// FederateCheckpoint: one replica federate's side of reactor-mode checkpoints (docs/recovery.md,
// federation/PROTOCOL.md §9).
//
// Checkpoint tags are fixed by the cluster file, so no message is needed to agree on them: with
// `checkpoint: {every: E}`, checkpoint k holds the state as of the end of the tag just before
// (k·E, 0) and the run resumes from it at (k·E, 0). A timer of the federate fires at every
// (k·E, 0); its reaction runs before every other reaction of the federate at that tag
// (Environment::order_before), so what it saves is the state after every tag before (k·E, 0)
// and before anything at it. It builds the part — the replica's state in memory
// (ReplicaBinding::save_state), the files it attaches (a replay table) streamed into their
// temporary files in the checkpoint's directory (never held whole in memory), then the data
// messages this federate sent at a tag before (k·E, 0) that arrive at (k·E, 0) or later
// (recorded by the wire outputs through record_sent(); nothing else is in transit at that point)
// — and hands it to a writer thread, and the federate's reactions go on. The writer completes
// the attachments (a replay table's checksum footer; each one's checksum, read back), fsyncs and
// renames each, writes the part (federation/checkpoint_store.hpp), and only then reports the
// part with CHECKPOINT_WRITTEN; the coordinator writes the manifest when every federate
// reported. So the federation waits for the state to be copied, not for the disk to sync it. One
// part is written at a time: the next checkpoint's reaction, and the federate's shutdown, first
// wait for the one before, and a part that could not be written fails the federate there, naming
// the file. After each part the writer also replaces ROOT/<federate>.stats ("parts N", "bytes B",
// "seconds S": the reactions' time building parts, what the federate waited; "write_seconds W":
// the writer's time; totals so far, attachments included), which `tagflow bench recovery` reads.
//
// Resuming (resume(), after join and before run): the replica loads its state from its own part,
// which is on this federate's host (parts are never read across hosts); the messages the part
// holds in transit are sent again to their receivers, reported IN_TRANSIT first, and RESUMED
// follows: the coordinator grants nothing in a resumed run until every federate sent it, so the
// receivers' grants count those messages and they arrive at the tags they carry, as in the first
// run (PROTOCOL.md §9.6). The record is kept for the next checkpoint. The run starts at (k·E, 0),
// the start tag the coordinator sends, and goes on exactly as the uninterrupted run did: the
// digest at the end is the same.
// After each part it writes, a federate removes its own parts older than the newest keep + 2
// checkpoint tags (on hosts without the coordinator nothing else would).
//
// Errors: StateError naming the file when a part cannot be read or does not fit, or (from the
// next checkpoint's reaction or the shutdown) could not be written; std::logic_error from the
// first save for a kind or env that cannot checkpoint (checked at startup by
// check_can_checkpoint()). Thread-safety: record_sent() may be called from any reaction; the
// rest from the replica's thread or its checkpoint reaction; the writer thread touches only
// what a part it was handed needs, the files and the totals (read them after the run).
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/state_stream.hpp"
#include "federate/reactor_federate.hpp"
#include "monitoring/process_metrics.hpp"
#include "nodes/kind/replica_binding.hpp"
#include "reactors/reactors.hpp"
#include "transport/payload.hpp"

namespace tagflow::hosts {

class FederateCheckpoint {
 public:
  /// `root`: RUN_DIR/checkpoints; `every`: logical time between checkpoints; `keep`: the file's
  /// complete checkpoints kept.
  FederateCheckpoint(std::string federate, std::string root, std::chrono::nanoseconds every,
                     int keep, coordinator::ReactorFederate& federate_link, ReplicaBinding& binding,
                     monitoring::ProcessMetrics* metrics = nullptr);
  /// Waits for a part still being written (without throwing: the run has ended by then).
  ~FederateCheckpoint();
  FederateCheckpoint(const FederateCheckpoint&) = delete;
  FederateCheckpoint& operator=(const FederateCheckpoint&) = delete;

  /// Adds the checkpoint timer and reaction to `env` and orders the reaction before every other
  /// reaction of `env`. Call once, after the replica and its wire ports are declared.
  void install(reactors::Environment& env);
  /// Loads this federate's part of the checkpoint in `directory` (see above), which must be the
  /// one resuming at `start` (the coordinator's start tag), and sends its messages in transit
  /// again. Call after join() and before run().
  void resume(const std::string& directory, const reactors::Tag& start);
  /// A wire output sent `bytes` to (to, port) at `sent`, arriving at `arrival`.
  void record_sent(const std::string& to, std::uint32_t port, const reactors::Tag& sent,
                   const reactors::Tag& arrival, const transport::Payload& bytes);

  /// Waits until the part being written (if any) is on disk and reported; rethrows what stopped
  /// it. The checkpoint reactions call it, and the shutdown of the federate's environment.
  void wait_for_writer();

  [[nodiscard]] std::uint64_t parts_written() const { return parts_written_; }
  [[nodiscard]] std::uint64_t bytes_written() const { return bytes_written_; }
  /// The reactions' time building parts (what the federate's other reactions waited for).
  [[nodiscard]] double seconds_saving() const { return seconds_saving_; }
  /// The writer thread's time writing parts (read after the run).
  [[nodiscard]] double seconds_writing() const { return seconds_writing_; }
  /// After resume(): the messages in transit it sent again.
  [[nodiscard]] std::uint64_t resent() const { return resent_; }

 private:
  struct Sent {
    std::string to;
    std::uint32_t port = 0;
    reactors::Tag arrival;
    transport::Payload bytes;
  };
  class TimerReactor;
  class PartAttachments;
  /// A part built by the reaction (its attachments written but not completed), for the writer.
  struct PendingPart {
    reactors::Tag at;
    std::string directory;
    std::vector<StateAttachment> attachments;
    std::string body;
  };
  void write(const reactors::Tag& at);
  /// On the writer thread: the files of `part`, its report, the pruning and the totals.
  void write_files(PendingPart& part);
  /// Removes this federate's parts older than the newest keep + 2 checkpoint tags.
  void prune(std::int64_t newest) const;

  std::string federate_;
  std::string root_;
  std::chrono::nanoseconds every_;
  int keep_;
  coordinator::ReactorFederate& link_;
  ReplicaBinding& binding_;
  std::mutex mutex_;                 // guards sent_
  std::vector<Sent> sent_;           // what may still be in transit at a coming checkpoint tag
  std::thread writer_;               // the part being written, if any
  std::exception_ptr writer_error_;  // what stopped it (read after the join)
  std::uint64_t parts_written_ = 0;
  std::uint64_t bytes_written_ = 0;
  double seconds_saving_ = 0.0;   // in the reactions
  double seconds_writing_ = 0.0;  // on the writer thread
  std::uint64_t resent_ = 0;
  // With metrics: tagflow_checkpoint_* (monitoring/README.md).
  prometheus::Counter* parts_metric_ = nullptr;
  prometheus::Counter* bytes_metric_ = nullptr;
  prometheus::Counter* resent_metric_ = nullptr;
  prometheus::Gauge* resumed_from_metric_ = nullptr;
};

/// Throws std::logic_error when `binding` cannot be checkpointed (its kind or its env).
void check_can_checkpoint(ReplicaBinding& binding);

/// Removes `federate`'s files from every checkpoint directory of `root` (named by its logical
/// time in ns) older than `oldest_kept` — its part, its attachments and the temporaries of a
/// writer that was killed (".<federate>.NAME.tmp.PID") — then each such directory once empty.
/// Other federates' files stay. Errors are ignored: pruning is retried after the next part.
void prune_own_parts(const std::string& root, const std::string& federate,
                     std::int64_t oldest_kept);

}  // namespace tagflow::hosts
