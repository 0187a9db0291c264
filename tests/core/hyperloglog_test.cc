#include "core/hyperloglog.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ringkv::core::hll {
namespace {

TEST(HyperLogLogTest, EmptyIsRedisBytes) {
  const std::string s = NewSparse();
  EXPECT_EQ(s, std::string("HYLL\x01\0\0\0\0\0\0\0\0\0\0\0\x7f\xff", 18));
  EXPECT_TRUE(LooksValid(s));
  uint64_t card = 1;
  EXPECT_TRUE(CachedCardinality(s, &card));
  EXPECT_EQ(card, 0u);
  EXPECT_EQ(DecodeSparse(s), "Z:16384");
}

TEST(HyperLogLogTest, AddsLandWhereRedisPutsThem) {
  // redis-server 7.0: PFADD h a b c; PFDEBUG DECODE h.
  std::string s = NewSparse();
  for (const char* e : {"a", "b", "c"}) EXPECT_EQ(Add(&s, e, 3000), 1);
  EXPECT_EQ(Add(&s, "a", 3000), 0);
  EXPECT_EQ(DecodeSparse(s), "Z:8436 v:1,1 Z:4274 v:2,1 Z:3068 v:1,1 Z:603");
  uint64_t card;
  EXPECT_FALSE(CachedCardinality(s, &card));  // invalidated by the adds
  bool invalid = false;
  EXPECT_EQ(Count(s, &invalid), 3u);
  EXPECT_FALSE(invalid);
}

TEST(HyperLogLogTest, SparseAndDenseAgree) {
  std::string sparse = NewSparse(), dense = NewSparse();
  ASSERT_TRUE(SparseToDense(&dense));
  EXPECT_EQ(dense.size(), kDenseSize);
  for (int i = 0; i < 2000; ++i) {
    const std::string e = "element:" + std::to_string(i);
    EXPECT_EQ(Add(&sparse, e, 1 << 20), Add(&dense, e, 1 << 20));
  }
  EXPECT_EQ(EncodingOf(sparse), kSparse);
  std::vector<uint8_t> a(kRegisters), b(kRegisters);
  ASSERT_TRUE(MergeInto(a.data(), sparse));
  ASSERT_TRUE(MergeInto(b.data(), dense));
  EXPECT_EQ(a, b);
  bool invalid = false;
  const uint64_t n = Count(sparse, &invalid);
  EXPECT_EQ(n, Count(dense, &invalid));
  EXPECT_EQ(n, CountRegisters(a.data()));
  EXPECT_NEAR(static_cast<double>(n), 2000, 2000 * 0.05);
  // The sparse one, made dense, is byte for byte the dense one.
  std::string converted = sparse;
  ASSERT_TRUE(SparseToDense(&converted));
  EXPECT_EQ(converted.substr(kHeaderSize), dense.substr(kHeaderSize));
}

// Redis's rule (hllSparseSet): an update that grows the sparse form promotes
// it exactly when the grown size would pass the limit -- reaching the limit
// stays sparse. Checked against the same update without a limit, for limits
// around every size the HLL passes through.
TEST(HyperLogLogTest, PromotesExactlyWhenTheGrownSizeWouldPassTheLimit) {
  for (size_t limit = 16; limit <= 120; ++limit) {
    std::string s = NewSparse();
    for (int i = 0; i < 400 && EncodingOf(s) == kSparse; ++i) {
      const std::string element = "e" + std::to_string(i);
      std::string unlimited = s;
      const int changed = Add(&unlimited, element, SIZE_MAX);
      ASSERT_EQ(EncodingOf(unlimited), kSparse);
      ASSERT_EQ(Add(&s, element, limit), changed) << "limit " << limit << " element " << i;
      if (unlimited.size() > limit) {
        ASSERT_EQ(EncodingOf(s), kDense) << "limit " << limit << " element " << i;
        std::string promoted = unlimited;
        ASSERT_TRUE(SparseToDense(&promoted));
        EXPECT_EQ(s.substr(kHeaderSize), promoted.substr(kHeaderSize));
      } else {
        ASSERT_EQ(EncodingOf(s), kSparse) << "limit " << limit << " element " << i;
        ASSERT_EQ(s, unlimited);
      }
    }
    EXPECT_EQ(EncodingOf(s), kDense) << "limit " << limit;
  }
}

TEST(HyperLogLogTest, TurnsDensePastTheSparseLimit) {
  std::string s = NewSparse();
  int i = 0;
  while (EncodingOf(s) == kSparse && i < 100000) {
    ASSERT_LE(s.size(), 300u);
    Add(&s, std::to_string(i++), 300);
  }
  EXPECT_EQ(EncodingOf(s), kDense);
  EXPECT_EQ(s.size(), kDenseSize);
  // A register value over 32 cannot be sparse.
  std::string t = NewSparse();
  EXPECT_EQ(Set(&t, 5, 33, 3000), 1);
  EXPECT_EQ(EncodingOf(t), kDense);
  EXPECT_EQ(DenseGet(reinterpret_cast<const uint8_t*>(t.data() + kHeaderSize), 5), 33);
}

TEST(HyperLogLogTest, CorruptedSparseIsReportedNotRead) {
  std::string s = NewSparse();
  Add(&s, "x", 3000);
  std::string cut = s.substr(0, s.size() - 1);  // runs no longer cover every register
  bool invalid = false;
  Count(cut, &invalid);
  EXPECT_TRUE(invalid);
  std::string copy = cut;
  EXPECT_FALSE(SparseToDense(&copy));
  EXPECT_EQ(copy, cut);
  std::vector<uint8_t> max(kRegisters);
  EXPECT_FALSE(MergeInto(max.data(), cut));
  // Too many registers: VAL runs past the end.
  std::string over = NewSparse() + std::string(10, '\x83');
  EXPECT_FALSE(MergeInto(max.data(), over));
  std::string over_copy = over;
  EXPECT_FALSE(SparseToDense(&over_copy));
  invalid = false;
  Count(over, &invalid);
  EXPECT_TRUE(invalid);
  EXPECT_EQ(Set(&cut, kRegisters - 1, 3, 3000), -1);
  // Only the header: no opcode at all.
  std::string bare = s.substr(0, kHeaderSize);
  EXPECT_EQ(Set(&bare, 0, 1, 3000), -1);
  EXPECT_FALSE(LooksValid("HYLL"));
  EXPECT_FALSE(LooksValid(std::string("HYLL\x00", 5) + std::string(11, '\0')));  // dense, wrong size
  EXPECT_FALSE(LooksValid(std::string("HYLL\x02", 5) + std::string(13, '\0')));
}

TEST(HyperLogLogTest, CachedCardinalityRoundTrips) {
  std::string s = NewSparse();
  StoreCardinality(s.data(), 0x0123456789abcdefULL & ~(1ULL << 63));
  uint64_t card;
  ASSERT_TRUE(CachedCardinality(s, &card));
  EXPECT_EQ(card, 0x0123456789abcdefULL);
  InvalidateCache(s.data());
  EXPECT_FALSE(CachedCardinality(s, &card));
}

TEST(HyperLogLogTest, SelfTestPasses) {
  std::string error;
  EXPECT_TRUE(SelfTest(&error)) << error;
}

}  // namespace
}  // namespace ringkv::core::hll
