// SetValue and Value: intset/hashtable encodings and their one-way
// conversion at set-max-intset-entries; scans that survive table growth;
// Value's layout and ownership.
#include "core/set_value.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/hash_value.h"
#include "core/keyspace.h"
#include "core/value.h"

namespace ringkv::core {
namespace {

std::set<std::string> Members(const SetValue& s) {
  std::set<std::string> out;
  s.ForEach([&](std::string_view m) { out.emplace(m); });
  return out;
}

TEST(SetValueTest, IntsetUntilANonIntegerOrTheLimit) {
  SetLimits limits{3};
  SetValue s = SetValue::ForFirstMember("5");
  EXPECT_STREQ(s.encoding_name(), "intset");
  EXPECT_TRUE(s.empty());  // ForFirstMember picks the encoding, it adds nothing
  EXPECT_TRUE(s.Add("5", limits));
  EXPECT_FALSE(s.Add("5", limits));
  EXPECT_TRUE(s.Add("-3", limits));
  EXPECT_TRUE(s.Add("12", limits));
  EXPECT_STREQ(s.encoding_name(), "intset");
  EXPECT_TRUE(s.Add("13", limits));  // a fourth member: past the limit
  EXPECT_STREQ(s.encoding_name(), "hashtable");
  EXPECT_TRUE(s.Remove("13"));
  EXPECT_STREQ(s.encoding_name(), "hashtable");  // never back
  EXPECT_EQ(Members(s), (std::set<std::string>{"-3", "12", "5"}));

  SetValue t = SetValue::ForFirstMember("x");
  EXPECT_STREQ(t.encoding_name(), "hashtable");
  SetValue u = SetValue::ForFirstMember("1");
  EXPECT_TRUE(u.Add("1", limits));
  EXPECT_TRUE(u.Add("007", limits));  // not canonical integer text
  EXPECT_STREQ(u.encoding_name(), "hashtable");
  EXPECT_TRUE(u.Contains("007"));
  EXPECT_TRUE(u.Contains("1"));
  EXPECT_FALSE(u.Contains("7"));
}

TEST(SetValueTest, ScanReturnsEveryMemberWhileTheTableGrows) {
  SetLimits limits;
  SetValue s;
  s.ConvertToTable();
  for (int i = 0; i < 100; ++i) s.Add("m" + std::to_string(i), limits);
  std::set<std::string> seen;
  uint64_t cursor = 0;
  int added = 0;
  do {
    cursor = s.ScanTable(cursor, [&](std::string_view m) { seen.emplace(m); });
    if (added < 400) {
      for (int j = 0; j < 40; ++j) s.Add("new" + std::to_string(added++), limits);  // forces resizes
    }
  } while (cursor != 0);
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(seen.count("m" + std::to_string(i))) << i;
}

TEST(SetValueTest, RandomAndPopCoverEveryMember) {
  SetLimits limits;
  absl::BitGen rng;
  for (bool table : {false, true}) {
    SetValue s;
    if (table) s.ConvertToTable();
    for (int i = 0; i < 50; ++i) s.Add(std::to_string(i), limits);
    std::set<std::string> popped;
    while (!s.empty()) popped.insert(s.PopRandom(rng));
    EXPECT_EQ(popped.size(), 50u);
  }
}

TEST(ValueTest, StaysTheSizeOfAStringAndOwnsItsCollection) {
  static_assert(sizeof(Value) == 24);
  static_assert(sizeof(Entry) == 24);
  Value v{HashValue()};
  EXPECT_EQ(v.type(), ValueType::kHash);
  EXPECT_FALSE(v.is_string());
  v.hash().Set("f", "1", HashLimits{});
  Value moved = std::move(v);
  EXPECT_EQ(moved.type(), ValueType::kHash);
  EXPECT_TRUE(v.is_string());  // moved-from: an empty string
  Value copy = moved.Clone();
  moved = StringValue("replaced");  // frees the hash
  EXPECT_EQ(moved.str().ToString(), "replaced");
  EXPECT_EQ(copy.hash().size(), 1u);
  EXPECT_STREQ(copy.encoding_name(), "listpack");
  EXPECT_STREQ(TypeName(copy.type()), "hash");
}

}  // namespace
}  // namespace ringkv::core
