#include "io/mailbox.h"

#include <gtest/gtest.h>
#include <poll.h>

#include <cstdint>
#include <thread>
#include <vector>

namespace ringkv::io {
namespace {

// Reads the eventfd's counter; true when it was written since the last read.
bool TakeWake(const Mailbox<int>& box, int timeout_ms) {
  pollfd p{box.eventfd(), POLLIN, 0};
  if (poll(&p, 1, timeout_ms) != 1) return false;
  uint64_t n = 0;
  return read(box.eventfd(), &n, sizeof(n)) == sizeof(n) && n > 0;
}

TEST(MailboxTest, DrainTakesWhatWasPostedInOrder) {
  Mailbox<int> box;
  ASSERT_TRUE(box.ok());
  std::vector<int> out;
  box.Drain(&out);
  EXPECT_TRUE(out.empty());
  box.Post(1);
  std::vector<int> more = {2, 3};
  box.PostAll(more);
  EXPECT_TRUE(more.empty());
  box.Drain(&out);
  EXPECT_EQ(out, (std::vector<int>{1, 2, 3}));
  out.clear();
  box.Drain(&out);
  EXPECT_TRUE(out.empty());
  box.Post(4);
  box.Drain(&out);
  EXPECT_EQ(out, (std::vector<int>{4}));
}

TEST(MailboxTest, OnlyThePostToAnEmptyQueueWakes) {
  Mailbox<int> box;
  box.Post(1);
  box.Post(2);
  EXPECT_TRUE(TakeWake(box, 1000));
  EXPECT_FALSE(TakeWake(box, 0));  // the second post found the queue non-empty
  std::vector<int> out;
  box.Drain(&out);
  box.Post(3);
  EXPECT_TRUE(TakeWake(box, 1000));
}

// A consumer that sleeps on the eventfd whenever a Drain finds nothing gets
// every message of four producers, each producer's in order: a message
// posted while the consumer looked finds it awake again.
TEST(MailboxTest, AConsumerSleepingOnTheEventfdMissesNothing) {
  constexpr int kProducers = 4;
  constexpr int kEach = 20000;
  Mailbox<int> box;
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&box, p] {
      for (int i = 0; i < kEach; ++i) box.Post(p * kEach + i);
    });
  }
  std::vector<int> next(kProducers, 0);
  int received = 0;
  std::vector<int> out;
  while (received < kProducers * kEach) {
    out.clear();
    box.Drain(&out);
    if (out.empty()) {
      ASSERT_TRUE(TakeWake(box, 10000)) << "asleep with " << received << " received";
      continue;
    }
    for (int m : out) {
      const int p = m / kEach;
      ASSERT_EQ(m % kEach, next[p]) << "producer " << p;
      ++next[p];
      ++received;
    }
  }
  for (std::thread& t : producers) t.join();
  out.clear();
  box.Drain(&out);
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace ringkv::io
