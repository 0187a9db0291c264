#include "core/skiplist.h"

#include <gtest/gtest.h>

#include <cmath>
#include <iterator>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace ringkv::core {
namespace {

struct Less {
  bool operator()(const std::pair<double, std::string>& a, const std::pair<double, std::string>& b) const {
    return ElementLess(a.first, a.second, b.first, b.second);
  }
};
using Model = std::set<std::pair<double, std::string>, Less>;

void ExpectSame(const Skiplist& zsl, const Model& model) {
  ASSERT_EQ(zsl.size(), model.size());
  const Skiplist::Node* n = zsl.First();
  uint64_t rank = 1;
  for (const auto& [score, member] : model) {
    ASSERT_NE(n, nullptr);
    EXPECT_EQ(n->score, score);
    EXPECT_EQ(n->member(), member);
    EXPECT_EQ(zsl.Rank(score, member), rank);
    EXPECT_EQ(zsl.ByRank(rank), n);
    n = n->next();
    ++rank;
  }
  EXPECT_EQ(n, nullptr);
  // Backwards through the backward links.
  const Skiplist::Node* b = zsl.Last();
  for (auto it = model.rbegin(); it != model.rend(); ++it, b = b->prev()) {
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(b->member(), it->second);
  }
  EXPECT_EQ(b, nullptr);
}

TEST(SkiplistTest, OrderIsScoreThenMemberBytes) {
  Skiplist zsl;
  zsl.Insert(1, "b");
  zsl.Insert(1, "a");
  zsl.Insert(1, "\xff");  // bytes compare unsigned: after "b"
  zsl.Insert(-std::numeric_limits<double>::infinity(), "z");
  zsl.Insert(0.5, "m");
  std::vector<std::string> order;
  for (const Skiplist::Node* n = zsl.First(); n != nullptr; n = n->next()) order.emplace_back(n->member());
  EXPECT_EQ(order, (std::vector<std::string>{"z", "m", "a", "b", "\xff"}));
  EXPECT_EQ(zsl.Rank(1, "b"), 4u);
  EXPECT_EQ(zsl.Rank(1, "c"), 0u);
  EXPECT_EQ(zsl.ByRank(6), nullptr);
  EXPECT_EQ(zsl.ByRank(0), nullptr);
}

TEST(SkiplistTest, MatchesAModelUnderRandomOperations) {
  std::mt19937 rng(3);
  Skiplist zsl;
  Model model;
  std::vector<std::string> members;
  for (int i = 0; i < 400; ++i) members.push_back("m" + std::to_string(i));
  std::vector<double> score_of(members.size(), NAN);
  for (int step = 0; step < 20000; ++step) {
    const size_t k = rng() % members.size();
    const double s = static_cast<double>(rng() % 50) / 4;  // many ties
    if (std::isnan(score_of[k])) {
      zsl.Insert(s, members[k]);
      model.insert({s, members[k]});
      score_of[k] = s;
    } else if (rng() % 2 == 0) {
      zsl.UpdateScore(score_of[k], members[k], s);
      model.erase({score_of[k], members[k]});
      model.insert({s, members[k]});
      score_of[k] = s;
    } else {
      EXPECT_TRUE(zsl.Delete(score_of[k], members[k]));
      EXPECT_FALSE(zsl.Delete(score_of[k], members[k]));
      model.erase({score_of[k], members[k]});
      score_of[k] = NAN;
    }
    if (step % 2000 == 0) ExpectSame(zsl, model);
  }
  ExpectSame(zsl, model);
}

TEST(SkiplistTest, ScoreRanges) {
  Skiplist zsl;
  for (int i = 1; i <= 10; ++i) zsl.Insert(i, "e" + std::to_string(i));
  ScoreRange r{3, 6, true, false};  // (3 6]
  EXPECT_EQ(zsl.FirstInRange(r)->member(), "e4");
  EXPECT_EQ(zsl.LastInRange(r)->member(), "e6");
  EXPECT_EQ(zsl.FirstInRange(ScoreRange{11, 20}), nullptr);
  EXPECT_EQ(zsl.LastInRange(ScoreRange{-5, 0.5}), nullptr);
  EXPECT_EQ(zsl.FirstInRange(ScoreRange{5, 5, true, false}), nullptr);  // empty interval
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(zsl.FirstInRange(ScoreRange{-inf, inf})->member(), "e1");
  EXPECT_EQ(zsl.LastInRange(ScoreRange{-inf, inf})->member(), "e10");
  std::vector<std::string> gone;
  EXPECT_EQ(zsl.DeleteRangeByScore(r, [&](std::string_view m) { gone.emplace_back(m); }), 3u);
  EXPECT_EQ(gone, (std::vector<std::string>{"e4", "e5", "e6"}));
  EXPECT_EQ(zsl.size(), 7u);
  EXPECT_EQ(zsl.Rank(7, "e7"), 4u);
  EXPECT_EQ(zsl.DeleteRangeByRank(2, 3, [](std::string_view) {}), 2u);  // e2 e3
  EXPECT_EQ(zsl.ByRank(2)->member(), "e7");
  EXPECT_EQ(zsl.Last()->member(), "e10");
}

TEST(SkiplistTest, LexRanges) {
  Skiplist zsl;
  for (const char* m : {"a", "b", "c", "d", "e"}) zsl.Insert(0, m);
  LexRange r;
  r.min = "b";
  r.max = "d";
  r.max_exclusive = true;  // [b (d
  EXPECT_EQ(zsl.FirstInLexRange(r)->member(), "b");
  EXPECT_EQ(zsl.LastInLexRange(r)->member(), "c");
  LexRange all;
  all.min_unbounded = all.max_unbounded = true;  // - +
  EXPECT_EQ(zsl.FirstInLexRange(all)->member(), "a");
  EXPECT_EQ(zsl.LastInLexRange(all)->member(), "e");
  LexRange none;
  none.min = "x";
  none.max = "z";
  EXPECT_EQ(zsl.FirstInLexRange(none), nullptr);
  std::vector<std::string> gone;
  EXPECT_EQ(zsl.DeleteRangeByLex(r, [&](std::string_view m) { gone.emplace_back(m); }), 2u);
  EXPECT_EQ(gone, (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(zsl.Rank(0, "d"), 2u);
}

TEST(SkiplistTest, ManyElementsKeepRanksLogarithmic) {
  Skiplist zsl;
  for (int i = 0; i < 100000; ++i) zsl.Insert(i, std::to_string(i));
  EXPECT_EQ(zsl.Rank(73456, "73456"), 73457u);
  EXPECT_EQ(zsl.ByRank(99999)->score, 99998);
  EXPECT_EQ(zsl.DeleteRangeByRank(1, 50000, [](std::string_view) {}), 50000u);
  EXPECT_EQ(zsl.First()->score, 50000);
  EXPECT_EQ(zsl.Rank(99999, "99999"), 50000u);
}

}  // namespace
}  // namespace ringkv::core
