#include "nodes/message_text.hpp"

#include <cmath>

#include <gtest/gtest.h>

#include "nodes/messages.hpp"

namespace tagflow::nodes {
namespace {

TEST(MessageText, DescribesAMessageByItsTypeAndFields) {
  WeightsMessage w;
  w.version = 7;
  w.values = {0.5F, -1.0F, 2.0F, 3.0F, 4.0F, 5.0F};
  const Bytes bytes = encode(w);
  const std::string text = describe_payload(bytes.data(), bytes.size());
  EXPECT_NE(text.find("Weights (version 7, 6 values)"), std::string::npos) << text;
  EXPECT_NE(text.find("values (6): 0.5 -1 2 3 ..."), std::string::npos) << text;
  EXPECT_EQ(describe_payload(nullptr, 0), "ABSENT (no value at this tag)");
  const std::uint8_t junk[] = {1, 2, 3, 4, 5};
  EXPECT_NE(describe_payload(junk, sizeof junk).find("unknown type (magic 01020304)"),
            std::string::npos);
}

TEST(MessageText, TheFirstDifferenceShowsAFloatsLastBit) {
  WeightsMessage a;
  a.version = 1;
  a.values = {1.0F, 0.1F, 3.0F};
  WeightsMessage b = a;
  b.values[1] = std::nextafter(0.1F, 1.0F);
  const Bytes x = encode(a);
  const Bytes y = encode(b);
  EXPECT_EQ(first_difference(x.data(), x.size(), y.data(), y.size()),
            "values[1]: 0.100000001 (bits 3dcccccd) against 0.100000009 (bits 3dccccce)");
  EXPECT_EQ(first_difference(x.data(), x.size(), x.data(), x.size()), "byte for byte the same");
  ActionBatchMessage actions;
  actions.actions = {1};
  const Bytes z = encode(actions);
  EXPECT_NE(first_difference(x.data(), x.size(), z.data(), z.size()).find("different types"),
            std::string::npos);
}

TEST(MessageText, WirePortsHaveTheirInputsNames) {
  EXPECT_EQ(wire_port_name(65536), "transitions[0]");
  EXPECT_EQ(wire_port_name((4U << 16U) | 2U), "weights[2]");
  EXPECT_EQ(wire_port_name(99), "port 99");
}

}  // namespace
}  // namespace tagflow::nodes
