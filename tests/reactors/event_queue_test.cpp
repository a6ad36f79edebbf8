// EventRing and EventHeap: order, growth, and reuse of storage.
#include "reactors/event_queue.hpp"

#include <gtest/gtest.h>

namespace tagflow::reactors {
namespace {

TEST(EventRing, KeepsFifoOrderAcrossGrowthAndWrapAround) {
  EventRing<int> ring(2);
  int next_pop = 0;
  int next_push = 0;
  for (int cycle = 0; cycle < 50; ++cycle) {
    for (int i = 0; i < cycle % 7 + 1; ++i) {
      ring.push(Tag(next_push, 0), next_push);
      ++next_push;
    }
    while (ring.size() > 2) {
      EXPECT_EQ(ring.front_tag(), Tag(next_pop, 0));
      EXPECT_EQ(ring.pop(), next_pop);
      ++next_pop;
    }
  }
  while (!ring.empty()) EXPECT_EQ(ring.pop(), next_pop++);
  EXPECT_EQ(next_pop, next_push);
  EXPECT_EQ(ring.front_tag(), Tag::forever());
}

TEST(EventHeap, PopsByTagThenByInsertionOrder) {
  EventHeap<int> heap;
  heap.push(Tag(5, 0), 50);
  heap.push(Tag(1, 2), 12);
  heap.push(Tag(5, 0), 51);
  heap.push(Tag(1, 1), 11);
  heap.push(Tag(5, 0), 52);
  EXPECT_EQ(heap.top_tag(), Tag(1, 1));
  EXPECT_EQ(heap.pop(), 11);
  EXPECT_EQ(heap.pop(), 12);
  EXPECT_EQ(heap.pop(), 50);
  EXPECT_EQ(heap.pop(), 51);
  EXPECT_EQ(heap.pop(), 52);
  EXPECT_TRUE(heap.empty());
  EXPECT_EQ(heap.top_tag(), Tag::forever());
}

}  // namespace
}  // namespace tagflow::reactors
