// common/state_stream.hpp: values round-trip in order; a reader refuses reading past the end;
// a state file refuses truncation, extra bytes and a changed byte, naming the file.
#include "common/state_stream.hpp"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace tagflow {
namespace {

TEST(StateStream, ValuesRoundTripInOrder) {
  std::mt19937_64 rng(42);
  (void)rng();
  StateWriter out;
  out.u32(7);
  out.i64(-5);
  out.f64(0.25);
  out.boolean(true);
  out.string("replay");
  out.generator(rng);
  out.pod_vector(std::vector<float>{1.5F, -2.0F});
  StateReader in(out.data(), "state");
  EXPECT_EQ(in.u32(), 7U);
  EXPECT_EQ(in.i64(), -5);
  EXPECT_EQ(in.f64(), 0.25);
  EXPECT_TRUE(in.boolean());
  EXPECT_EQ(in.string(), "replay");
  std::mt19937_64 loaded;
  in.generator(loaded);
  EXPECT_EQ(loaded(), rng());
  EXPECT_EQ(in.pod_vector<float>(), (std::vector<float>{1.5F, -2.0F}));
  in.expect_end();
  EXPECT_THROW((void)in.u8(), StateError);
}

TEST(StateStream, AStateFileRefusesTruncationAndCorruptionNamingTheFile) {
  const std::string path = ::testing::TempDir() + "state_stream_test.ckpt";
  const std::uint64_t checksum = write_state_file(path, "the whole state");
  std::uint64_t read_checksum = 0;
  EXPECT_EQ(read_state_file(path, &read_checksum), "the whole state");
  EXPECT_EQ(read_checksum, checksum);
  {
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(18);
    file.put('X');
  }
  try {
    (void)read_state_file(path);
    ADD_FAILURE() << "a changed byte was not noticed";
  } catch (const StateError& e) {
    EXPECT_EQ(std::string(e.what()), path + ": corrupt (checksum mismatch)");
  }
  std::filesystem::resize_file(path, 20);
  try {
    (void)read_state_file(path);
    ADD_FAILURE() << "a truncated file was not noticed";
  } catch (const StateError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ": "), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tagflow
