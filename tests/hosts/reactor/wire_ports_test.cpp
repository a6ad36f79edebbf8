#include "hosts/reactor/wire_ports.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace tagflow::hosts {
namespace {

TEST(WirePorts, APortIsItsInputCodeAboveTheReceiversChannel) {
  EXPECT_EQ(wire_port("transitions", 0), 0x10000U);
  EXPECT_EQ(wire_port("batches", 2), 0x30002U);
  EXPECT_EQ(wire_port("actions", 0xFFFF), 0x6FFFFU);
  EXPECT_THROW((void)wire_port("actions", 0x10000), std::invalid_argument);
  EXPECT_THROW((void)wire_port("gradients", 0), std::invalid_argument);
}

// The payload of a data message is the writer's encoding (nodes/encoded_value.hpp); lists of
// minibatches are covered by tests/nodes/messages_test.cpp, the wire reactors end to end by
// federated_process_test.cpp (every placement gives the single-process digest).

}  // namespace
}  // namespace tagflow::hosts
