#include "core/hash_table_stats.h"

#include <gtest/gtest.h>

#include <string>

#include "core/dict.h"

namespace ringkv::core {
namespace {

// A table redis-server 7.0.15 reported for DEBUG POPULATE 20 and one more
// key: its text, byte for byte.
TEST(HashTableStatsTest, FormatsAsRedisDoes) {
  HashTableStats s;
  for (int i = 0; i < 17; ++i) s.AddBucket(0);
  for (int i = 0; i < 11; ++i) s.AddBucket(1);
  for (int i = 0; i < 2; ++i) s.AddBucket(2);
  for (int i = 0; i < 2; ++i) s.AddBucket(3);
  s.used = 21;
  EXPECT_EQ(s.size, 32u);
  EXPECT_EQ(s.slots, 15u);
  EXPECT_EQ(s.max_chain, 3u);
  EXPECT_EQ(FormatHashTableStats(0, s),
            "Hash table 0 stats (main hash table):\n"
            " table size: 32\n"
            " number of elements: 21\n"
            " different slots: 15\n"
            " max chain length: 3\n"
            " avg chain length (counted): 1.40\n"
            " avg chain length (computed): 1.40\n"
            " Chain length distribution:\n"
            "   0: 17 (53.12%)\n"
            "   1: 11 (34.38%)\n"
            "   2: 2 (6.25%)\n"
            "   3: 2 (6.25%)\n");
}

TEST(HashTableStatsTest, EmptyTableAndRehashingTarget) {
  EXPECT_EQ(FormatHashTableStats(0, HashTableStats{}),
            "Hash table 0 stats (main hash table):\nNo stats available for empty dictionaries\n");
  HashTableStats s;
  s.AddBucket(0);
  s.AddBucket(1);
  s.used = 1;
  EXPECT_EQ(FormatHashTableStats(1, s).substr(0, 40), "Hash table 1 stats (rehashing target):\n ");
}

// Chains of 49 and longer share the last count, which Redis does not list.
TEST(HashTableStatsTest, LongChainsShareTheLastCountUnlisted) {
  HashTableStats s;
  s.AddBucket(60);
  s.AddBucket(0);
  s.used = 60;
  EXPECT_EQ(s.buckets_by_chain[HashTableStats::kChainLengths - 1], 1u);
  EXPECT_EQ(s.max_chain, 60u);
  const std::string text = FormatHashTableStats(0, s);
  EXPECT_NE(text.find(" max chain length: 60\n"), std::string::npos);
  EXPECT_NE(text.find("   0: 1 (50.00%)\n"), std::string::npos);
  EXPECT_EQ(text.find("49:"), std::string::npos);
}

// An open-addressing table: a slot is a bucket of one.
TEST(HashTableStatsTest, SlotsAreBucketsOfOne) {
  const HashTableStats s = HashTableStats::OfSlots(15, 3);
  const std::string text = FormatHashTableStats(0, s);
  EXPECT_NE(text.find(" table size: 15\n number of elements: 3\n different slots: 3\n max chain length: 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("   0: 12 (80.00%)\n   1: 3 (20.00%)\n"), std::string::npos);
}

// A Dict reports its buckets as they are, and its second table while it
// rehashes.
TEST(HashTableStatsTest, DictReportsBothTablesWhileRehashing) {
  Dict<int> d;
  for (int i = 0; i < 1000; ++i) d.Insert("k" + std::to_string(i));
  while (d.Rehash(1000)) {
  }
  HashTableStats s = d.TableStats(0);
  EXPECT_EQ(s.used, 1000u);
  EXPECT_EQ(s.size, d.buckets());
  EXPECT_EQ(s.total_chain, 1000u);
  std::string text = DictStatsText(d);
  EXPECT_EQ(text.find("rehashing target"), std::string::npos);
  // Past a load factor of 1 it grows: one more insert starts a rehash that
  // small steps have not finished.
  int i = 1000;
  while (!d.rehashing()) d.Insert("k" + std::to_string(i++));
  text = DictStatsText(d);
  EXPECT_NE(text.find("Hash table 0 stats (main hash table):\n"), std::string::npos);
  EXPECT_NE(text.find("Hash table 1 stats (rehashing target):\n"), std::string::npos);
  EXPECT_EQ(d.TableStats(0).used + d.TableStats(1).used, d.size());
}

}  // namespace
}  // namespace ringkv::core
