#include "core/keyspace.h"

#include <gtest/gtest.h>

#include "core/glob.h"
#include "core/string_ops.h"

namespace ringkv::core {
namespace {

TEST(KeyspaceTest, LazyExpiryHidesAndDeletes) {
  Keyspace ks(16);
  Database& db = ks.db(0);
  bool created;
  Entry* e = db.FindOrInsert("k", 1000, &created);
  ASSERT_TRUE(created);
  e->value = StringValue("v");
  db.SetExpire("k", e, 2000);
  EXPECT_EQ(db.expires(), 1u);
  EXPECT_NE(db.Find("k", 1999), nullptr);
  EXPECT_EQ(db.Find("k", 2000), nullptr);
  EXPECT_EQ(db.size(), 0u);
  EXPECT_EQ(db.expires(), 0u);
  EXPECT_EQ(ks.stats().expired_keys, 1u);
}

TEST(KeyspaceTest, ExpiryIndexStaysConsistentUnderSwapRemove) {
  Keyspace ks(1);
  Database& db = ks.db(0);
  for (int i = 0; i < 100; ++i) {
    bool created;
    std::string k = "k" + std::to_string(i);
    Entry* e = db.FindOrInsert(k, 0, &created);
    db.SetExpire(k, e, 1000 + i);
  }
  for (int i = 0; i < 100; i += 3) db.Erase("k" + std::to_string(i));
  for (int i = 1; i < 100; i += 3) db.SetExpire("k" + std::to_string(i), db.Find("k" + std::to_string(i), 0), -1);
  for (int i = 0; i < 100; ++i) {
    Entry* e = db.Find("k" + std::to_string(i), 0);
    if (i % 3 == 0) {
      EXPECT_EQ(e, nullptr);
    } else if (i % 3 == 1) {
      ASSERT_NE(e, nullptr);
      EXPECT_EQ(db.GetExpire(e), -1);
    } else {
      ASSERT_NE(e, nullptr);
      EXPECT_EQ(db.GetExpire(e), 1000 + i);
    }
  }
}

TEST(KeyspaceTest, ActiveExpiryRemovesStaleKeysWithoutAccess) {
  Keyspace ks(2);
  for (int d = 0; d < 2; ++d) {
    for (int i = 0; i < 1000; ++i) {
      bool created;
      std::string k = "k" + std::to_string(i);
      Entry* e = ks.db(d).FindOrInsert(k, 0, &created);
      ks.db(d).SetExpire(k, e, i < 900 ? 100 : 1000000);
    }
  }
  for (int round = 0; round < 50; ++round) ks.ActiveExpireCycle(200, 1000000);
  EXPECT_EQ(ks.db(0).size(), 100u);
  EXPECT_EQ(ks.db(1).size(), 100u);
  EXPECT_EQ(ks.stats().expired_keys, 1800u);
}

TEST(StringOpsTest, SetConditionsAndKeepTtl) {
  Keyspace ks(1);
  Database& db = ks.db(0);
  SetOptions nx;
  nx.condition = SetOptions::Condition::kIfMissing;
  EXPECT_TRUE(OpSet(db, "a", "1", nx, 0)->written);
  EXPECT_FALSE(OpSet(db, "a", "2", nx, 0)->written);
  SetOptions ex;
  ex.expire_at_ms = 5000;
  OpSet(db, "a", "3", ex, 0);
  SetOptions keep;
  keep.keep_ttl = true;
  keep.get = true;
  auto r = OpSet(db, "a", "4", keep, 0);
  EXPECT_EQ(*r->previous, "3");
  EXPECT_EQ(db.GetExpire(db.Find("a", 0)), 5000);
  OpSet(db, "a", "5", SetOptions{}, 0);
  EXPECT_EQ(db.GetExpire(db.Find("a", 0)), -1);
}

TEST(StringOpsTest, IncrOverflowAndType) {
  Keyspace ks(1);
  Database& db = ks.db(0);
  OpSet(db, "n", "9223372036854775806", SetOptions{}, 0);
  EXPECT_EQ(OpIncrBy(db, "n", 1, 0).value(), INT64_MAX);
  EXPECT_EQ(OpIncrBy(db, "n", 1, 0).status(), OpStatus::kOverflow);
  OpSet(db, "s", "abc", SetOptions{}, 0);
  EXPECT_EQ(OpIncrBy(db, "s", 1, 0).status(), OpStatus::kNotInteger);
  EXPECT_EQ(OpIncrByFloat(db, "s", "1", 0).status(), OpStatus::kNotFloat);
  EXPECT_EQ(OpIncrByFloat(db, "n", "abc", 0).status(), OpStatus::kNotFloat);
  OpSet(db, "huge", "1e5000", SetOptions{}, 0);  // overflows a long double: string2ld refuses it
  EXPECT_EQ(OpIncrByFloat(db, "huge", "1", 0).status(), OpStatus::kNotFloat);
  EXPECT_EQ(OpAppend(db, "s", "defg", 5, 0).status(), OpStatus::kTooBig);
}

TEST(StringOpsTest, SetRangeRefusesOffsetsWhoseEndOverflows) {
  Keyspace ks(1);
  Database& db = ks.db(0);
  const int64_t max_len = 512 * 1024 * 1024;
  // offset + length would overflow int64 (undefined; it once wrapped past
  // the size check and the server died allocating).
  EXPECT_EQ(OpSetRange(db, "missing", INT64_MAX, "ab", max_len, 0).status(), OpStatus::kTooBig);
  OpSet(db, "s", "abc", SetOptions{}, 0);
  EXPECT_EQ(OpSetRange(db, "s", INT64_MAX - 1, "ab", max_len, 0).status(), OpStatus::kTooBig);
  EXPECT_EQ(OpSetRange(db, "s", max_len - 1, "ab", max_len, 0).status(), OpStatus::kTooBig);
  EXPECT_EQ(OpSetRange(db, "s", 1, "XY", max_len, 0).value(), 3);
}

TEST(GlobTest, RedisPatterns) {
  EXPECT_TRUE(GlobMatch("*", ""));
  EXPECT_TRUE(GlobMatch("h?llo", "hello"));
  EXPECT_TRUE(GlobMatch("h*llo", "heeeello"));
  EXPECT_TRUE(GlobMatch("h[ae]llo", "hallo"));
  EXPECT_FALSE(GlobMatch("h[ae]llo", "hillo"));
  EXPECT_TRUE(GlobMatch("h[^e]llo", "hallo"));
  EXPECT_FALSE(GlobMatch("h[^e]llo", "hello"));
  EXPECT_TRUE(GlobMatch("h[a-b]llo", "hbllo"));
  EXPECT_TRUE(GlobMatch("h\\*llo", "h*llo"));
  EXPECT_FALSE(GlobMatch("h\\*llo", "hello"));
  EXPECT_TRUE(GlobMatch("MAX*", "maxclients", true));
  EXPECT_FALSE(GlobMatch("MAX*", "maxclients", false));
  EXPECT_TRUE(GlobMatch("*a*b*c*", "xxaxxbxxcxx"));
  EXPECT_FALSE(GlobMatch("*a*b*c*d", "xxaxxbxxcxx"));
}

}  // namespace
}  // namespace ringkv::core
