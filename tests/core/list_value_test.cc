// ListValue: a quicklist checked against a std::deque model through random
// operations, at several fills and compression depths; node splitting, the
// fill rule, compression of inner nodes only, and what RDB sees.
#include "core/list_value.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace ringkv::core {
namespace {

std::vector<std::string> All(const ListValue& l) {
  std::vector<std::string> out;
  l.Walk(0, false, [&](std::string_view v) {
    out.emplace_back(v);
    return true;
  });
  return out;
}

TEST(ListValueTest, PushPopBothEnds) {
  ListValue l(ListLimits{});
  l.PushBack("a");
  l.PushFront("b");
  l.PushBack("7");
  EXPECT_EQ(All(l), (std::vector<std::string>{"b", "a", "7"}));
  std::string v;
  ASSERT_TRUE(l.PopBack(&v));
  EXPECT_EQ(v, "7");
  ASSERT_TRUE(l.PopFront(&v));
  EXPECT_EQ(v, "b");
  ASSERT_TRUE(l.PopFront(&v));
  EXPECT_FALSE(l.PopFront(&v));
  EXPECT_EQ(l.node_count(), 0u);
}

TEST(ListValueTest, RemoveTakesEveryCountIncludingTheMostNegative) {
  ListValue l(ListLimits{});
  for (const char* v : {"a", "b", "a", "c", "a"}) l.PushBack(v);
  EXPECT_EQ(l.Remove("a", -1), 1u);  // from the tail
  EXPECT_EQ(All(l), (std::vector<std::string>{"a", "b", "a", "c"}));
  EXPECT_EQ(l.Remove("a", 1), 1u);  // from the head
  EXPECT_EQ(All(l), (std::vector<std::string>{"b", "a", "c"}));
  l.PushFront("a");
  // INT64_MIN has no negation in int64_t: every match, from the tail.
  EXPECT_EQ(l.Remove("a", std::numeric_limits<int64_t>::min()), 2u);
  EXPECT_EQ(All(l), (std::vector<std::string>{"b", "c"}));
}

TEST(ListValueTest, FillRuleSplitsNodesByCountAndBytes) {
  ListValue by_count(ListLimits{4, 0});
  for (int i = 0; i < 10; ++i) by_count.PushBack(std::to_string(i));
  EXPECT_EQ(by_count.node_count(), 3u);  // 4 + 4 + 2
  ListValue by_bytes(ListLimits{-1, 0});  // 4 KiB nodes
  for (int i = 0; i < 100; ++i) by_bytes.PushBack(std::string(100, 'x'));
  EXPECT_GE(by_bytes.node_count(), 3u);
  by_bytes.ForEachNode([](const Listpack& lp) { EXPECT_LE(lp.byte_size(), 4096u); });
}

TEST(ListValueTest, CompressesOnlyInnerNodesAndReadsThemBack) {
  ListValue l(ListLimits{4, 1});
  std::vector<std::string> model;
  for (int i = 0; i < 40; ++i) {
    model.push_back(std::string(60, 'a' + i % 3) + std::to_string(i));
    l.PushBack(model.back());
  }
  EXPECT_EQ(l.node_count(), 10u);
  EXPECT_EQ(l.compressed_nodes(), 8u);  // all but the two end nodes
  EXPECT_EQ(All(l), model);
  std::string v;
  ASSERT_TRUE(l.Index(17, &v));
  EXPECT_EQ(v, model[17]);
  EXPECT_EQ(l.compressed_nodes(), 8u);  // read, then compressed again
  ASSERT_TRUE(l.Set(21, "changed"));
  model[21] = "changed";
  EXPECT_EQ(All(l), model);
  size_t nodes_seen = 0;
  l.ForEachNode([&](const Listpack& lp) {
    EXPECT_TRUE(Listpack::Validate(lp.bytes()).ok());
    ++nodes_seen;
  });
  EXPECT_EQ(nodes_seen, l.node_count());
}

// Random operations against a std::deque, at several fills and depths.
// Random operations on `l` and a std::deque, compared at every step.
void RunAgainstModel(ListValue& l) {
  {
    std::mt19937 rng(42);
    std::deque<std::string> model;
    for (int step = 0; step < 3000; ++step) {
      const int op = static_cast<int>(rng() % 9);
      const std::string v = (rng() % 2 ? "v" : "") + std::to_string(rng() % 20);
      std::string got;
      switch (op) {
        case 0: l.PushFront(v); model.push_front(v); break;
        case 1: l.PushBack(v); model.push_back(v); break;
        case 2:
          ASSERT_EQ(l.PopFront(&got), !model.empty());
          if (!model.empty()) {
            ASSERT_EQ(got, model.front());
            model.pop_front();
          }
          break;
        case 3:
          ASSERT_EQ(l.PopBack(&got), !model.empty());
          if (!model.empty()) {
            ASSERT_EQ(got, model.back());
            model.pop_back();
          }
          break;
        case 4: {
          const int64_t count = static_cast<int64_t>(rng() % 5) - 2;
          size_t expected = 0;
          if (count >= 0) {
            for (auto it = model.begin(); it != model.end() && (count == 0 || expected < static_cast<size_t>(count));) {
              if (*it == v) {
                it = model.erase(it);
                ++expected;
              } else {
                ++it;
              }
            }
          } else {
            for (size_t i = model.size(); i-- > 0 && expected < static_cast<size_t>(-count);) {
              if (model[i] == v) {
                model.erase(model.begin() + static_cast<std::ptrdiff_t>(i));
                ++expected;
              }
            }
          }
          ASSERT_EQ(l.Remove(v, count), expected);
          break;
        }
        case 5: {
          auto it = std::find(model.begin(), model.end(), v);
          const bool after = rng() % 2;
          ASSERT_EQ(l.Insert(v, "ins", after), it != model.end());
          if (it != model.end()) model.insert(after ? it + 1 : it, "ins");
          break;
        }
        case 6:
          if (!model.empty()) {
            const size_t i = rng() % model.size();
            ASSERT_TRUE(l.Set(static_cast<int64_t>(i), v));
            model[i] = v;
          }
          break;
        case 7:
          if (model.size() > 4 && rng() % 10 == 0) {
            const size_t start = rng() % 3, end = model.size() - 1 - rng() % 3;
            l.Keep(start, end);
            model = std::deque<std::string>(model.begin() + static_cast<std::ptrdiff_t>(start),
                                            model.begin() + static_cast<std::ptrdiff_t>(end) + 1);
          }
          break;
        default:
          if (!model.empty()) {
            const int64_t i = static_cast<int64_t>(rng() % model.size()) - static_cast<int64_t>(model.size() / 2);
            ASSERT_TRUE(l.Index(i, &got));
            ASSERT_EQ(got, model[static_cast<size_t>(i < 0 ? i + static_cast<int64_t>(model.size()) : i)]);
          }
      }
      ASSERT_EQ(l.size(), model.size());
    }
    EXPECT_EQ(All(l), std::vector<std::string>(model.begin(), model.end()));
    std::vector<std::string> reversed;
    l.Walk(0, true, [&](std::string_view v) {
      reversed.emplace_back(v);
      return true;
    });
    EXPECT_EQ(reversed, std::vector<std::string>(model.rbegin(), model.rend()));
  }
}

TEST(ListValueTest, MatchesADequeModel) {
  for (ListLimits limits : {ListLimits{-2, 0}, ListLimits{3, 0}, ListLimits{2, 1}, ListLimits{5, 2}}) {
    ListValue l(limits);
    RunAgainstModel(l);
  }
}

// DEBUG QUICKLIST-PACKED-THRESHOLD: elements of at least the threshold live
// alone in their node (Redis's plain nodes), whatever operation put them
// there; the list still behaves as the model.
TEST(ListValueTest, LargeElementsGetANodeOfTheirOwn) {
  ASSERT_FALSE(SetListPackedThreshold(uint64_t{5} << 30));  // above 4 GiB - 1 MiB
  ASSERT_TRUE(SetListPackedThreshold(3));                    // "v12", "ins": large; "7", "v3": packed
  for (ListLimits limits : {ListLimits{-2, 0}, ListLimits{3, 0}, ListLimits{2, 1}}) {
    ListValue l(limits);
    RunAgainstModel(l);
    // Whatever the run left, large elements arrive by every way in.
    l.PushBack("a");
    l.PushBack("big1");
    l.PushFront("big2");
    l.PushBack("b");
    ASSERT_TRUE(l.Insert("a", "big3", /*after=*/true));
    ASSERT_TRUE(l.Set(-1, "big4"));
    size_t plain = 0;
    l.ForEachNode([&](const Listpack& lp) {
      for (size_t pos = lp.First(); pos != Listpack::kEnd; pos = lp.Next(pos)) {
        if (lp.Get(pos).ToString().size() >= 3) {
          EXPECT_EQ(lp.size(), 1u);
          ++plain;
        }
      }
    });
    EXPECT_GT(plain, 0u);
  }
  ASSERT_TRUE(SetListPackedThreshold(0));
  EXPECT_EQ(ListPackedThreshold(), size_t{1} << 30);
}

}  // namespace
}  // namespace ringkv::core
