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
  const std::vector<std::uint8_t> low(bytes.begin(), bytes.begin() + 4);
  EXPECT_EQ(fnv1a64_le<4>(value, 42), fnv1a64(low, 42));
  EXPECT_EQ(fnv1a64_le<0>(value, 42), 42U);
}

/// fnv1a64_wide as its definition reads (common/fnv1a.hpp), written out plainly.
std::uint64_t wide_by_definition(const std::vector<std::uint8_t>& bytes, std::uint64_t hash) {
  std::uint64_t lanes[4];
  for (std::uint64_t k = 0; k < 4; ++k) lanes[k] = hash ^ ((k + 1) * kFnv1aPrime);
  const std::size_t whole = bytes.size() / 32 * 32;
  for (std::size_t at = 0; at < whole; at += 8) {
    std::uint64_t word = 0;
    for (std::size_t i = 0; i < 8; ++i) word |= std::uint64_t{bytes[at + i]} << (8 * i);
    std::uint64_t& lane = lanes[(at / 8) % 4];
    lane = (lane ^ word) * kFnv1aPrime;
  }
  std::vector<std::uint8_t> folded;
  for (const std::uint64_t lane : lanes) {
    for (int i = 0; i < 8; ++i) folded.push_back(static_cast<std::uint8_t>(lane >> (8 * i)));
  }
  folded.insert(folded.end(), bytes.begin() + static_cast<std::ptrdiff_t>(whole), bytes.end());
  return fnv1a64(folded, hash);
}

TEST(Fnv1aWide, FollowsItsDefinitionForEveryTailLength) {
  std::vector<std::uint8_t> bytes;
  for (std::size_t n = 0; n < 200; ++n) {
    EXPECT_EQ(fnv1a64_wide(bytes.data(), bytes.size(), 42), wide_by_definition(bytes, 42)) << n;
    bytes.push_back(static_cast<std::uint8_t>(n * 37 + 11));
  }
}

TEST(Fnv1aWide, DependsOnEveryByteAndOnTheOrderOfWords) {
  std::vector<std::uint8_t> a(1000);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<std::uint8_t>(i * 7);
  const std::uint64_t base = fnv1a64_wide(a.data(), a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    std::vector<std::uint8_t> b = a;
    b[i] ^= 1U;
    EXPECT_NE(fnv1a64_wide(b.data(), b.size()), base) << "byte " << i;
  }
  // Two words of different lanes swapped, and two whole blocks swapped.
  std::vector<std::uint8_t> lanes = a, blocks = a;
  std::swap_ranges(lanes.begin(), lanes.begin() + 8, lanes.begin() + 8);
  std::swap_ranges(blocks.begin(), blocks.begin() + 32, blocks.begin() + 32);
  EXPECT_NE(fnv1a64_wide(lanes.data(), lanes.size()), base);
  EXPECT_NE(fnv1a64_wide(blocks.data(), blocks.size()), base);
  EXPECT_NE(fnv1a64_wide(a.data(), a.size(), 1), base);  // the starting hash counts
}

TEST(Fnv1aWide, InPiecesEqualsTheWholeForEverySplit) {
  std::vector<std::uint8_t> bytes(300);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>(i * 13 + 5);
  const std::uint64_t whole = fnv1a64_wide(bytes.data(), bytes.size(), 42);
  EXPECT_EQ(Fnv1aWide(42).value(), fnv1a64_wide(nullptr, 0, 42)) << "no bytes";
  // Two pieces split anywhere, and three with the middle one of every length up to 70.
  for (std::size_t cut = 0; cut <= bytes.size(); ++cut) {
    Fnv1aWide hash(42);
    hash.add(bytes.data(), cut);
    hash.add(bytes.data() + cut, bytes.size() - cut);
    EXPECT_EQ(hash.value(), whole) << "cut at " << cut;
  }
  for (std::size_t middle = 0; middle <= 70; ++middle) {
    Fnv1aWide hash(42);
    hash.add(bytes.data(), 7);
    hash.add(bytes.data() + 7, middle);
    hash.add(bytes.data() + 7 + middle, bytes.size() - 7 - middle);
    EXPECT_EQ(hash.value(), whole) << "middle piece of " << middle;
  }
  // Byte by byte, reading the value on the way (value() does not end the hash).
  Fnv1aWide hash(42);
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    hash.add(&bytes[i], 1);
    if (i == 100) {
      EXPECT_EQ(hash.value(), fnv1a64_wide(bytes.data(), 101, 42));
    }
  }
  EXPECT_EQ(hash.value(), whole);
}

}  // namespace
}  // namespace tagflow
