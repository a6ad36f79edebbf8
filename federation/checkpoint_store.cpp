#include "federation/checkpoint_store.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
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

/// Checkpoint times under `root` that have a manifest, newest first.
std::vector<std::int64_t> complete_times(const std::string& root) {
  std::vector<std::int64_t> times;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (!fs::exists(entry.path() / "manifest")) continue;
    times.push_back(std::stoll(name));
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
  std::istringstream in(read_whole_file(path));
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
      m.tag = transport::WireTag(time_ns, static_cast<std::uint32_t>(micro));
      tagged = static_cast<bool>(fields);
    } else if (word == "part") {
      std::string federate, checksum;
      PartInfo info;
      fields >> federate >> info.bytes >> checksum;
      if (!fields) throw StateError(path + ": bad line '" + line + "'");
      info.checksum = std::stoull(checksum, nullptr, 16);
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
    attachment.file =
        std::make_unique<AtomicFile>((fs::path(directory) / (federate + "." + name)).string());
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
  info.checksum = write_state_file(part_path(directory, federate), payload);
  return info;
}

Part read_part(const std::string& directory, const std::string& federate) {
  const std::string path = part_path(directory, federate);
  Part part;
  const std::string payload = read_state_file(path, &part.info.checksum);
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
    std::string bytes;
    try {
      bytes = read_whole_file(file);
    } catch (const StateError&) {
      throw StateError(file + ": missing (attached to " + path + ")");
    }
    if (bytes.size() != size) {
      throw StateError(file + ": truncated: " + std::to_string(bytes.size()) + " bytes, " +
                       std::to_string(size) + " expected");
    }
    if (fnv1a64_wide(bytes.data(), bytes.size()) != checksum) {
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
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::int64_t time = std::stoll(name);
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
          part = read_part(directory, id);
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
