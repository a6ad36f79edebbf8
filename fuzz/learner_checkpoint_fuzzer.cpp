// libFuzzer target: the learner checkpoint loader (rl/learning/learner_checkpoint.hpp).
//
// First byte even: the rest is a checkpoint file as found on disk; loading it either succeeds
// or throws LearnerStateError. First byte odd: the rest describes a state, which is saved,
// loaded back (it must equal the saved one), then saved again with one byte changed at a
// position the input chooses and loaded (the checksum must refuse it, with LearnerStateError).
// (Random bytes rarely get past the checksum; the second mode reaches the parsing behind it.)
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "fuzz/fuzz_file.hpp"
#include "rl/learning/learner_checkpoint.hpp"

namespace tl = tagflow::learning;

namespace {

std::vector<float> floats(const std::uint8_t* data, std::size_t size, std::size_t count) {
  std::vector<float> out(count);
  for (std::size_t i = 0; i < count; ++i) out[i] = size == 0 ? 0.0F : data[i % size] / 7.0F;
  return out;
}

void round_trip(const std::uint8_t* data, std::size_t size) {
  if (size < 4) return;
  tl::LearnerState state;
  const std::size_t name_size = data[0] % 16;
  const std::size_t count = data[1] % 64;
  state.network.assign(reinterpret_cast<const char*>(data + 4),  // NOLINT
                       std::min(name_size, size - 4));
  state.updates = data[2];
  state.adam_step = data[3];
  state.online = floats(data, size, count);
  state.target = floats(data + 1, size - 1, count);
  state.adam_m = floats(data + 2, size - 2, count);
  state.adam_v = floats(data + 3, size - 3, count);
  const std::string path = (tagflow::fuzz::scratch_dir() / "learner.ckpt").string();
  tl::save_checkpoint(state, path);
  const tl::LearnerState loaded = tl::load_checkpoint(path);
  if (loaded.network != state.network || loaded.updates != state.updates ||
      loaded.adam_step != state.adam_step || loaded.online != state.online ||
      loaded.target != state.target || loaded.adam_m != state.adam_m ||
      loaded.adam_v != state.adam_v) {
    std::abort();
  }
  if (!tagflow::fuzz::change_one_byte(path, std::size_t{data[2]} * 251 + data[3], data[0])) return;
  try {
    (void)tl::load_checkpoint(path);
    std::abort();  // a changed byte went unnoticed
  } catch (const tl::LearnerStateError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  tagflow::fuzz::run_file_target(data, size, tagflow::fuzz::scratch_dir() / "found.ckpt",
                                 round_trip, [](const std::filesystem::path& path) {
                                   try {
                                     (void)tl::load_checkpoint(path.string());
                                   } catch (const tl::LearnerStateError&) {
                                   }
                                 });
  return 0;
}
