#include "nodes/gateway/request_scan.hpp"

#include <msgpack.hpp>

namespace tagflow::gateway {
namespace {

/// The visitor: tracks the depth, the key of the top-level map being read, and the first broken
/// limit. Values of the top-level map named `id` and `op` are kept when they are scalars.
class Scanner : public msgpack::null_visitor {
 public:
  Scanner(const RequestLimits& limits, RequestScan& out) : limits_(limits), out_(out) {}

  bool visit_nil() { return scalar("nil"); }
  bool visit_boolean(bool) { return scalar("a bool"); }
  bool visit_positive_integer(std::uint64_t v) {
    if (top_value() && key_ == "id" && out_.id_state == FieldState::absent) {
      out_.id_state = FieldState::read;
      out_.id = v;
      return true;
    }
    return scalar("a negative or too large integer");
  }
  // MessagePack's int formats may carry a number >= 0 (a packer that writes every integer
  // signed): it is that unsigned number, as the request's own reader takes it.
  bool visit_negative_integer(std::int64_t v) {
    if (v >= 0) return visit_positive_integer(static_cast<std::uint64_t>(v));
    return scalar("a negative integer");
  }
  bool visit_float32(float) { return scalar("a float"); }
  bool visit_float64(double) { return scalar("a float"); }
  bool visit_str(const char* v, std::uint32_t size) {
    if (size > limits_.max_string_chars) {
      breaks("a string of " + std::to_string(size) + " bytes (at most " +
             std::to_string(limits_.max_string_chars) + ")");
    }
    if (in_top_key()) {
      key_.assign(v, std::min<std::size_t>(size, limits_.max_string_chars));
      return true;
    }
    if (top_value() && key_ == "op" && out_.op_state == FieldState::absent &&
        size <= limits_.max_string_chars) {
      out_.op_state = FieldState::read;
      out_.op.assign(v, size);
      return true;
    }
    return scalar("a string");
  }
  bool visit_bin(const char*, std::uint32_t size) {
    if (size > limits_.max_bin_bytes) {
      breaks("a bin of " + std::to_string(size) + " bytes (at most " +
             std::to_string(limits_.max_bin_bytes) + ")");
    }
    return scalar("a bin");
  }
  bool visit_ext(const char*, std::uint32_t) {
    breaks("an ext value (none is accepted)");
    return scalar("an ext value");
  }
  bool start_array(std::uint32_t n) {
    if (n > limits_.max_array_entries) {
      breaks("an array of " + std::to_string(n) + " entries (at most " +
             std::to_string(limits_.max_array_entries) + ")");
    }
    return open("an array");
  }
  bool end_array() { return close(); }
  bool start_map(std::uint32_t n) {
    if (n > limits_.max_map_entries) {
      breaks("a map of " + std::to_string(n) + " entries (at most " +
             std::to_string(limits_.max_map_entries) + ")");
    }
    if (depth_ == 0 && first_value_) out_.is_map = true;
    return open("a map");
  }
  bool end_map() { return close(); }
  bool start_map_key() {
    reading_top_key_ = depth_ == 1;
    if (reading_top_key_) key_.clear();
    return true;
  }
  bool end_map_key() {
    reading_top_key_ = false;
    return true;
  }
  bool start_map_value() {
    value_at_top_ = depth_ == 1;
    return true;
  }
  bool end_map_value() {
    value_at_top_ = false;
    return true;
  }
  void parse_error(std::size_t, std::size_t) {}
  void insufficient_bytes(std::size_t, std::size_t) {}

  /// The frame's first value is read: what follows it is scanned for the limits alone (its
  /// keys name no field of the request, its maps make the frame no map).
  void past_first_value() { first_value_ = false; }

 private:
  /// A key of the top-level map is being read (not a value inside a container key).
  bool in_top_key() const { return first_value_ && reading_top_key_ && depth_ == 1; }
  /// The value being read is a direct value of the top-level map (not inside a container).
  bool top_value() const { return first_value_ && value_at_top_ && depth_ == 1; }

  /// A scalar where `id` or `op` may be: one of them is then unreadable.
  bool scalar(const char* what) {
    if (in_top_key()) key_.clear();  // a key that is no string names no field
    if (!top_value()) return true;
    if (key_ == "id" && out_.id_state == FieldState::absent) {
      out_.id_state = FieldState::unreadable;
      out_.id_problem = std::string("id is ") + what + ", not an unsigned 64-bit integer";
    } else if (key_ == "op" && out_.op_state == FieldState::absent) {
      out_.op_state = FieldState::unreadable;
    }
    return true;
  }
  bool open(const char* what) {
    scalar(what);
    value_at_top_ = false;
    if (++depth_ > limits_.max_depth) {
      breaks("containers " + std::to_string(depth_) + " deep (at most " +
             std::to_string(limits_.max_depth) + ")");
    }
    return true;
  }
  bool close() {
    --depth_;
    return true;
  }
  void breaks(const std::string& what) {
    if (out_.too_large.empty()) out_.too_large = "the request holds " + what;
  }

  const RequestLimits& limits_;
  RequestScan& out_;
  std::size_t depth_ = 0;
  bool reading_top_key_ = false;
  bool value_at_top_ = false;
  std::string key_;  // the key of the top-level entry being read
  bool first_value_ = true;
};

}  // namespace

RequestScan scan_request(const void* data, std::size_t size, const RequestLimits& limits) {
  RequestScan out;
  if (data == nullptr || size == 0) return out;
  Scanner scanner(limits, out);
  const auto* bytes = static_cast<const char*>(data);
  std::size_t offset = 0;
  bool first = false;
  try {
    first = msgpack::parse(bytes, size, offset, scanner);
  } catch (const std::exception&) {
    return out;  // not parsed: the parser's own bounds (its stack depth) are below ours
  }
  out.parsed = first && offset == size;
  // The limits hold over the whole frame (PROTOCOL.md §2.1): the values after a complete first
  // one are scanned too, up to the first broken limit or the first bytes that are no value.
  scanner.past_first_value();
  try {
    while (first && offset < size && out.too_large.empty()) {
      const std::size_t before = offset;
      if (!msgpack::parse(bytes, size, offset, scanner) || offset == before) break;
    }
  } catch (const std::exception&) {
    // Values nested past the parser's stack: the frame is malformed (not one map) all the same.
  }
  return out;
}

}  // namespace tagflow::gateway
