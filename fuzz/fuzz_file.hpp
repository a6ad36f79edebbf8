// For the file-loader fuzz targets: a per-process scratch directory and a helper that writes an
// input there, so a loader that takes a path reads exactly the fuzzer's bytes.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>

namespace tagflow::fuzz {

/// A directory of this process's own under the system's temporary directory (made once,
/// removed when the process exits normally).
inline const std::filesystem::path& scratch_dir() {
  struct Scratch {
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("tagflow-fuzz-" + std::to_string(::getpid()));
    Scratch() { std::filesystem::create_directories(path); }
    ~Scratch() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  };
  static const Scratch scratch;
  return scratch.path;
}

/// Writes `size` bytes at `data` to `path` (replacing it).
inline void write_file(const std::filesystem::path& path, const void* data, std::size_t size) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) return;
  if (size != 0) (void)std::fwrite(data, 1, size, file);
  std::fclose(file);
}

/// The bytes of the file at `path` ("" when it cannot be read).
inline std::string read_file(const std::filesystem::path& path) {
  std::string bytes;
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return bytes;
  char buffer[65536];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, file)) != 0) bytes.append(buffer, n);
  std::fclose(file);
  return bytes;
}

/// XORs the byte at position `seed` (modulo the file's size) of the file at `path` with `mask`
/// (made odd, so the byte always changes). False when the file is empty or unreadable.
inline bool change_one_byte(const std::filesystem::path& path, std::size_t seed,
                            std::uint8_t mask) {
  std::string bytes = read_file(path);
  if (bytes.empty()) return false;
  const std::size_t at = seed % bytes.size();
  bytes[at] = static_cast<char>(bytes[at] ^ (mask | 1));
  write_file(path, bytes.data(), bytes.size());
  return true;
}

/// The input of a file loader's target: first byte odd, `round_trip(rest, rest_size)`; even,
/// the rest is written to `path` and `load(path)` is called.
template <class RoundTrip, class Load>
void run_file_target(const std::uint8_t* data, std::size_t size, const std::filesystem::path& path,
                     RoundTrip round_trip, Load load) {
  if (size == 0) return;
  if (data[0] % 2 == 1) {
    round_trip(data + 1, size - 1);
    return;
  }
  write_file(path, data + 1, size - 1);
  load(path);
}

}  // namespace tagflow::fuzz
