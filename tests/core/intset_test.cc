#include "core/intset.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>

#include "tests/core/hex.h"

namespace ringkv::core {
namespace {

// The intsets redis-server 7.0.15 put in DUMP payloads (rdbcompression no).
TEST(IntsetTest, BytesAreRedisBytes) {
  Intset s1;  // SADD s1 3 -2 1
  for (int64_t v : {3, -2, 1}) EXPECT_TRUE(s1.Add(v));
  EXPECT_EQ(s1.bytes(), Unhex("0200000003000000feff01000300"));
  Intset s2;  // SADD s2 5 70000 -1: 32-bit
  for (int64_t v : {5, 70000, -1}) s2.Add(v);
  EXPECT_EQ(s2.bytes(), Unhex("0400000003000000ffffffff0500000070110100"));
  Intset s3;  // SADD s3 1 -5000000000: 64-bit
  for (int64_t v : {int64_t{1}, int64_t{-5000000000}}) s3.Add(v);
  EXPECT_EQ(s3.bytes(), Unhex("0800000002000000000efad5feffffff0100000000000000"));
  for (const Intset* s : {&s1, &s2, &s3}) EXPECT_TRUE(Intset::Validate(s->bytes()).ok());
  Intset read = Intset::FromBytes(std::string(s2.bytes()));
  EXPECT_EQ(read.size(), 3u);
  EXPECT_EQ(read.Get(0), -1);
  EXPECT_EQ(read.Get(2), 70000);
}

TEST(IntsetTest, MatchesAStdSetUnderRandomOperations) {
  std::mt19937_64 rng(11);
  Intset s;
  std::set<int64_t> model;
  for (int i = 0; i < 20000; ++i) {
    const int width = static_cast<int>(rng() % 3);  // mostly small, sometimes wide
    int64_t v = static_cast<int64_t>(rng());
    if (width == 0) v %= 1000;
    if (width == 1) v %= 100000;
    if (rng() % 3 == 0) {
      EXPECT_EQ(s.Remove(v), model.erase(v) == 1);
    } else {
      EXPECT_EQ(s.Add(v), model.insert(v).second);
    }
  }
  ASSERT_EQ(s.size(), model.size());
  size_t i = 0;
  for (int64_t v : model) {
    EXPECT_EQ(s.Get(i++), v);
    EXPECT_TRUE(s.Contains(v));
  }
  EXPECT_EQ(s.encoding(), 8u);  // upgraded once a 64-bit value came, never narrowed
  EXPECT_TRUE(Intset::Validate(s.bytes()).ok());
}

TEST(IntsetTest, ContainsAcrossEncodings) {
  Intset s;
  s.Add(7);
  EXPECT_FALSE(s.Contains(70000));  // wider than the encoding: cannot be there
  EXPECT_FALSE(s.Remove(int64_t{1} << 40));
  EXPECT_EQ(s.encoding(), 2u);
  s.Add(INT64_MIN);
  s.Add(INT64_MAX);
  EXPECT_EQ(s.Get(0), INT64_MIN);
  EXPECT_EQ(s.Get(2), INT64_MAX);
  EXPECT_TRUE(s.Contains(7));
}

TEST(IntsetTest, ValidateRefusesCorruption) {
  Intset s;
  for (int64_t v : {1, 2, 3}) s.Add(v);
  const std::string good(s.bytes());
  for (size_t cut = 0; cut < good.size(); ++cut) EXPECT_FALSE(Intset::Validate(good.substr(0, cut)).ok());
  std::string unsorted = good;
  std::swap(unsorted[8], unsorted[10]);  // 2, 1, 3
  EXPECT_FALSE(Intset::Validate(unsorted).ok());
  std::string dup = good;
  dup[10] = 1;  // 1, 1, 3
  EXPECT_FALSE(Intset::Validate(dup).ok());
  std::string bad_enc = good;
  bad_enc[0] = 3;
  EXPECT_FALSE(Intset::Validate(bad_enc).ok());
  EXPECT_FALSE(Intset::Validate(Unhex("0200000000000000")).ok());  // empty: Redis refuses it too
}

}  // namespace
}  // namespace ringkv::core
