#include "core/keyspace.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "core/eviction.h"
#include "core/glob.h"
#include "core/string_value.h"

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

TEST(KeyspaceTest, PeekPrefetchedTouchesNoAccessExpiryOrStats) {
  Keyspace ks(16);
  Database& db = ks.db(0);
  bool created;
  Entry* e = db.FindOrInsert("k", 1000, &created);
  e->value = StringValue("v");
  db.SetExpire("k", e, 2000);
  e->set_lru(7);
  const KeyspaceStats before = ks.stats();
  const Database& quiet = db;
  auto peek = [&quiet](std::string_view key) -> const Entry* {
    const Database::PrefetchedBucket b = quiet.PrefetchBucket(key);
    return b == nullptr ? nullptr : quiet.PeekPrefetched(b, key);
  };
  // Past its deadline: still returned, not deleted, nothing counted.
  const Entry* q = peek("k");
  ASSERT_EQ(q, e);
  EXPECT_EQ(q->lru(), 7u);
  EXPECT_EQ(peek("missing"), nullptr);
  EXPECT_EQ(db.size(), 1u);
  EXPECT_EQ(db.expires(), 1u);
  EXPECT_EQ(ks.stats().expired_keys, before.expired_keys);
  EXPECT_EQ(ks.stats().keyspace_hits, before.keyspace_hits);
  EXPECT_EQ(ks.stats().keyspace_misses, before.keyspace_misses);
  // The ordinary lookup, by contrast, expires it.
  EXPECT_EQ(db.Find("k", 2000), nullptr);
  EXPECT_EQ(peek("k"), nullptr);
}

// An entry the prefetch found (KnownEntry) is taken for that very view in
// that database, until a node leaves the table; a deliberately wrong one
// shows where it was taken.
TEST(KeyspaceTest, KnownEntryIsTakenUntilANodeLeavesItsTable) {
  Keyspace ks(16);
  bool created;
  Entry* a = ks.db(0).FindOrInsert("key:1", 0, &created);
  a->value = StringValue("a");
  Entry* b = ks.db(0).FindOrInsert("other", 0, &created);
  b->value = StringValue("b");
  Entry* c = ks.db(3).FindOrInsert("key:1", 0, &created);
  c->value = StringValue("c");
  const std::string argv1 = "key:1";
  const std::string elsewhere = "key:1";
  const std::string_view key(argv1);
  {
    Keyspace::KnownKeyHashScope scope(ks, key, Database::KeyHash(key), ks.db(0).Found(b));
    EXPECT_EQ(ks.db(0).FindForRead(key, 0), b);          // taken
    EXPECT_EQ(ks.db(0).Find(key, 0), b);
    EXPECT_EQ(ks.db(0).FindOrInsert(key, 0, &created), b);
    EXPECT_FALSE(created);
    EXPECT_EQ(ks.db(0).FindForRead(elsewhere, 0), a);    // another view: looked up
    EXPECT_EQ(ks.db(3).FindForRead(key, 0), c);          // another database: looked up
    ks.db(0).FindOrInsert("new", 0, &created);           // an insert removes nothing
    EXPECT_EQ(ks.db(0).FindForRead(key, 0), b);
    {
      Keyspace::KnownKeyHashScope inner(ks, key, Database::KeyHash(key));
      EXPECT_EQ(ks.db(0).FindForRead(key, 0), a);        // none known in the nested one
    }
    EXPECT_EQ(ks.db(0).FindForRead(key, 0), b);          // the outer one is back
    ks.db(3).Erase("absent");                            // nothing left db 0's table
    EXPECT_EQ(ks.db(0).FindForRead(key, 0), b);
    ASSERT_TRUE(ks.db(0).Erase("new"));                  // a node left: looked up
    EXPECT_EQ(ks.db(0).FindForRead(key, 0), a);
    EXPECT_EQ(ks.db(0).FindOrInsert(key, 0, &created), a);
    EXPECT_FALSE(created);
  }
  {
    Keyspace::KnownKeyHashScope scope(ks, key, Database::KeyHash(key), ks.db(0).Found(b));
    ks.SwapDb(0, 3);                                     // db 0 is another Database now
    EXPECT_EQ(ks.db(0).FindForRead(key, 0), c);
    EXPECT_EQ(ks.db(3).FindForRead(key, 0), b);          // the one it was found in
    ks.SwapDb(0, 3);
  }
  {
    Keyspace::KnownKeyHashScope scope(ks, key, Database::KeyHash(key), ks.db(0).Found(a));
    EXPECT_EQ(ks.db(0).FindForRead(key, 0), a);
    ks.db(0).Clear();                                    // every node left: not found
    EXPECT_EQ(ks.db(0).FindForRead(key, 0), nullptr);
    EXPECT_EQ(ks.db(0).Find(key, 0), nullptr);
    Entry* again = ks.db(0).FindOrInsert(key, 0, &created);  // inserted anew
    EXPECT_TRUE(created);
    again->value = StringValue("again");
    ASSERT_TRUE(ks.db(0).Erase(key));
  }
  {
    // Database::Swap (the swapdb of a replica's async load) moves the nodes.
    Keyspace::KnownKeyHashScope scope(ks, key, Database::KeyHash(key), ks.db(3).Found(c));
    EXPECT_EQ(ks.db(3).FindForRead(key, 0), c);
    ks.db(3).Swap(ks.db(0));
    EXPECT_EQ(ks.db(3).FindForRead(key, 0), nullptr);
    EXPECT_EQ(ks.db(0).FindForRead(key, 0), c);          // found where it went, by lookup
  }
}

