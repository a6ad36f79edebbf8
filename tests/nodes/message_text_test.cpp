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
  EXPECT_EQ(describe_payload(junk, sizeof junk), "5 bytes, unknown type (magic 01020304)");
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

TEST(MessageText, IntegersCompareAndPrintExactly) {
  // Two keys that a double cannot tell apart (2^53 + 1 and 2^53 + 2 round alike).
  PriorityUpdateMessage a;
  a.keys = {7, (std::uint64_t{1} << 53U) + 1U};
  a.priorities = {1.0F, 2.0F};
  PriorityUpdateMessage b = a;
  b.keys[1] += 1;
  const Bytes x = encode(a);
  const Bytes y = encode(b);
  EXPECT_EQ(first_difference(x.data(), x.size(), y.data(), y.size()),
            "keys[1]: 9007199254740993 against 9007199254740994");
  EXPECT_NE(describe_payload(x.data(), x.size()).find("keys (2): 7 9007199254740993"),
            std::string::npos)
      << describe_payload(x.data(), x.size());
  ActionBatchMessage actions;
  actions.source = 2;
  actions.weights_version = 5;
  actions.actions = {-3, 4};
  const Bytes z = encode(actions);
  const std::string text = describe_payload(z.data(), z.size());
  EXPECT_NE(text.find("ActionBatch (2 actions)"), std::string::npos) << text;
  EXPECT_NE(text.find("actions (2): -3 4"), std::string::npos) << text;
  EXPECT_NE(text.find("weights_version (1): 5"), std::string::npos) << text;
}

TEST(MessageText, BytesThatDoNotDecodeAreComparedByteByByte) {
  WeightsMessage w;
  w.version = 1;
  w.values = {1.0F};
  const Bytes x = encode(w);
  Bytes longer = x;
  longer.push_back(0);  // past what decodes: decode() refuses trailing bytes
  const std::string past = first_difference(x.data(), x.size(), longer.data(), longer.size());
  EXPECT_NE(past.find("trailing"), std::string::npos) << past;
  EXPECT_NE(past.find("the same first " + std::to_string(x.size()) +
                      " bytes; the second run's has 1 bytes more past them"),
            std::string::npos)
      << past;
  const std::uint8_t p[] = {'X', 'Y', 'Z', 'W', 1, 2};
  const std::uint8_t q[] = {'X', 'Y', 'Z', 'W', 1, 3};
  EXPECT_EQ(describe_payload(p, sizeof p), "6 bytes, unknown type (magic 58595a57, \"XYZW\")");
  const std::string bytes = first_difference(p, sizeof p, q, sizeof q);
  EXPECT_NE(bytes.find("byte 5: 0x02 against 0x03"), std::string::npos) << bytes;
  EXPECT_EQ(first_difference(nullptr, 0, x.data(), x.size()),
            "absent in the first run, a value in the second");
}

TEST(MessageText, WirePortsHaveTheirInputsNames) {
  EXPECT_EQ(wire_port_name(65536), "transitions[0]");
  EXPECT_EQ(wire_port_name((4U << 16U) | 2U), "weights[2]");
  EXPECT_EQ(wire_port_name((6U << 16U) | 1U), "actions[1]");
  EXPECT_EQ(wire_port_name(99), "port 99");
  EXPECT_EQ(wire_port_name(7U << 16U), "port 458752");
}

// A value over the message cap: the params that make that port's values smaller.
TEST(MessageText, AValueOverTheCapIsAdvisedByItsPort) {
  EXPECT_NE(message_cap_advice(4U << 16U).find("a smaller network (`hidden`)"), std::string::npos);
  for (const std::uint32_t code : {1U, 5U, 6U}) {
    EXPECT_NE(message_cap_advice(code << 16U).find("`num_envs`"), std::string::npos) << code;
  }
  for (const std::uint32_t code : {2U, 3U}) {
    EXPECT_NE(message_cap_advice(code << 16U).find("`batch_size`"), std::string::npos) << code;
  }
  EXPECT_NE(message_cap_advice(99).find("`--placement single`"), std::string::npos);
}

}  // namespace
}  // namespace tagflow::nodes
