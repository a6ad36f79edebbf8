// common/state_stream.hpp: values round-trip in order; a reader refuses reading past the end;
// a state file refuses truncation, extra bytes and a changed byte, naming the file; a whole file
// reads back byte for byte, empty or megabytes long, and a missing one is named.
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

TEST(StateStream, AWholeFileReadsBackByteForByteAndAMissingOneIsNamed) {
  const std::string path = ::testing::TempDir() + "state_stream_whole.bin";
  for (const std::size_t size : {std::size_t{0}, std::size_t{1}, std::size_t{3} << 20}) {
    std::string bytes(size, '\0');
    for (std::size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>((i * 131) ^ (i >> 9));
    {
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }
    EXPECT_EQ(read_whole_file(path), bytes) << size << " bytes";
  }
  // Not a regular file: its size says nothing, and it is read to its end all the same.
  const std::string stat_text = read_whole_file("/proc/self/stat");
  EXPECT_FALSE(stat_text.empty());
  EXPECT_EQ(stat_text.back(), '\n');
  const std::string missing = ::testing::TempDir() + "state_stream_no_such_file";
  try {
    (void)read_whole_file(missing);
    ADD_FAILURE() << "a missing file was read";
  } catch (const StateError& e) {
    EXPECT_EQ(std::string(e.what()), missing + ": cannot open: No such file or directory");
  }
}

}  // namespace
}  // namespace tagflow
