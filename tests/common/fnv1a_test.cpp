#include "common/fnv1a.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace tagflow {
namespace {

TEST(Fnv1a, MatchesThePublishedTestVectors) {
  // The FNV-1a 64 reference values (Fowler, Noll, Vo: draft-eastlake-fnv).
  EXPECT_EQ(fnv1a64(std::string()), 0xcbf29ce484222325ULL);
  EXPECT_EQ(fnv1a64(std::string("a")), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(fnv1a64(std::string("foobar")), 0x85944171f73967e8ULL);
}

TEST(Fnv1a, ContinuingARunningHashEqualsHashingTheConcatenation) {
  const std::string a = "tagflow ", b = "digest";
  EXPECT_EQ(fnv1a64(b, fnv1a64(a)), fnv1a64(a + b));
}

TEST(Fnv1a, DependsOnEveryByte) {
  std::vector<std::uint8_t> a(1000, 7);
  for (std::size_t i = 0; i < a.size(); i += 97) {
    std::vector<std::uint8_t> b = a;
    b[i] ^= 1U;
    EXPECT_NE(fnv1a64(a), fnv1a64(b)) << "byte " << i;
  }
}

TEST(Fnv1a, AWordIsHashedAsItsEightLittleEndianBytes) {
  const std::uint64_t value = 0x0102030405060708ULL;
  const std::vector<std::uint8_t> bytes = {8, 7, 6, 5, 4, 3, 2, 1};
  EXPECT_EQ(fnv1a64_u64(value), fnv1a64(bytes));
  EXPECT_EQ(fnv1a64_u64(value, 42), fnv1a64(bytes, 42));
}

}  // namespace
}  // namespace tagflow
