#include "nodes/actor_checkpoint.hpp"

#include <filesystem>

#include "common/state_stream.hpp"

namespace tagflow::nodes {
namespace {

constexpr std::uint32_t kLayout = 1;

}  // namespace

std::string actor_checkpoint_path(const std::string& prefix) { return prefix + ".ckpt"; }

void write_actor_checkpoint(const std::string& path, const ActorCheckpointFile& file) {
  StateWriter out;
  out.u32(kLayout);
  out.string(file.replica);
  out.string(file.kind);
  out.i64(file.count);
  out.i64(file.written_unix_ns);
  out.u64(file.sequence);
  out.bytes(file.state);
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  (void)write_state_file(path, out.data());
}

std::optional<ActorCheckpointFile> read_actor_checkpoint(const std::string& path,
                                                         const std::string& replica) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  const std::string payload = read_state_file(path);
  StateReader in(payload, path);
  if (in.u32() != kLayout) in.fail("an actor checkpoint of another layout");
  ActorCheckpointFile file;
  file.replica = in.string();
  if (file.replica != replica) in.fail("the checkpoint of replica '" + file.replica + "'");
  file.kind = in.string();
  file.count = in.i64();
  file.written_unix_ns = in.i64();
  file.sequence = in.u64();
  file.state = in.bytes();
  in.expect_end();
  return file;
}

}  // namespace tagflow::nodes
