#include "transport/payload.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace tagflow::transport {
namespace {

TEST(Payload, OwningTakesTheBufferWithoutCopyingIt) {
  std::string text(1000, 'p');
  const char* before = text.data();
  const Payload payload = Payload::owning(std::move(text));
  EXPECT_EQ(payload.data, before);
  EXPECT_EQ(payload.size, 1000U);
  EXPECT_EQ(payload.view(), std::string(1000, 'p'));
}

TEST(Payload, CopiesShareTheBytesAndKeepThemAlive) {
  Payload copy;
  {
    const Payload original = Payload::owning(std::vector<std::uint8_t>{1, 2, 3});
    copy = original;
    EXPECT_EQ(copy.data, original.data);
  }
  ASSERT_EQ(copy.size, 3U);
  EXPECT_EQ(copy.bytes()[2], 3);
}

TEST(Payload, CopyOfOwnsItsOwnBytes) {
  const std::string text = "abc";
  const Payload payload = Payload::copy_of(text.data(), text.size());
  EXPECT_NE(payload.data, static_cast<const void*>(text.data()));
  EXPECT_EQ(payload.view(), "abc");
  EXPECT_EQ(Payload::copy_of(nullptr, 0).size, 0U);
}

}  // namespace
}  // namespace tagflow::transport
