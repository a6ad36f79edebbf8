// `tagflow bench codec`: why the wire format carries tensors as raw binary frames.
//
// Packs and unpacks a 1 MiB float32 tensor with MessagePack two ways, as one `bin` blob and as an
// array of floats, with a plain memcpy of the same bytes as the ceiling.
#include <cstring>
#include <vector>

#include <msgpack.hpp>

#include "bench/benchmarks.hpp"
#include "bench/timing.hpp"

namespace tagflow::bench {
namespace {

constexpr double kBytes = 1 << 20;

double gigabytes_per_second(double seconds) { return kBytes / seconds / 1e9; }

}  // namespace

BenchReport run_codec_bench(const BenchOptions& options) {
  const TimingOptions timing{options.quick ? 0.01 : 0.3, options.quick ? 1 : 3};
  std::vector<float> tensor(static_cast<std::size_t>(kBytes) / sizeof(float));
  for (std::size_t i = 0; i < tensor.size(); ++i) tensor[i] = static_cast<float>(i) * 0.25F;
  const auto blob_size = static_cast<std::uint32_t>(tensor.size() * sizeof(float));

  BenchReport report("codec");
  std::vector<char> copy(blob_size);
  report.add("memcpy_1MiB",
             gigabytes_per_second(seconds_per_call(
                 [&] {
                   std::memcpy(copy.data(), tensor.data(), blob_size);
                   do_not_optimize(copy.data());
                 },
                 timing)),
             "GB/s");

  msgpack::sbuffer blob;
  report.add("pack_blob_1MiB",
             gigabytes_per_second(seconds_per_call(
                 [&] {
                   blob.clear();
                   msgpack::packer<msgpack::sbuffer> packer(blob);
                   packer.pack_bin(blob_size);
                   packer.pack_bin_body(reinterpret_cast<const char*>(tensor.data()), blob_size);
                   do_not_optimize(blob.data());
                 },
                 timing)),
             "GB/s");

  msgpack::sbuffer array;
  report.add("pack_array_1MiB",
             gigabytes_per_second(seconds_per_call(
                 [&] {
                   array.clear();
                   msgpack::packer<msgpack::sbuffer> packer(array);
                   packer.pack_array(static_cast<std::uint32_t>(tensor.size()));
                   for (float v : tensor) packer.pack_float(v);
                   do_not_optimize(array.data());
                 },
                 timing)),
             "GB/s");

  std::vector<float> decoded(tensor.size());
  report.add("unpack_blob_1MiB",
             gigabytes_per_second(seconds_per_call(
                 [&] {
                   const msgpack::object_handle handle = msgpack::unpack(blob.data(), blob.size());
                   const msgpack::object& object = handle.get();
                   std::memcpy(decoded.data(), object.via.bin.ptr, object.via.bin.size);
                   do_not_optimize(decoded.data());
                 },
                 timing)),
             "GB/s");

  report.add("unpack_array_1MiB",
             gigabytes_per_second(seconds_per_call(
                 [&] {
                   const msgpack::object_handle handle =
                       msgpack::unpack(array.data(), array.size());
                   const msgpack::object& object = handle.get();
                   for (std::uint32_t i = 0; i < object.via.array.size; ++i) {
                     decoded[i] = object.via.array.ptr[i].as<float>();
                   }
                   do_not_optimize(decoded.data());
                 },
                 timing)),
             "GB/s");

  report.add_ratio("pack: blob/array", "pack_blob_1MiB", "pack_array_1MiB");
  report.add_ratio("unpack: blob/array", "unpack_blob_1MiB", "unpack_array_1MiB");
  report.add_ratio("pack_blob/memcpy", "pack_blob_1MiB", "memcpy_1MiB");
  return report;
}

}  // namespace tagflow::bench