// A known key hash (a batch's prefetch hashed the command's key) is taken
// for that very view only, in any database, and a nested scope puts the
// outer one back. A wrong hash shows where it was taken: the lookup misses.
TEST(KeyspaceTest, KnownKeyHashIsTakenForThatViewOnly) {
  Keyspace ks(16);
  bool created;
  ks.db(0).FindOrInsert("key:1", 0, &created)->value = StringValue("a");
  ks.db(3).FindOrInsert("key:1", 0, &created)->value = StringValue("b");
  ks.db(0).FindOrInsert("key:", 0, &created)->value = StringValue("c");
  const std::string argv1 = "key:1";       // the command's argument
  const std::string elsewhere = "key:1";   // equal bytes, another address
  const std::string_view key(argv1);
  {
    Keyspace::KnownKeyHashScope right(ks, key, Database::KeyHash(key));
    EXPECT_NE(ks.db(0).FindForRead(key, 0), nullptr);
    EXPECT_NE(ks.db(3).Find(key, 0), nullptr);
    // FindOrInsert takes it too: the existing entry, not a second one.
    Entry* e = ks.db(0).FindOrInsert(key, 0, &created);
    EXPECT_FALSE(created);
    EXPECT_EQ(e, ks.db(0).Find(elsewhere, 0));
    {
      Keyspace::KnownKeyHashScope wrong(ks, key, Database::KeyHash(key) ^ 1);
      EXPECT_EQ(ks.db(0).FindForRead(key, 0), nullptr);                  // taken: the wrong bucket
      EXPECT_NE(ks.db(0).FindForRead(elsewhere, 0), nullptr);            // another view: hashed
      EXPECT_NE(ks.db(0).FindForRead(key.substr(0, 4), 0), nullptr);    // same start, another size: hashed
    }
    EXPECT_NE(ks.db(0).FindForRead(key, 0), nullptr);  // the outer scope is back
  }
  {
    Keyspace::KnownKeyHashScope wrong(ks, key, Database::KeyHash(key) ^ 1);
  }
  EXPECT_NE(ks.db(0).FindForRead(key, 0), nullptr);  // no scope: hashed
  EXPECT_EQ(ks.db(0).size(), 2u);
  // The empty key, as a view with a null data(), with no scope open: hashed
  // too, so it is found where an equal key was stored.
  ks.db(0).FindOrInsert(std::string(), 0, &created)->value = StringValue("e");
  ASSERT_TRUE(created);
  EXPECT_NE(ks.db(0).FindForRead(std::string_view(), 0), nullptr);
  ks.db(0).FindOrInsert(std::string_view(), 0, &created);
  EXPECT_FALSE(created);
  EXPECT_EQ(ks.db(0).size(), 3u);
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
  // A cycle stops once a sample is mostly fresh, so the last stale keys go
  // a few per cycle, at random: 50 cycles left one behind about once in 500
  // runs. Cycles until none is left (each cycle finds one of the last with
  // odds of at least 1 in 6, so 2,000 cannot all miss).
  for (int round = 0; round < 2000 && (ks.db(0).size() > 100 || ks.db(1).size() > 100); ++round) {
    ks.ActiveExpireCycle(200, 1000000);
  }
  EXPECT_EQ(ks.db(0).size(), 100u);
  EXPECT_EQ(ks.db(1).size(), 100u);
  EXPECT_EQ(ks.stats().expired_keys, 1800u);
}

