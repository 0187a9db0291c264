#include "core/dict.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

namespace ringkv::core {
namespace {

std::string K(int i) { return "key:" + std::to_string(i); }

TEST(DictTest, InsertFindEraseAcrossGrowthAndShrink) {
  Dict<int> d;
  for (int i = 0; i < 10000; ++i) {
    auto [v, inserted] = d.Insert(K(i));
    ASSERT_TRUE(inserted);
    *v = i;
  }
  EXPECT_EQ(d.size(), 10000u);
  for (int i = 0; i < 10000; ++i) ASSERT_EQ(*d.Find(K(i)), i);
  EXPECT_FALSE(d.Insert(K(5)).second);
  for (int i = 0; i < 10000; i += 2) ASSERT_TRUE(d.Erase(K(i)));
  EXPECT_FALSE(d.Erase(K(0)));
  for (int i = 9990; i < 10000; ++i) d.Erase(K(i));
  while (d.Rehash(100)) {
  }
  for (int i = 1; i < 9990; i += 2) ASSERT_NE(d.Find(K(i)), nullptr) << i;
  for (int i = 1; i < 9990; i += 2) d.Erase(K(i));
  for (int round = 0; round < 10; ++round) {  // what the cron does each tick
    d.ResizeIfNeeded();
    while (d.Rehash(100)) {
    }
  }
  EXPECT_EQ(d.size(), 0u);
  EXPECT_LE(d.buckets(), 8u);  // shrunk back
}

// removals() moves whenever a node leaves (so a node pointer taken before
// may be stale), and only then: inserts and rehashing keep nodes in place.
TEST(DictTest, RemovalsCountEveryWayANodeLeavesAndNothingElse) {
  using Counting = Dict<int, DictNode<int>, /*kCountRemovals=*/true>;
  Counting d;
  Counting other;
  int* first = d.Insert(K(0)).first;
  const uint64_t start = d.removals();
  for (int i = 1; i < 5000; ++i) d.Insert(K(i));  // grows and rehashes
  while (d.Rehash(100)) {
  }
  d.StepRehash();
  EXPECT_EQ(d.removals(), start);
  EXPECT_EQ(d.Find(K(0)), first);  // the node never moved
  EXPECT_FALSE(d.Erase("absent"));
  EXPECT_EQ(d.removals(), start);
  ASSERT_TRUE(d.Erase(K(1)));
  EXPECT_EQ(d.removals(), start + 1);
  d.Swap(other);
  EXPECT_EQ(d.removals(), start + 2);
  EXPECT_EQ(other.removals(), 1u);
  Counting moved(std::move(other));
  EXPECT_EQ(other.removals(), 2u);
  EXPECT_EQ(moved.Find(K(0)), first);
  moved.Clear();
  EXPECT_EQ(moved.removals(), 2u);
}

// Every table-encoded hash, set and sorted set holds a Dict: the count of
// removals is the keyspace's alone and costs the others nothing.
TEST(DictTest, OnlyACountingDictCarriesTheCount) {
  EXPECT_EQ(sizeof(Dict<std::string>), 48u);
  EXPECT_EQ(sizeof(Dict<double>), 48u);
  EXPECT_EQ(sizeof(Dict<int, DictNode<int>, true>), 56u);
}

TEST(DictTest, NoOperationDoesAFullRehash) {
  Dict<int> d;
  for (int i = 0; i < 1 << 16; ++i) d.Insert(K(i));
  while (d.Rehash(1000)) {
  }
  d.Insert("trigger");  // load factor 1 reached: starts a resize ...
  d.Insert("one-more");
  EXPECT_TRUE(d.rehashing());  // ... that is still in progress after more operations
  for (int i = 0; i < 1 << 16; ++i) ASSERT_NE(d.Find(K(i)), nullptr);  // lookups see both tables
}

TEST(DictTest, PrefetchedLookupsSeeBothTablesAndNeverRehash) {
  Dict<int> d;
  EXPECT_EQ(static_cast<const Dict<int>&>(d).PrefetchBucket("none"), nullptr);  // empty: no table yet
  for (int i = 0; i < 1 << 12; ++i) *d.Insert(K(i)).first = i;
  while (d.Rehash(1000)) {
  }
  d.Insert("trigger");  // starts a resize that is then in progress
  d.Insert("one-more");
  ASSERT_TRUE(d.rehashing());
  const size_t buckets = d.buckets();
  const Dict<int>& quiet = d;
  // The prefetch rounds find every key, in either table, and move nothing.
  for (int i = 0; i < 1 << 12; ++i) {
    const Dict<int>::Bucket b = quiet.PrefetchBucket(K(i));
    ASSERT_NE(b, nullptr);
    ASSERT_TRUE(Dict<int>::PrefetchChain(b)) << i;
    const int* v = quiet.FindInBucket(b, K(i));
    ASSERT_NE(v, nullptr) << i;
    ASSERT_EQ(*v, i);
  }
  const Dict<int>::Bucket missing = quiet.PrefetchBucket("missing");
  EXPECT_EQ(quiet.FindInBucket(missing, "missing"), nullptr);
  EXPECT_TRUE(d.rehashing());
  EXPECT_EQ(d.buckets(), buckets);
  Dict<int> empty;
  EXPECT_EQ(static_cast<const Dict<int>&>(empty).PrefetchBucket("k"), nullptr);
}

// Every key present for the whole scan is returned, whatever happens between
// cursor calls: growth (with rehashing in progress) and shrinking.
TEST(DictTest, ScanGuaranteeUnderGrowthAndShrink) {
  for (int mode = 0; mode < 2; ++mode) {
    Dict<int> d;
    const int base = 2000;
    for (int i = 0; i < base; ++i) d.Insert(K(i));
    std::set<std::string> seen;
    uint64_t cursor = 0;
    int step = 0;
    do {
      cursor = d.Scan(cursor, [&](const Key& k, int&) { seen.insert(std::string(k.view())); });
      ++step;
      if (mode == 0 && step < 200) {  // several doublings while the scan runs
        for (int j = 0; j < 50; ++j) d.Insert("new:" + std::to_string(step) + ":" + std::to_string(j));
      } else if (step < 200) {
        for (int j = 0; j < 10; ++j) d.Erase("new:" + std::to_string(j));  // no-op erases keep steps going
        if (step == 3) {
          for (int i = base; i < base + 20000; ++i) d.Insert(K(i));
        }
        if (step == 40) {
          for (int i = base; i < base + 20000; ++i) d.Erase(K(i));  // shrink while scanning
        }
      }
    } while (cursor != 0);
    for (int i = 0; i < base; ++i) ASSERT_TRUE(seen.count(K(i))) << "mode " << mode << " missed " << K(i);
  }
}

TEST(DictTest, RandomNodeCoversTheTable) {
  Dict<int> d;
  for (int i = 0; i < 64; ++i) d.Insert(K(i));
  absl::BitGen rng;
  std::set<std::string> seen;
  for (int i = 0; i < 5000; ++i) seen.insert(std::string(d.RandomNode(rng)->key().view()));
  EXPECT_EQ(seen.size(), 64u);
  Dict<int> empty;
  EXPECT_EQ(empty.RandomNode(rng), nullptr);
}

// SRANDMEMBER / HRANDFIELD / SPOP draw with FairRandomNode: on a small
// table (sampled whole) each key is equally likely. Redis's suite checks
// this with a chi-square over 10 keys, df = 9, failing above 40 (p 1e-5);
// RandomNode alone fails it when chains differ in length.
TEST(DictTest, FairRandomNodeIsUniformOnASmallTable) {
  Dict<int> d;
  for (int i = 0; i < 10; ++i) d.Insert(K(i));
  absl::BitGen rng;
  std::map<std::string, int> seen;
  const int draws = 10000;
  for (int i = 0; i < draws; ++i) ++seen[std::string(d.FairRandomNode(rng)->key().view())];
  ASSERT_EQ(seen.size(), 10u);
  double chi = 0;
  const double expected = draws / 10.0;
  for (const auto& [key, n] : seen) chi += (n - expected) * (n - expected) / expected;
  EXPECT_LT(chi, 40.0);
}

TEST(DictTest, ReserveSizesOnceForAKnownCount) {
  Dict<int> d;
  d.Reserve(1000);
  EXPECT_EQ(d.buckets(), 1024u);
  for (int i = 0; i < 1000; ++i) *d.Insert(K(i)).first = i;
  EXPECT_FALSE(d.rehashing());  // no growth on the way
  EXPECT_EQ(d.buckets(), 1024u);
  d.Reserve(10);  // a non-empty table is left alone
  EXPECT_EQ(d.buckets(), 1024u);
}

// Found by tests/core/rdb_fuzz_test.cc: a RESIZEDB hint from a corrupt RDB
// file reached Reserve; past 2^63 the power-of-two search wrapped to 0 and
// never ended, and past a few billion the table could not be allocated.
TEST(DictTest, ReserveIgnoresImpossibleCounts) {
  Dict<int> d;
  d.Reserve((size_t{1} << 63) + 1);
  d.Reserve(SIZE_MAX);
  d.Reserve((size_t{1} << 40) + 1);
  EXPECT_LE(d.buckets(), 4u);
  *d.Insert(K(1)).first = 1;
  EXPECT_EQ(*d.Find(K(1)), 1);
}

TEST(DictTest, WithoutResizeGrowsOnlyPastFiveKeysPerBucket) {
  Dict<int> d;
  for (int i = 0; i < 64; ++i) *d.Insert(K(i)).first = i;
  while (d.Rehash(100)) {
  }
  const size_t buckets = d.buckets();
  d.set_resize_allowed(false);
  for (int i = 64; i < static_cast<int>(buckets) * 5; ++i) *d.Insert(K(i)).first = i;
  EXPECT_EQ(d.buckets(), buckets);  // up to 5 per bucket: no resize
  *d.Insert(K(-1)).first = -1;
  EXPECT_GT(d.buckets(), buckets);  // past it: grows anyway
  for (int i = 0; i < static_cast<int>(buckets) * 5; ++i) d.Erase(K(i));
  while (d.Rehash(100)) {
  }
  const size_t before_shrink = d.buckets();
  d.ResizeIfNeeded();
  EXPECT_EQ(d.buckets(), before_shrink);  // never shrinks while disallowed
  d.set_resize_allowed(true);
  d.ResizeIfNeeded();
  EXPECT_LT(d.buckets(), before_shrink);  // 128 buckets: shrunk at once
  EXPECT_FALSE(d.rehashing());
}

TEST(DictTest, SmallTablesMoveAtOnceLargeOnesStepByStep) {
  Dict<int> d;
  for (int i = 0; i < 256; ++i) {
    *d.Insert(K(i)).first = i;
    EXPECT_FALSE(d.rehashing()) << i;  // moving out of up to 128 buckets completes at once
  }
  EXPECT_EQ(d.buckets(), 256u);
  *d.Insert(K(256)).first = 256;  // 256 -> 512: moved a step per operation
  EXPECT_TRUE(d.rehashing());
  EXPECT_EQ(d.buckets(), 256u + 512u);
  for (int i = 0; i <= 256; ++i) EXPECT_EQ(*d.Find(K(i)), i);
  while (d.Rehash(100)) {
  }
  EXPECT_EQ(d.buckets(), 512u);
  EXPECT_EQ(d.size(), 257u);
}

}  // namespace
}  // namespace ringkv::core
