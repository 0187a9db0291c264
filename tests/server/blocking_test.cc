#include "server/blocking.h"

#include <gtest/gtest.h>

#include <vector>

namespace ringkv::server {
namespace {

std::vector<uint64_t> Waiting(const KeyWaiters& w, int db, std::string_view key) {
  const std::list<uint64_t>* l = w.Waiting(db, key);
  return l ? std::vector<uint64_t>(l->begin(), l->end()) : std::vector<uint64_t>{};
}

TEST(KeyWaitersTest, WaitersAreKeptInBlockingOrderPerKey) {
  KeyWaiters w;
  BlockState a, b, c;
  w.Add(1, 0, {"x", "y"}, &a);
  w.Add(2, 0, {"y"}, &b);
  w.Add(3, 1, {"x"}, &c);
  EXPECT_EQ(Waiting(w, 0, "x"), (std::vector<uint64_t>{1}));
  EXPECT_EQ(Waiting(w, 0, "y"), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(Waiting(w, 1, "x"), (std::vector<uint64_t>{3}));
  EXPECT_EQ(a.places.size(), 2u);
}

TEST(KeyWaitersTest, RemovingOneClientKeepsTheOthersInPlace) {
  KeyWaiters w;
  BlockState a, b, c;
  a.db = b.db = c.db = 0;
  w.Add(1, 0, {"k"}, &a);
  w.Add(2, 0, {"k", "other"}, &b);
  w.Add(3, 0, {"k"}, &c);
  w.Remove(b);
  EXPECT_EQ(Waiting(w, 0, "k"), (std::vector<uint64_t>{1, 3}));
  EXPECT_EQ(w.Waiting(0, "other"), nullptr);  // its last waiter left
  w.Remove(a);
  w.Remove(c);
  EXPECT_TRUE(w.empty());
}

TEST(KeyWaitersTest, OnlyWritesToAwaitedKeysBecomeReadyOnceEach) {
  KeyWaiters w;
  w.SignalWrite(0, "k");  // nobody waits anywhere: nothing recorded
  EXPECT_FALSE(w.has_ready());
  BlockState a;
  w.Add(1, 0, {"k"}, &a);
  w.SignalWrite(0, "unrelated");
  w.SignalWrite(1, "k");  // other database
  EXPECT_FALSE(w.has_ready());
  w.SignalWrite(0, "k");
  w.SignalWrite(0, "k");
  ASSERT_TRUE(w.has_ready());
  auto ready = w.TakeReady();
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0].first, 0);
  EXPECT_EQ(ready[0].second, "k");
  EXPECT_FALSE(w.has_ready());
  w.SignalWrite(0, "k");  // ready again after being taken
  EXPECT_EQ(w.TakeReady().size(), 1u);
}

}  // namespace
}  // namespace ringkv::server