// active-expire-effort: a higher effort accepts fewer stale keys before a
// cycle stops (10% at effort 0, 1% at 9). 20% of 1000 keys stale, five
// cycles each: effort 9 gets below 6%, effort 0 stays above it (the odds of
// either failing are far below one in a thousand).
TEST(KeyspaceTest, ActiveExpireEffortLowersTheStaleShareLeft) {
  auto stale_left = [](int effort) {
    Keyspace ks(1);
    for (int i = 0; i < 1000; ++i) {
      bool created;
      std::string k = "k" + std::to_string(i);
      Entry* e = ks.db(0).FindOrInsert(k, 0, &created);
      ks.db(0).SetExpire(k, e, i < 200 ? 100 : 1000000);
    }
    for (int round = 0; round < 5; ++round) ks.ActiveExpireCycle(200, 1000000, effort);
    return ks.db(0).size() - 800;
  };
  EXPECT_GT(stale_left(0), 60u);
  EXPECT_LT(stale_left(9), 60u);
}

// maxmemory-eviction-tenacity: Redis's evictionTimeLimitUs.
TEST(EvictionTest, TenacityIsATimeLimit) {
  EXPECT_EQ(EvictionTimeLimitUs(0), 0);
  EXPECT_EQ(EvictionTimeLimitUs(10), 500);
  EXPECT_NEAR(EvictionTimeLimitUs(11), 575, 1);
  EXPECT_NEAR(EvictionTimeLimitUs(99), 500.0 * std::pow(1.15, 89), 1);
  EXPECT_EQ(EvictionTimeLimitUs(100), -1);  // unlimited
}

// What a deletion makes others allocate (invalidations to clients that
// cached the key, the DEL propagated) does not count against what eviction
// frees: the memory to free is fixed at the start, each key counts for its
// own memory, as Redis's performEvictions -- else the messages about the
// evicted keys would drive eviction on until nothing is left.
TEST(EvictionTest, EvictsWhatWasOverNotWhatItsOwnMessagesTake) {
  Keyspace ks(1);
  Database& db = ks.db(0);
  AccessPolicy p;
  p.policy = EvictionPolicy::kAllKeysRandom;
  size_t one_key = 0;
  for (int i = 0; i < 300; ++i) {
    bool created;
    char prefix[8];
    std::snprintf(prefix, sizeof(prefix), "%03d", i);  // every key the same size
    const std::string key = prefix + std::string(1000, 'x');
    Entry* e = db.FindOrInsert(key, 0, &created);
    e->value = StringValue("x");
    one_key = Database::EntryMemory(key, *e);
  }
  // Memory as the server sees it: the keys, plus what each eviction makes
  // ten tracking clients hold (a 1 KB invalidation each).
  size_t side_effects = 0;
  const size_t base = 1'000'000;
  auto used = [&] {
    side_effects = (300 - db.size()) * 10 * 1100;
    return base + db.size() * one_key + side_effects;
  };
  const size_t limit = used() - 20 * one_key;  // 20 keys over
  Evictor evictor;
  evictor.set_time_limit_us(-1);
  uint64_t evicted = 0;
  EXPECT_TRUE(evictor.EvictUntil(ks, p, used, limit, 0, &evicted));
  EXPECT_EQ(evicted, 20u);
  EXPECT_EQ(db.size(), 280u);
  EXPECT_GT(used(), limit);  // the messages are over it: the next command evicts again, as Redis
}

TEST(GlobTest, RedisPatterns) {
  EXPECT_FALSE(GlobMatch("*", ""));  // as stringmatchlen (tests/core/glob_test.cc)
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
