// The files of reactor-mode checkpoints (docs/recovery.md, PROTOCOL.md §9): parts, manifests and
// the choice of the checkpoint to resume from.
//
// Layout under a checkpoint root (a run's `RUN_DIR/checkpoints`):
//   ROOT/<time_ns>/<federate>.ckpt   one part per federate: its whole state as of the end of the
//                                    tag just before (time_ns, 0), a state file
//                                    (common/state_stream.hpp: length and checksum)
//   ROOT/<time_ns>/<federate>.NAME   files a part attaches (a replay table), listed with their
//                                    size and checksum in the part's header
//   ROOT/<time_ns>/manifest          written last, by the coordinator, once every federate
//                                    reported its part (CHECKPOINT_WRITTEN): the checkpoint is
//                                    complete only then
// A part's payload starts with a header — format version, federate id, the resume tag, the
// attachments — then the federate's own bytes (body). The manifest is text:
//   tagflow-checkpoint 1
//   tag TIME_NS MICROSTEP
//   part FEDERATE BYTES CHECKSUM HOST   (one line per federate, checksum in hex; HOST: the cluster
//                                        file's host whose RUN_DIR holds the part, "-" unknown;
//                                        absent in manifests written before it was recorded)
//
// latest_usable_checkpoint() walks the complete checkpoints from the newest and takes the first
// whose every part (and attachment) reads back with the manifest's checksum; each one it refuses
// is described by name ("checkpoint 4000000000: part learner: ...: corrupt (checksum
// mismatch)"). A crash while a checkpoint is written leaves no manifest for it, so the previous
// complete one is used.
//
// Errors: StateError naming the file and the reason. Not thread-safe; CheckpointManifest lives on
// the coordinator's thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/state_stream.hpp"
#include "transport/wire_tag.hpp"

namespace tagflow::coordinator {

/// ROOT/<time_ns>.
[[nodiscard]] std::string checkpoint_directory(const std::string& root, std::int64_t time_ns);
/// DIR/<federate>.ckpt.
[[nodiscard]] std::string part_path(const std::string& directory, const std::string& federate);

struct PartInfo {
  std::uint64_t bytes = 0;  // the part file's payload size
  std::uint64_t checksum = 0;
  std::uint64_t attachment_bytes = 0;  // the attachments' sizes, summed
};

/// Starts the file NAME that federate `federate`'s part in `directory` attaches: creates the
/// directory when missing and the attachment's temporary file beside DIR/<federate>.<name>; its
/// bytes are then written to `file`, and write_part() completes it. StateError naming the
/// directory or the file when either cannot be created.
[[nodiscard]] StateAttachment start_attachment(const std::string& directory,
                                               const std::string& federate, const std::string& name,
                                               std::function<void(AtomicFile&)> finish = {});

/// Writes federate `federate`'s part for the checkpoint resuming at `tag` into `directory`
/// (created when missing): first completes each attachment (start_attachment(): its `finish`,
/// then its size and checksum, read back from the file in pieces, then fsync and rename to
/// DIR/<federate>.<name>), then the part, which lists them with their sizes and checksums. Each
/// file is written atomically and the part last, so a part on disk has its attachments.
PartInfo write_part(const std::string& directory, const std::string& federate,
                    const transport::WireTag& tag, std::vector<StateAttachment>& attachments,
                    const std::string& body);

struct Part {
  transport::WireTag tag;
  std::string body;
  PartInfo info;
};
/// Reads and checks federate `federate`'s part in `directory`: the file's checksum, the header's
/// federate, and every attachment's size and checksum (hashed in pieces, never held whole). A
/// part whose payload is over `max_bytes` (what its manifest lists) is refused unread; a part or
/// attachment that is no regular file is refused before it is opened for reading.
[[nodiscard]] Part read_part(const std::string& directory, const std::string& federate,
                             std::uint64_t max_bytes = UINT64_MAX);

/// The coordinator's side of the two phases: CHECKPOINT_WRITTEN reports in, the manifest out
/// once every federate of the run reported the same tag; then only the newest `keep` complete
/// checkpoints stay (and no incomplete one older than the newest complete).
class CheckpointManifest {
 public:
  /// `hosts`: where each federate's part is written (the host of its process), for the
  /// manifest; a federate not in it is recorded as "-".
  CheckpointManifest(std::string root, std::vector<std::string> federates, int keep,
                     std::map<std::string, std::string> hosts = {});
  /// Records `federate`'s part for `tag`; returns the manifest's path when this completed the
  /// checkpoint. Throws StateError when the manifest cannot be written.
  std::optional<std::string> on_written(const std::string& federate, const transport::WireTag& tag,
                                        const PartInfo& part);
  [[nodiscard]] std::size_t completed() const { return completed_; }

 private:
  void prune(std::int64_t newest_complete) const;
  std::string root_;
  std::vector<std::string> federates_;
  int keep_;
  std::map<std::string, std::string> hosts_;
  std::map<std::int64_t, std::map<std::string, PartInfo>> pending_;  // by tag time
  std::size_t completed_ = 0;
};

/// The hosts a complete checkpoint's manifest in `directory` records, by federate ("-": unknown;
/// none for a manifest written before hosts were recorded). Throws StateError when it cannot be
/// read.
[[nodiscard]] std::map<std::string, std::string> part_hosts(const std::string& directory);

struct UsableCheckpoint {
  transport::WireTag tag;  // the tag the run resumes at
  std::string directory;
};
/// The newest complete checkpoint under `root` whose parts for every id of `federates` check out
/// (see above); each one refused is described in `refused` (when given). nullopt: none.
/// Checkpoints whose times are in `skip` are passed over (another host could not load its part).
[[nodiscard]] std::optional<UsableCheckpoint> latest_usable_checkpoint(
    const std::string& root, const std::vector<std::string>& federates,
    std::vector<std::string>* refused = nullptr, const std::set<std::int64_t>& skip = {});

}  // namespace tagflow::coordinator
