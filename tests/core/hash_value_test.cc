#include "core/hash_value.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

namespace ringkv::core {
namespace {

std::map<std::string, std::string> Pairs(const HashValue& h) {
  std::map<std::string, std::string> out;
  h.ForEach([&](std::string_view f, std::string_view v) { out.emplace(f, v); });
  return out;
}

TEST(HashValueTest, SetGetDeleteInTheListpack) {
  HashLimits limits;
  HashValue h;
  EXPECT_TRUE(h.Set("f", "1", limits));
  EXPECT_FALSE(h.Set("f", "007", limits));  // overwrite: not new; "007" is not an int
  EXPECT_TRUE(h.Set("g", "-5000", limits));
  std::string v;
  ASSERT_TRUE(h.Get("f", &v));
  EXPECT_EQ(v, "007");
  ASSERT_TRUE(h.Get("g", &v));
  EXPECT_EQ(v, "-5000");
  EXPECT_FALSE(h.Get("-5000", &v));  // values are not fields
  EXPECT_EQ(h.size(), 2u);
  EXPECT_STREQ(h.encoding_name(), "listpack");
  // Listpack order is insertion order (what HGETALL shows for small hashes).
  std::vector<std::string> order;
  h.ForEach([&](std::string_view f, std::string_view) { order.emplace_back(f); });
  EXPECT_EQ(order, (std::vector<std::string>{"f", "g"}));
  EXPECT_TRUE(h.Delete("f"));
  EXPECT_FALSE(h.Delete("f"));
  EXPECT_EQ(h.size(), 1u);
  EXPECT_TRUE(Listpack::Validate(h.packed().bytes()).ok());
}

// Redis 7.0's rules: a field or value longer than hash-max-listpack-value, or
// more than hash-max-listpack-entries fields, means a hash table; never back.
TEST(HashValueTest, ConvertsAtTheThresholdsAndNotBack) {
  HashLimits limits{128, 64};
  HashValue by_length;
  EXPECT_TRUE(by_length.Set(std::string(64, 'f'), std::string(64, 'v'), limits));
  EXPECT_EQ(by_length.encoding(), HashValue::Encoding::kListpack);
  by_length.Set("x", std::string(65, 'v'), limits);
  EXPECT_EQ(by_length.encoding(), HashValue::Encoding::kHashtable);
  by_length.Delete("x");
  EXPECT_EQ(by_length.encoding(), HashValue::Encoding::kHashtable);
  EXPECT_EQ(Pairs(by_length), (std::map<std::string, std::string>{{std::string(64, 'f'), std::string(64, 'v')}}));

  HashValue by_count;
  for (int i = 0; i < 128; ++i) by_count.Set("f" + std::to_string(i), std::to_string(i), limits);
  EXPECT_EQ(by_count.encoding(), HashValue::Encoding::kListpack);
  by_count.Set("f128", "x", limits);
  EXPECT_EQ(by_count.encoding(), HashValue::Encoding::kHashtable);
  EXPECT_EQ(by_count.size(), 129u);
  std::string v;
  ASSERT_TRUE(by_count.Get("f77", &v));
  EXPECT_EQ(v, "77");  // integer-encoded in the listpack, text after conversion

  HashValue zero;  // hash-max-listpack-entries 0: a table from the first field
  zero.Set("a", "b", HashLimits{0, 64});
  EXPECT_EQ(zero.encoding(), HashValue::Encoding::kHashtable);
}

TEST(HashValueTest, BothEncodingsMatchAMapModel) {
  std::mt19937 rng(5);
  for (HashLimits limits : {HashLimits{128, 64}, HashLimits{8, 16}}) {
    HashValue h;
    std::map<std::string, std::string> model;
    for (int step = 0; step < 5000; ++step) {
      const std::string field = "k" + std::to_string(rng() % 60);
      if (rng() % 4 == 0) {
        EXPECT_EQ(h.Delete(field), model.erase(field) == 1);
      } else {
        const std::string value = rng() % 2 ? std::to_string(static_cast<int>(rng() % 100000) - 50000)
                                            : std::string(rng() % 20, 'v');
        EXPECT_EQ(h.Set(field, value, limits), model.count(field) == 0);
        model[field] = value;
      }
      ASSERT_EQ(h.size(), model.size());
    }
    EXPECT_EQ(Pairs(h), model);
    for (const auto& [f, v] : model) EXPECT_TRUE(h.Contains(f));
  }
}

}  // namespace
}  // namespace ringkv::core
