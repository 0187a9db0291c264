#include "core/zset_value.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tests/core/hex.h"

namespace ringkv::core {
namespace {

const double kInf = std::numeric_limits<double>::infinity();

std::vector<std::pair<std::string, double>> All(const ZSetValue& z, bool reverse = false) {
  std::vector<std::pair<std::string, double>> out;
  z.Walk(0, reverse, [&](std::string_view m, double s) {
    out.emplace_back(m, s);
    return true;
  });
  return out;
}

TEST(ZSetValueTest, ScoreTextIsRedisText) {
  EXPECT_EQ(ZScoreToString(2), "2");
  EXPECT_EQ(ZScoreToString(-0.0), "0");  // stored as the integer 0, as Redis does
  EXPECT_EQ(ZScoreToString(0.1), "0.10000000000000001");
  EXPECT_EQ(ZScoreToString(1e20), "1e+20");
  EXPECT_EQ(ZScoreToString(4503599627370495.0), "4503599627370495");
  EXPECT_EQ(ZScoreToString(4503599627370496.0), "4503599627370496");   // 2^52: %.17g prints it whole
  EXPECT_EQ(ZScoreToString(-kInf), "-inf");
}

// redis-server 7.0.15: ZADD z 1.5 a 2 b -inf c 3.14159 d 1e20 e 0.1 f, DUMP
// with rdbcompression no.
TEST(ZSetValueTest, ListpackBytesAreRedisBytes) {
  ZSetValue z;
  ZSetLimits limits;
  double out;
  for (auto [m, s] : std::vector<std::pair<std::string, double>>{
           {"a", 1.5}, {"b", 2}, {"c", -kInf}, {"d", 3.14159}, {"e", 1e20}, {"f", 0.1}}) {
    EXPECT_EQ(z.Add(m, s, {}, limits, &out), ZAddOutcome::kAdded);
  }
  EXPECT_EQ(z.packed().bytes(),
            Unhex("560000000c00816302842d696e660581660293302e31303030303030303030303030303030311481610283312e3504816202"
                  "020181640292332e31343135383939393939393939393939138165028531652b323006ff"));
  EXPECT_EQ(All(z), (std::vector<std::pair<std::string, double>>{
                        {"c", -kInf}, {"f", 0.1}, {"a", 1.5}, {"b", 2}, {"d", 3.14159}, {"e", 1e20}}));
}

TEST(ZSetValueTest, AddFlagsAsZadd) {
  ZSetValue z;
  ZSetLimits limits;
  double out = 0;
  EXPECT_EQ(z.Add("m", 5, {.xx = true}, limits, &out), ZAddOutcome::kSkipped);  // XX: absent
  EXPECT_EQ(z.Add("m", 5, {}, limits, &out), ZAddOutcome::kAdded);
  EXPECT_EQ(z.Add("m", 9, {.nx = true}, limits, &out), ZAddOutcome::kSkipped);  // NX: present
  EXPECT_EQ(z.Add("m", 3, {.gt = true}, limits, &out), ZAddOutcome::kSkipped);
  EXPECT_EQ(z.Add("m", 7, {.gt = true}, limits, &out), ZAddOutcome::kUpdated);
  EXPECT_EQ(z.Add("m", 8, {.lt = true}, limits, &out), ZAddOutcome::kSkipped);
  EXPECT_EQ(z.Add("m", 7, {}, limits, &out), ZAddOutcome::kUnchanged);
  EXPECT_EQ(z.Add("m", 2.5, {.incr = true}, limits, &out), ZAddOutcome::kUpdated);
  EXPECT_EQ(out, 9.5);
  EXPECT_EQ(z.Add("inf", kInf, {}, limits, &out), ZAddOutcome::kAdded);
  EXPECT_EQ(z.Add("inf", -kInf, {.incr = true}, limits, &out), ZAddOutcome::kNaN);
  double s;
  ASSERT_TRUE(z.Score("inf", &s));
  EXPECT_EQ(s, kInf);
  EXPECT_EQ(z.Rank("m", false), 0);
  EXPECT_EQ(z.Rank("m", true), 1);
  EXPECT_EQ(z.Rank("nope", false), -1);
}

TEST(ZSetValueTest, ConvertsAtTheThresholds) {
  ZSetLimits limits;  // 128 entries, 64 bytes
  double out;
  ZSetValue by_count;
  for (int i = 0; i < 128; ++i) by_count.Add("m" + std::to_string(i), i, {}, limits, &out);
  EXPECT_EQ(by_count.encoding(), ZSetValue::Encoding::kListpack);
  by_count.Add("m128", 128, {}, limits, &out);
  EXPECT_EQ(by_count.encoding(), ZSetValue::Encoding::kSkiplist);
  EXPECT_EQ(by_count.size(), 129u);
  EXPECT_EQ(by_count.Rank("m100", false), 100);
  ZSetValue by_length;
  by_length.Add(std::string(64, 'x'), 1, {}, limits, &out);
  EXPECT_EQ(by_length.encoding(), ZSetValue::Encoding::kListpack);
  by_length.Add(std::string(65, 'x'), 1, {}, limits, &out);
  EXPECT_STREQ(by_length.encoding_name(), "skiplist");
  by_length.Remove(std::string(65, 'x'));
  EXPECT_STREQ(by_length.encoding_name(), "skiplist");  // never back
}

LexRange Lex(std::string min, std::string max) {  // inclusive bounds
  LexRange r;
  r.min = std::move(min);
  r.max = std::move(max);
  return r;
}

// Members out of lexicographic order (differing scores), listpack-encoded:
// the answers redis-server 7.0.15 gives for ZADD z 1 c 2 a 3 d 4 b 5 e.
TEST(ZSetValueTest, LexRangesWalkFromTheFirstMemberInRangeAsRedisDoes) {
  ZSetValue z;
  ZSetLimits limits;
  double out;
  for (auto [m, s] : std::vector<std::pair<std::string, double>>{{"c", 1}, {"a", 2}, {"d", 3}, {"b", 4}, {"e", 5}}) {
    z.Add(m, s, {}, limits, &out);
  }
  // [a, [c: the first member >= "a" is "c" (rank 0); the run stops at "d".
  EXPECT_EQ(z.RankOfFirstIn(Lex("a", "c"), false), 0u);
  EXPECT_EQ(z.LexRun(Lex("a", "c"), 0, false, SIZE_MAX), 2u);  // c, a
  EXPECT_EQ(z.Count(Lex("a", "c")), 2u);                      // ZLEXCOUNT z [a [c -> 2
  EXPECT_EQ(z.LexRun(Lex("a", "c"), 0, false, 1), 1u);         // LIMIT stops the run
  // Walking down from "e": the first member <= "d" is "b", and the run
  // continues while members are >= "b": b, d.
  EXPECT_EQ(z.RankOfFirstIn(Lex("b", "d"), true), 1u);
  EXPECT_EQ(z.LexRun(Lex("b", "d"), 1, true, SIZE_MAX), 2u);
  // The ends are checked first: "e" (last) is below min "f" -> none, even
  // though no member is; "c" (first) above max "b" -> none, though "a" is.
  EXPECT_EQ(z.RankOfFirstIn(Lex("f", "g"), false), z.size());
  EXPECT_EQ(z.RankOfFirstIn(Lex("a", "b"), false), z.size());
  EXPECT_EQ(z.Count(Lex("a", "b")), 0u);
}

// WalkRange visits exactly the elements Walk finds in the range, in order,
// on both encodings; members are stable bytes except integer-encoded
// listpack entries.
TEST(ZSetValueTest, WalkRangeVisitsTheRangeOnBothEncodings) {
  std::mt19937 rng(5);
  for (const bool packed : {true, false}) {
    ZSetValue z;
    ZSetLimits limits;
    if (!packed) limits.max_listpack_entries = 0;
    double unused;
    for (int i = 0; i < 100; ++i) {
      const std::string member = i % 3 == 0 ? std::to_string(i * 7 - 50) : "m" + std::to_string(i);
      z.Add(member, static_cast<double>(rng() % 40), ZAddFlags{}, limits, &unused);
    }
    ASSERT_EQ(z.encoding(), packed ? ZSetValue::Encoding::kListpack : ZSetValue::Encoding::kSkiplist);
    const auto all = All(z);
    for (int lo = -1; lo <= 41; lo += 3) {
      for (int hi = lo - 1; hi <= 42; hi += 4) {
        for (const bool excl : {false, true}) {
          ScoreRange range;
          range.min = lo;
          range.max = hi;
          range.min_exclusive = excl;
          range.max_exclusive = !excl;
          std::vector<std::pair<std::string, double>> want, got;
          for (const auto& [m, sc] : all) {
            if (range.AboveMin(sc) && range.BelowMax(sc)) want.emplace_back(m, sc);
          }
          z.WalkRange(range, [&](std::string_view m, double sc, bool stable) {
            long long as_int;
            const bool integer = std::sscanf(std::string(m).c_str(), "%lld", &as_int) == 1 &&
                                 std::to_string(as_int) == m;
            EXPECT_EQ(stable, !(packed && integer)) << m;
            got.emplace_back(m, sc);
            return true;
          });
          ASSERT_EQ(got, want) << lo << " " << hi << " " << excl << " packed " << packed;
        }
      }
    }
    // fn returning false stops the walk.
    ScoreRange everything;
    everything.min = -kInf;
    everything.max = kInf;
    int calls = 0;
    z.WalkRange(everything, [&](std::string_view, double, bool) { return ++calls < 5; });
    EXPECT_EQ(calls, 5);
  }
}

TEST(ZSetValueTest, BothEncodingsMatchAModel) {
  std::mt19937 rng(9);
  for (ZSetLimits limits : {ZSetLimits{128, 64}, ZSetLimits{10, 64}}) {
    ZSetValue z;
    std::map<std::string, double> scores;
    for (int step = 0; step < 4000; ++step) {
      const std::string m = std::to_string(rng() % 50);  // numeric members: int-encoded in the listpack
      double out;
      if (rng() % 4 == 0) {
        EXPECT_EQ(z.Remove(m), scores.erase(m) == 1);
      } else {
        const double s = static_cast<double>(static_cast<int>(rng() % 40) - 20) / 2;
        z.Add(m, s, {}, limits, &out);
        scores[m] = s;
      }
    }
    std::set<std::pair<double, std::string>, bool (*)(const std::pair<double, std::string>&,
                                                     const std::pair<double, std::string>&)>
        order([](const auto& a, const auto& b) { return ElementLess(a.first, a.second, b.first, b.second); });
    for (const auto& [m, s] : scores) order.insert({s, m});
    std::vector<std::pair<std::string, double>> expect;
    for (const auto& [s, m] : order) expect.emplace_back(m, s);
    EXPECT_EQ(All(z), expect);
    std::vector<std::pair<std::string, double>> reversed(expect.rbegin(), expect.rend());
    EXPECT_EQ(All(z, true), reversed);
    for (size_t i = 0; i < expect.size(); ++i) EXPECT_EQ(z.Rank(expect[i].first, false), static_cast<int64_t>(i));
    if (z.encoding() == ZSetValue::Encoding::kListpack) {
      EXPECT_TRUE(Listpack::Validate(z.packed().bytes()).ok());
    }
  }
}

}  // namespace
}  // namespace ringkv::core
