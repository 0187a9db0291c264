#include "core/slot_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "core/key_slot.h"
#include "core/keyspace.h"

namespace ringkv::core {
namespace {

std::vector<std::string> Sorted(std::vector<std::string_view> v) {
  std::vector<std::string> out(v.begin(), v.end());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(SlotIndex, StandaloneKeepsNone) {
  Keyspace ks(1);
  bool created;
  ks.db(0).FindOrInsert("a", 0, &created);
  EXPECT_EQ(ks.db(0).slot_index(), nullptr);
}

TEST(SlotIndex, FollowsInsertsErasesExpiryAndFlushes) {
  Keyspace ks(2);
  Database& db = ks.db(0);
  bool created;
  db.FindOrInsert("before", 0, &created);  // present when the index starts
  ks.EnableSlotIndexes();
  const SlotIndex& idx = *db.slot_index();
  EXPECT_EQ(idx.Count(KeyHashSlot("before")), 1u);
  for (const char* k : {"{t}1", "{t}2", "{t}3"}) db.FindOrInsert(k, 0, &created);
  const int t = KeyHashSlot("t");
  EXPECT_EQ(idx.Count(t), 3u);
  db.FindOrInsert("{t}2", 0, &created);  // existing: no change
  EXPECT_EQ(idx.Count(t), 3u);
  EXPECT_EQ(Sorted(idx.Keys(t, 10)), (std::vector<std::string>{"{t}1", "{t}2", "{t}3"}));
  EXPECT_EQ(idx.Keys(t, 2).size(), 2u);
  EXPECT_TRUE(idx.Keys(t, 0).empty());
  EXPECT_TRUE(db.Erase("{t}2"));
  EXPECT_EQ(Sorted(idx.Keys(t, 10)), (std::vector<std::string>{"{t}1", "{t}3"}));
  // Expired on access: gone from the index too.
  Entry* e = db.FindOrInsert("{t}x-long-key-stored-on-the-heap-not-inline", 0, &created);
  db.SetExpire("{t}x-long-key-stored-on-the-heap-not-inline", e, 10);
  EXPECT_EQ(idx.Count(t), 3u);
  EXPECT_EQ(db.Find("{t}x-long-key-stored-on-the-heap-not-inline", 100), nullptr);
  EXPECT_EQ(idx.Count(t), 2u);
  // Many keys through rehashing: the views stay valid.
  for (int i = 0; i < 5000; ++i) db.FindOrInsert("k" + std::to_string(i), 0, &created);
  size_t total = 0;
  for (int s = 0; s < kClusterSlots; ++s) total += idx.Count(s);
  EXPECT_EQ(total, db.size());
  for (int i = 0; i < 5000; i += 2) db.Erase("k" + std::to_string(i));
  total = 0;
  for (int s = 0; s < kClusterSlots; ++s) {
    total += idx.Count(s);
    for (std::string_view k : idx.Keys(s, 100)) EXPECT_EQ(KeyHashSlot(k), s);
  }
  EXPECT_EQ(total, db.size());
  db.Clear();
  EXPECT_EQ(idx.Count(t), 0u);
  db.FindOrInsert("{t}1", 0, &created);
  auto detached = db.Detach();
  EXPECT_EQ(idx.Count(t), 0u);
}

TEST(SlotIndex, SwapWithAnUnindexedDatabaseRebuilds) {
  Keyspace live(1), staging(1);
  live.EnableSlotIndexes();
  bool created;
  live.db(0).FindOrInsert("old", 0, &created);
  staging.db(0).FindOrInsert("{s}new1", 0, &created);
  staging.db(0).FindOrInsert("{s}new2", 0, &created);
  live.db(0).Swap(staging.db(0));
  ASSERT_NE(live.db(0).slot_index(), nullptr);
  EXPECT_EQ(live.db(0).slot_index()->Count(KeyHashSlot("s")), 2u);
  EXPECT_EQ(live.db(0).slot_index()->Count(KeyHashSlot("old")), 0u);
  EXPECT_EQ(staging.db(0).slot_index(), nullptr);
}

}  // namespace
}  // namespace ringkv::core
