#include "common/value_log.hpp"

#include <cinttypes>
#include <stdexcept>

#include "common/fnv1a.hpp"

namespace tagflow {
namespace {

std::FILE* open_or_throw(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) throw std::runtime_error("cannot write the value log " + path);
  return file;
}

}  // namespace

ValueLog::ValueLog(const std::string& path_prefix, std::uint64_t max_value_bytes)
    : tsv_path_(path_prefix + ".values.tsv"), max_bytes_(max_value_bytes) {
  tsv_ = open_or_throw(tsv_path_);
  try {
    bin_ = open_or_throw(path_prefix + ".values.bin");
  } catch (...) {
    std::fclose(tsv_);
    throw;
  }
}

ValueLog::~ValueLog() {
  std::fclose(tsv_);
  std::fclose(bin_);
}

void ValueLog::record(const Tag& tag, const std::string& receiver, std::uint32_t port,
                      const void* data, std::size_t size) {
  const std::uint64_t hash = fnv1a64_wide(data, size);
  char offset[24] = "-";
  if (kept_ + size <= max_bytes_) {
    std::snprintf(offset, sizeof offset, "%" PRIu64, kept_);
    if (size != 0 && std::fwrite(data, 1, size, bin_) != size) {
      throw std::runtime_error("cannot write the value log beside " + tsv_path_);
    }
    kept_ += size;
  }
  if (std::fprintf(tsv_, "%" PRId64 "\t%" PRIu32 "\t%s\t%" PRIu32 "\t%zu\t%016" PRIx64 "\t%s\n",
                   tag.time_ns(), tag.microstep(), receiver.c_str(), port, size, hash,
                   offset) < 0) {
    throw std::runtime_error("cannot write the value log " + tsv_path_);
  }
  ++messages_;
}

void ValueLog::flush() {
  std::fflush(tsv_);
  std::fflush(bin_);
}

}  // namespace tagflow
