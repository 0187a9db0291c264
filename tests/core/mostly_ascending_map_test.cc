#include "core/mostly_ascending_map.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <utility>
#include <vector>

namespace ringkv::core {
namespace {

using Key = std::pair<int64_t, uint64_t>;
using Map = MostlyAscendingMap<Key, int>;

std::vector<std::pair<Key, int>> Contents(const Map& m) {
  std::vector<std::pair<Key, int>> out;
  m.ForEachWhile([&](const Key& k, int v) {
    out.emplace_back(k, v);
    return true;
  });
  return out;
}

std::vector<std::pair<Key, int>> Contents(const std::map<Key, int>& m) { return {m.begin(), m.end()}; }

TEST(MostlyAscendingMapTest, KeysInOrderStayOutOfTheTree) {
  Map m;
  for (uint64_t i = 1; i <= 1000; ++i) m.Insert({static_cast<int64_t>(i / 10), i}, static_cast<int>(i));
  EXPECT_EQ(m.size(), 1000u);
  EXPECT_EQ(m.out_of_order(), 0u);
  EXPECT_EQ(m.min_key(), (Key{0, 1}));
  EXPECT_EQ(m.min_value(), 1);
  // Leaving from the front, as deadlines that share a timeout do.
  for (int i = 1; i <= 1000; ++i) {
    ASSERT_EQ(m.min_value(), i);
    m.PopMin();
  }
  EXPECT_TRUE(m.empty());
}

TEST(MostlyAscendingMapTest, AKeyBelowTheRunComesOutFirst) {
  Map m;
  m.Insert({10, 1}, 10);
  m.Insert({20, 2}, 20);
  m.Insert({5, 3}, 5);  // a shorter timeout, later: the two above move aside
  EXPECT_EQ(m.out_of_order(), 2u);
  EXPECT_EQ(m.min_key(), (Key{5, 3}));
  m.PopMin();
  EXPECT_EQ(m.min_key(), (Key{10, 1}));
  EXPECT_EQ(Contents(m), (std::vector<std::pair<Key, int>>{{{10, 1}, 10}, {{20, 2}, 20}}));
}

// A client blocked for an hour among clients blocked for a second: the hour
// moves to the tree, the seconds go on in the run.
TEST(MostlyAscendingMapTest, ALongKeyAtTheBackMovesAsideForTheCommonOrder) {
  Map m;
  m.Insert({1, 1}, 1);
  m.Insert({3600, 2}, 2);
  for (uint64_t i = 3; i < 1000; ++i) m.Insert({static_cast<int64_t>(i), i}, static_cast<int>(i));
  EXPECT_EQ(m.out_of_order(), 1u);
  EXPECT_EQ(m.size(), 999u);
  std::vector<std::pair<Key, int>> all = Contents(m);
  ASSERT_EQ(all.size(), 999u);
  EXPECT_EQ(all.back().first, (Key{3600, 2}));
  EXPECT_TRUE(std::is_sorted(all.begin(), all.end()));
  // More than four larger keys at the back: the new key goes to the tree.
  Map n;
  for (uint64_t i = 0; i < 10; ++i) n.Insert({static_cast<int64_t>(100 + i), i}, 0);
  n.Insert({5, 100}, 0);
  EXPECT_EQ(n.out_of_order(), 5u);  // four moved, and the key itself
  EXPECT_EQ(n.min_key(), (Key{5, 100}));
  EXPECT_TRUE(n.Erase({109, 9}));  // found in the tree
  EXPECT_TRUE(n.Erase({105, 5}));  // and in the run
  EXPECT_EQ(n.size(), 9u);
}

TEST(MostlyAscendingMapTest, EraseFindsKeysInTheRunAndInTheTree) {
  Map m;
  for (uint64_t i = 0; i < 100; ++i) m.Insert({static_cast<int64_t>(i), i}, static_cast<int>(i));
  m.Insert({50, 1000}, -1);  // between run keys: the tree, with the run's last four
  EXPECT_EQ(m.out_of_order(), 5u);
  EXPECT_FALSE(m.Erase({50, 999}));
  EXPECT_FALSE(m.Erase({1000, 0}));
  EXPECT_TRUE(m.Erase({50, 50}));
  EXPECT_FALSE(m.Erase({50, 50}));  // a hole now
  EXPECT_TRUE(m.Erase({50, 1000}));
  EXPECT_TRUE(m.Erase({0, 0}));    // front
  EXPECT_TRUE(m.Erase({99, 99}));  // moved to the tree
  EXPECT_TRUE(m.Erase({95, 95}));  // the run's back
  EXPECT_EQ(m.size(), 96u);
  EXPECT_EQ(m.min_key(), (Key{1, 1}));
  EXPECT_EQ(m.out_of_order(), 3u);  // 96, 97, 98
  // A key erased from the run, inserted again below its back (and below
  // more than four keys): found in the tree, beside a hole with its key.
  m.Insert({50, 50}, 7);
  EXPECT_EQ(m.out_of_order(), 8u);  // 91-94 moved aside too
  EXPECT_TRUE(m.Erase({50, 50}));
  EXPECT_EQ(m.out_of_order(), 7u);
  EXPECT_FALSE(m.Erase({50, 50}));
}

TEST(MostlyAscendingMapTest, HolesAreCompactedAndTheRingShrinks) {
  Map m;
  for (uint64_t i = 0; i < 100000; ++i) m.Insert({static_cast<int64_t>(i), i}, 0);
  const size_t full = m.run_capacity();
  EXPECT_GE(full, 100000u);
  // Served before their deadlines: every entry but each 1,000th leaves from
  // the middle, the way clients a push served leave BLPOP's deadlines.
  for (uint64_t i = 0; i < 100000; ++i) {
    if (i % 1000 != 500) {
      ASSERT_TRUE(m.Erase({static_cast<int64_t>(i), i}));
    }
  }
  EXPECT_EQ(m.size(), 100u);
  EXPECT_LE(m.run_capacity(), 1024u);
  std::vector<std::pair<Key, int>> left = Contents(m);
  ASSERT_EQ(left.size(), 100u);
  EXPECT_EQ(left.front().first, (Key{500, 500}));
  EXPECT_EQ(left.back().first, (Key{99500, 99500}));
  while (!m.empty()) m.PopMin();
  EXPECT_LE(m.run_capacity(), 32u);
}

TEST(MostlyAscendingMapTest, ForEachWhileStopsWhenAsked) {
  Map m;
  for (uint64_t i = 0; i < 10; ++i) m.Insert({static_cast<int64_t>(i * 2), i}, static_cast<int>(i));
  m.Insert({3, 100}, 100);
  std::vector<int> seen;
  m.ForEachWhile([&](const Key& k, int v) {
    if (k.first > 4) return false;
    seen.push_back(v);
    return true;
  });
  EXPECT_EQ(seen, (std::vector<int>{0, 1, 100, 2}));
}

// Against std::map under a mix of in-order and out-of-order inserts, erases
// anywhere and pops of the least key.
TEST(MostlyAscendingMapTest, BehavesAsAnOrderedMap) {
  for (int in_order_pct : {100, 95, 50, 0}) {
    std::mt19937_64 rng(static_cast<uint64_t>(in_order_pct) + 1);
    Map m;
    std::map<Key, int> ref;
    std::vector<Key> keys;
    uint64_t seq = 0;
    int64_t clock = 0;
    for (int step = 0; step < 50000; ++step) {
      const int op = static_cast<int>(rng() % 10);
      if (op < 5) {
        clock += static_cast<int64_t>(rng() % 3);
        const bool in_order = static_cast<int>(rng() % 100) < in_order_pct;
        const int64_t when = in_order ? clock + 1000 : clock + static_cast<int64_t>(rng() % 1000);
        const Key k{when, ++seq};
        const int v = static_cast<int>(seq);
        m.Insert(k, v);
        ref.emplace(k, v);
        keys.push_back(k);
      } else if (op < 8 && !keys.empty()) {
        const size_t i = rng() % keys.size();
        const Key k = keys[i];
        keys[i] = keys.back();
        keys.pop_back();
        ASSERT_EQ(m.Erase(k), ref.erase(k) == 1) << step;
      } else if (!ref.empty()) {
        ASSERT_EQ(m.min_key(), ref.begin()->first) << step;
        ASSERT_EQ(m.min_value(), ref.begin()->second) << step;
        m.PopMin();
        ref.erase(ref.begin());
      }
      ASSERT_EQ(m.size(), ref.size()) << step;
      ASSERT_EQ(m.empty(), ref.empty()) << step;
      if (step % 997 == 0) {
        ASSERT_EQ(Contents(m), Contents(ref)) << step;
      }
    }
    EXPECT_EQ(Contents(m), Contents(ref));
    // The ring halves when an eighth full.
    EXPECT_LE(m.run_capacity(), std::max<size_t>(16, 8 * m.size()));
  }
}

}  // namespace
}  // namespace ringkv::core
