// scan_request (nodes/gateway/request_scan.hpp): a request's id and op are found wherever they are
// in the map, also in a frame beyond the limits, and the first broken limit is named.
#include "nodes/gateway/request_scan.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <msgpack.hpp>

namespace tagflow::gateway {
namespace {

using Packer = msgpack::packer<msgpack::sbuffer>;

RequestLimits small_limits() {
  RequestLimits limits;
  limits.max_string_chars = 8;
  limits.max_map_entries = 4;
  limits.max_array_entries = 4;
  limits.max_bin_bytes = 16;
  limits.max_depth = 3;
  return limits;
}

template <class Build>
RequestScan scan(Build build, const RequestLimits& limits = small_limits()) {
  msgpack::sbuffer b;
  Packer p(b);
  build(p);
  return scan_request(b.data(), b.size(), limits);
}

TEST(RequestScanTest, FindsTheIdAndOpAfterAValueBeyondTheLimits) {
  const RequestScan s = scan([](Packer& p) {
    p.pack_map(3);
    p.pack("obs");
    const std::vector<char> bytes(100, 0);
    p.pack_bin(100);
    p.pack_bin_body(bytes.data(), 100);
    p.pack("op");
    p.pack("act");
    p.pack("id");
    p.pack(42);
  });
  EXPECT_TRUE(s.parsed);
  EXPECT_TRUE(s.is_map);
  EXPECT_EQ(s.id_state, FieldState::read);
  EXPECT_EQ(s.id, 42U);
  EXPECT_EQ(s.op_state, FieldState::read);
  EXPECT_EQ(s.op, "act");
  EXPECT_EQ(s.too_large, "the request holds a bin of 100 bytes (at most 16)");
}

TEST(RequestScanTest, NamesTheFirstBrokenLimitOfEachKind) {
  const auto string_of = [](std::size_t n) {
    return scan([n](Packer& p) {
             p.pack_map(1);
             p.pack("op");
             p.pack(std::string(n, 'x'));
           })
        .too_large;
  };
  EXPECT_EQ(string_of(8), "");
  EXPECT_EQ(string_of(9), "the request holds a string of 9 bytes (at most 8)");
  EXPECT_EQ(scan([](Packer& p) {
              p.pack_map(5);
              for (int k = 0; k < 5; ++k) {
                p.pack(k);
                p.pack(k);
              }
            }).too_large,
            "the request holds a map of 5 entries (at most 4)");
  EXPECT_EQ(scan([](Packer& p) {
              p.pack_map(1);
              p.pack("a");
              p.pack(std::vector<int>{1, 2, 3, 4, 5});
            }).too_large,
            "the request holds an array of 5 entries (at most 4)");
  // {a: {b: [[1]]}}: four containers inside each other.
  EXPECT_EQ(scan([](Packer& p) {
              p.pack_map(1);
              p.pack("a");
              p.pack_map(1);
              p.pack("b");
              p.pack_array(1);
              p.pack_array(1);
              p.pack(1);
            }).too_large,
            "the request holds containers 4 deep (at most 3)");
}

TEST(RequestScanTest, AnIdOfTheWrongTypeIsUnreadableAndAMissingOneIsAbsent) {
  const RequestScan text_id = scan([](Packer& p) {
    p.pack_map(2);
    p.pack("id");
    p.pack("seven");
    p.pack("op");
    p.pack("hello");
  });
  EXPECT_EQ(text_id.id_state, FieldState::unreadable);
  EXPECT_NE(text_id.id_problem.find("id is a string"), std::string::npos) << text_id.id_problem;
  EXPECT_EQ(text_id.op, "hello");
  const RequestScan negative = scan([](Packer& p) {
    p.pack_map(1);
    p.pack("id");
    p.pack(-1);
  });
  EXPECT_EQ(negative.id_state, FieldState::unreadable);
  const RequestScan nested = scan([](Packer& p) {
    p.pack_map(1);
    p.pack("obs");
    p.pack_map(1);
    p.pack("id");  // not the request's id: inside another map
    p.pack(5);
  });
  EXPECT_EQ(nested.id_state, FieldState::absent);
  EXPECT_TRUE(nested.parsed);
}

TEST(RequestScanTest, BytesThatAreNoSingleMapAreNotParsed) {
  const unsigned char never_used[] = {0xc1};
  EXPECT_FALSE(scan_request(never_used, sizeof never_used, small_limits()).parsed);
  const unsigned char map_then_more[] = {0x80, 0x01};  // {} then a stray byte
  const RequestScan trailing = scan_request(map_then_more, sizeof map_then_more, small_limits());
  EXPECT_FALSE(trailing.parsed);
  EXPECT_TRUE(trailing.is_map);
  const RequestScan array = scan([](Packer& p) { p.pack(std::vector<int>{1}); });
  EXPECT_TRUE(array.parsed);
  EXPECT_FALSE(array.is_map);
}

TEST(RequestScanTest, ValuesAfterTheFirstAreScannedForTheLimitsAlone) {
  const RequestScan over = scan([](Packer& p) {
    p.pack_map(2);
    p.pack("op");
    p.pack("act");
    p.pack("id");
    p.pack(3);
    p.pack(1);
    p.pack(std::string(9, 'x'));  // at most 8 in small_limits()
  });
  EXPECT_FALSE(over.parsed);
  EXPECT_TRUE(over.is_map);
  EXPECT_EQ(over.id, 3U);
  EXPECT_EQ(over.op, "act");
  EXPECT_EQ(over.too_large, "the request holds a string of 9 bytes (at most 8)");
  // A map after a first value that is none names no field and makes the frame no map.
  const RequestScan later_map = scan([](Packer& p) {
    p.pack(5);
    p.pack_map(1);
    p.pack("id");
    p.pack(9);
  });
  EXPECT_FALSE(later_map.parsed);
  EXPECT_FALSE(later_map.is_map);
  EXPECT_EQ(later_map.id_state, FieldState::absent);
  EXPECT_TRUE(later_map.too_large.empty());
}

}  // namespace
}  // namespace tagflow::gateway
