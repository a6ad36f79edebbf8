// libFuzzer target: the replay node's checkpoint loader (nodes/replay/replay_server.hpp, with the
// table's own part, rl/replay/table_checkpoint.cpp).
//
// First byte even: the rest is a checkpoint file as found on disk; restoring a replay server from
// it, and loading it as a table, either succeed or throw the loader's documented error
// (CheckpointError; std::runtime_error for the table). First byte odd: the rest fills a small
// replay, which is checkpointed and restored (that must succeed), then restored again with one
// byte changed at a position the input chooses (CheckpointError, or a restore that succeeds).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fuzz/fuzz_file.hpp"
#include "nodes/replay/replay_server.hpp"
#include "rl/replay/table.hpp"

namespace tn = tagflow::nodes;

namespace {

tn::ReplayConfig config(bool restore) {
  tn::ReplayConfig c;
  c.capacity = 16;
  c.min_size = 1;
  c.batch_size = 2;
  c.checkpoint_dir = tagflow::fuzz::scratch_dir().string();
  c.restore = restore;
  return c;
}

void restore_or_refuse() {
  try {
    tn::ReplayServer server(config(true), "replay");
  } catch (const tn::CheckpointError&) {
  }
}

void round_trip(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return;
  tn::TransitionsMessage t;
  t.observation_size = 1 + data[0] % 4;
  const std::size_t rows = 1 + data[1] % 4;
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t i = 0; i < t.observation_size; ++i) {
      t.observations.push_back(data[(r + i) % size] / 3.0F);
      t.next_observations.push_back(data[(r + i + 1) % size] / 5.0F);
    }
    t.actions.push_back(data[(r + 2) % size] % 3);
    t.rewards.push_back(1.0F);
    t.terminated.push_back(data[r % size] % 2);
  }
  std::string path;
  {
    tn::ReplayServer server(config(false), "replay");
    server.insert(t);
    path = server.checkpoint().value_or("");
  }
  if (path.empty()) std::abort();
  { tn::ReplayServer restored(config(true), "replay"); }  // must not throw
  if (!tagflow::fuzz::change_one_byte(path, std::size_t{data[1]} * 251 + data[2], data[0])) return;
  restore_or_refuse();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  tagflow::fuzz::run_file_target(data, size, tagflow::fuzz::scratch_dir() / "replay.ckpt",
                                 round_trip, [](const std::filesystem::path& path) {
                                   restore_or_refuse();
                                   try {
                                     (void)tagflow::replay::Table::load_checkpoint(path.string());
                                   } catch (const std::runtime_error&) {
                                   }
                                 });
  return 0;
}
