// InferenceServer's held batch (enqueue / batch_due / deadline / serve_queued): max_batch and
// max_wait for bindings that run on wall time. Times here are plain numbers, no clock.
#include <gtest/gtest.h>

#include "nodes/inference/inference_server.hpp"

namespace tagflow::nodes {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

InferenceConfig queue_config(std::size_t max_batch, const std::string& max_wait) {
  const NodeParams p(
      "inference",
      {{"max_batch", std::to_string(max_batch)}, {"max_wait", max_wait}, {"hidden", "8"}});
  return InferenceConfig::from_params(p, 4, 4, 3);
}

ObservationBatchMessage queued_request(std::uint32_t source, std::size_t rows, float offset) {
  ObservationBatchMessage m;
  m.source = source;
  m.observation_size = 4;
  for (std::size_t i = 0; i < rows * 4; ++i) {
    m.observations.push_back(offset + 0.29F * static_cast<float>(i % 11) - 1.3F);
  }
  return m;
}

TEST(InferenceServerQueue, HeldRequestsBecomeDueMaxWaitAfterTheOldestArrival) {
  InferenceServer server(queue_config(64, "2ms"));
  EXPECT_FALSE(server.batch_due(milliseconds(0)));
  EXPECT_FALSE(server.deadline().has_value());
  server.enqueue(queued_request(0, 3, 0.0F), milliseconds(10));
  EXPECT_EQ(server.deadline(), milliseconds(12));
  EXPECT_FALSE(server.batch_due(milliseconds(11)));
  server.enqueue(queued_request(1, 5, 0.4F), microseconds(11500));
  EXPECT_EQ(server.deadline(), milliseconds(12));  // the oldest request sets it
  EXPECT_EQ(server.queued_rows(), 8U);
  EXPECT_FALSE(server.batch_due(microseconds(11999)));
  EXPECT_TRUE(server.batch_due(milliseconds(12)));
}

TEST(InferenceServerQueue, MaxBatchRowsMakeTheBatchDueAtOnce) {
  InferenceServer server(queue_config(8, "1s"));
  server.enqueue(queued_request(0, 5, 0.0F), milliseconds(0));
  EXPECT_FALSE(server.batch_due(milliseconds(0)));
  server.enqueue(queued_request(1, 3, 0.1F), milliseconds(1));
  EXPECT_TRUE(server.batch_due(milliseconds(1)));
}

TEST(InferenceServerQueue, ServeQueuedAnswersInArrivalOrderLikeServeAndEmptiesTheQueue) {
  InferenceServer held(queue_config(4, "1ms"));
  InferenceServer direct(queue_config(4, "1ms"));
  const std::vector<ObservationBatchMessage> requests{
      queued_request(2, 3, 0.0F), queued_request(0, 6, 0.7F), queued_request(1, 1, -0.2F)};
  for (std::size_t i = 0; i < requests.size(); ++i) {
    held.enqueue(requests[i], microseconds(100 * i));
  }
  const auto answers = held.serve_queued();
  const auto expected = direct.serve(requests);
  ASSERT_EQ(answers.size(), 3U);
  for (std::size_t i = 0; i < answers.size(); ++i) {
    EXPECT_EQ(answers[i].source, requests[i].source);
    EXPECT_EQ(answers[i].actions, expected[i].actions);
    EXPECT_EQ(answers[i].actions.size(), requests[i].rows());
  }
  EXPECT_EQ(held.forward_passes(), 3U);  // 10 rows in passes of at most 4
  EXPECT_EQ(held.queued_rows(), 0U);
  EXPECT_FALSE(held.batch_due(milliseconds(100)));
  EXPECT_FALSE(held.deadline().has_value());
  EXPECT_TRUE(held.serve_queued().empty());
}

TEST(InferenceServerQueue, ZeroMaxWaitIsDueOnArrivalAndWrongWidthsAreRefused) {
  InferenceServer server(queue_config(64, "0ms"));
  server.enqueue(queued_request(0, 1, 0.0F), milliseconds(5));
  EXPECT_TRUE(server.batch_due(milliseconds(5)));
  ObservationBatchMessage wrong = queued_request(1, 2, 0.0F);
  wrong.observation_size = 2;
  EXPECT_THROW(server.enqueue(wrong, milliseconds(5)), std::invalid_argument);
  EXPECT_EQ(server.queued_rows(), 1U);
  EXPECT_EQ(queue_config(8, "3ms").max_wait, milliseconds(3));
}

}  // namespace
}  // namespace tagflow::nodes
