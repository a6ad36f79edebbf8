#include "federation/checkpoint_store.hpp"

#include <algorithm>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>
#include <sstream>

#include "common/atomic_file.hpp"
#include "common/fnv1a.hpp"

namespace tagflow::coordinator {
namespace {

namespace fs = std::filesystem;
constexpr std::uint32_t kPartFormat = 1;
constexpr const char* kManifestHead = "tagflow-checkpoint 1";

std::string hex(std::uint64_t v) {
  char text[17];
  std::snprintf(text, sizeof text, "%016" PRIx64, v);
  return text;
}

/// The checkpoint time a directory's name gives (digits only, within int64), or std::nullopt.
std::optional<std::int64_t> time_of(const std::string& name) {
  std::int64_t time = 0;
  const char* end = name.data() + name.size();
  const auto [at, error] = std::from_chars(name.data(), end, time);
  if (name.empty() || name[0] == '-' || error != std::errc() || at != end) return std::nullopt;
  return time;
}

/// Checkpoint times under `root` that have a manifest, newest first.
std::vector<std::int64_t> complete_times(const std::string& root) {
  std::vector<std::int64_t> times;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    const std::optional<std::int64_t> time = time_of(entry.path().filename().string());
    if (!time || !fs::exists(entry.path() / "manifest", ec)) continue;
    times.push_back(*time);
  }
  std::sort(times.rbegin(), times.rend());
  return times;
}

struct Manifest {
  transport::WireTag tag;
  std::map<std::string, PartInfo> parts;
  std::map<std::string, std::string> hosts;  // by federate, when recorded
};

Manifest read_manifest(const std::string& path) {
  // A manifest lists one short line per federate: 16 MiB is far beyond any cluster's.
  std::istringstream in(read_whole_file(path, std::uint64_t{16} << 20));
  std::string line;
  if (!std::getline(in, line) || line != kManifestHead) throw StateError(path + ": not a manifest");
  Manifest m;
  std::string word;
  bool tagged = false;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    fields >> word;
    if (word == "tag") {
      std::int64_t time_ns = 0;
      std::uint64_t micro = 0;
      fields >> time_ns >> micro;
      if (fields && micro > UINT32_MAX) throw StateError(path + ": bad line '" + line + "'");
      m.tag = transport::WireTag(time_ns, static_cast<std::uint32_t>(micro));
      tagged = static_cast<bool>(fields);
    } else if (word == "part") {
      std::string federate, checksum;
      PartInfo info;
      fields >> federate >> info.bytes >> checksum;
      const char* end = checksum.data() + checksum.size();
      const auto [at, error] = std::from_chars(checksum.data(), end, info.checksum, 16);
      if (!fields || error != std::errc() || at != end) {
        throw StateError(path + ": bad line '" + line.substr(0, 200) + "'");
      }
      m.parts[federate] = info;
      if (std::string host; fields >> host) m.hosts[federate] = host;
    }
  }
  if (!tagged) throw StateError(path + ": no tag line");
  return m;
}

}  // namespace

std::string checkpoint_directory(const std::string& root, std::int64_t time_ns) {
  return (fs::path(root) / std::to_string(time_ns)).string();
}

std::string part_path(const std::string& directory, const std::string& federate) {
  return (fs::path(directory) / (federate + ".ckpt")).string();
}

namespace {

/// A checkpoint's own file about to be written again (a run resumed from an older checkpoint
/// writes the newer ones anew): what a damaged checkpoint left there that is no regular file (a
/// directory, a pipe) is removed first, since the write would refuse to replace it.
void clear_for_write(const std::string& path) {
  std::error_code ec;
  if (is_special_file(path)) fs::remove_all(path, ec);
}

void create_directory(const std::string& directory) {
  std::error_code ec;
  fs::create_directories(directory, ec);
  if (ec) throw StateError(directory + ": cannot create: " + ec.message());
}

/// fnv1a64_wide of the whole of `file`, read back in pieces (the file may be gigabytes).
std::uint64_t checksum_of(const AtomicFile& file, std::uint64_t size) {
  Fnv1aWide hash;
  file.read_pieces(size, [&hash](const char* data, std::size_t n) { hash.add(data, n); });
  return hash.value();
}

}  // namespace

StateAttachment start_attachment(const std::string& directory, const std::string& federate,
                                 const std::string& name, std::function<void(AtomicFile&)> finish) {
  create_directory(directory);
  StateAttachment attachment;
  attachment.name = name;
  try {
    attachment.file = std::make_unique<AtomicFile>([&] {
      const std::string path = (fs::path(directory) / (federate + "." + name)).string();
      clear_for_write(path);
      return path;
    }());
  } catch (const AtomicFileError& e) {
    throw StateError(e.what());
  }
  attachment.finish = std::move(finish);
  return attachment;
}

PartInfo write_part(const std::string& directory, const std::string& federate,
                    const transport::WireTag& tag, std::vector<StateAttachment>& attachments,
                    const std::string& body) {
  create_directory(directory);
  StateWriter out;
  out.u32(kPartFormat);
  out.string(federate);
  out.i64(tag.time_ns());
  out.u32(tag.microstep());
  out.u64(attachments.size());
  PartInfo info;
  for (StateAttachment& attachment : attachments) {
    AtomicFile& file = *attachment.file;
    std::uint64_t size = 0;
    std::uint64_t checksum = 0;
    try {
      file.flush();
      if (attachment.finish) attachment.finish(file);
      size = file.size();
      checksum = checksum_of(file, size);
      file.commit();
    } catch (const AtomicFileError& e) {
      throw StateError(e.what());
    }
    out.string(attachment.name);
    out.u64(size);
    out.u64(checksum);
    info.attachment_bytes += size;
  }
  out.bytes(body);
  const std::string payload = out.take();
  info.bytes = payload.size();
  clear_for_write(part_path(directory, federate));
  info.checksum = write_state_file(part_path(directory, federate), payload);
  return info;
}

Part read_part(const std::string& directory, const std::string& federate, std::uint64_t max_bytes) {
  const std::string path = part_path(directory, federate);
  Part part;
  const std::string payload = read_state_file(path, &part.info.checksum, max_bytes);
  part.info.bytes = payload.size();
  StateReader in(payload, path);
  if (in.u32() != kPartFormat) throw StateError(path + ": unsupported part format");
  if (in.string() != federate) throw StateError(path + ": the part of another federate");
  const std::int64_t time_ns = in.i64();
  part.tag = transport::WireTag(time_ns, in.u32());
  const std::uint64_t attachments = in.u64();
  for (std::uint64_t i = 0; i < attachments; ++i) {
    const std::string name = in.string();
    const std::uint64_t size = in.u64();
    const std::uint64_t checksum = in.u64();
    const std::string file = (fs::path(directory) / (federate + "." + name)).string();
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(file, ec))) {
      throw StateError(file + ": missing (attached to " + path + ")");
    }
    // Checked against its size first, then hashed in pieces: never held in memory whole.
    if (checksum_of_file(file, size) != checksum) {
      throw StateError(file + ": corrupt (checksum mismatch)");
    }
  }
  part.body = in.bytes();
  in.expect_end();
  return part;
}

CheckpointManifest::CheckpointManifest(std::string root, std::vector<std::string> federates,
                                       int keep, std::map<std::string, std::string> hosts)
    : root_(std::move(root)),
      federates_(std::move(federates)),
      keep_(std::max(keep, 1)),
      hosts_(std::move(hosts)) {}

std::optional<std::string> CheckpointManifest::on_written(const std::string& federate,
                                                          const transport::WireTag& tag,
                                                          const PartInfo& part) {
  auto& parts = pending_[tag.time_ns()];
  parts[federate] = part;
  for (const std::string& id : federates_) {
    if (parts.count(id) == 0) return std::nullopt;
  }
  std::string text = std::string(kManifestHead) + "\n";
  text += "tag " + std::to_string(tag.time_ns()) + " " + std::to_string(tag.microstep()) + "\n";
  for (const std::string& id : federates_) {
    const PartInfo& p = parts.at(id);
    const auto host = hosts_.find(id);
    text += "part " + id + " " + std::to_string(p.bytes) + " " + hex(p.checksum) + " " +
            (host == hosts_.end() || host->second.empty() ? "-" : host->second) + "\n";
  }
  const std::string path =
      (fs::path(checkpoint_directory(root_, tag.time_ns())) / "manifest").string();
  try {
    clear_for_write(path);
    write_file_atomically(path, text);
  } catch (const AtomicFileError& e) {
    throw StateError(e.what());
  }
  ++completed_;
  pending_.erase(pending_.begin(), pending_.upper_bound(tag.time_ns()));
  prune(tag.time_ns());
  return path;
}

void CheckpointManifest::prune(std::int64_t newest_complete) const {
  const std::vector<std::int64_t> complete = complete_times(root_);
  std::set<std::int64_t> kept(complete.begin(),
                              complete.begin() + std::min<std::size_t>(complete.size(), keep_));
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root_, ec)) {
    const std::optional<std::int64_t> named = time_of(entry.path().filename().string());
    if (!named) continue;
    const std::int64_t time = *named;
    if (time > newest_complete || kept.count(time) != 0) continue;  // newer ones are in progress
    std::error_code remove_error;
    fs::remove_all(entry.path(), remove_error);
  }
}

std::map<std::string, std::string> part_hosts(const std::string& directory) {
  return read_manifest((fs::path(directory) / "manifest").string()).hosts;
}

std::optional<UsableCheckpoint> latest_usable_checkpoint(const std::string& root,
                                                         const std::vector<std::string>& federates,
                                                         std::vector<std::string>* refused,
                                                         const std::set<std::int64_t>& skip) {
  for (const std::int64_t time : complete_times(root)) {
    if (skip.count(time) != 0) continue;
    const std::string directory = checkpoint_directory(root, time);
    try {
      const Manifest manifest = read_manifest((fs::path(directory) / "manifest").string());
      for (const std::string& id : federates) {
        const auto listed = manifest.parts.find(id);
        if (listed == manifest.parts.end()) {
          throw StateError("no part for federate " + id + " in its manifest");
        }
        Part part;
        try {
          part = read_part(directory, id, listed->second.bytes);  // no more than it lists
        } catch (const StateError& e) {
          throw StateError("part " + id + ": " + e.what());
        }
        if (part.info.checksum != listed->second.checksum || part.tag != manifest.tag) {
          throw StateError("part " + id + ": " + part_path(directory, id) +
                           ": not the part its manifest lists (checksum or tag differ)");
        }
      }
      return UsableCheckpoint{manifest.tag, directory};
    } catch (const StateError& e) {
      if (refused != nullptr) {
        refused->push_back("checkpoint " + std::to_string(time) + ": " + e.what());
      }
    }
  }
  return std::nullopt;
}

}  // namespace tagflow::coordinator
