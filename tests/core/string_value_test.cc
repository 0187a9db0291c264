#include "core/string_value.h"

#include <gtest/gtest.h>

#include "core/string_ops.h"

namespace ringkv::core {
namespace {

TEST(StringValueTest, EncodingsFollowRedisRules) {
  EXPECT_EQ(StringValue("12345").encoding(), StringEncoding::kInt);
  EXPECT_EQ(StringValue("-9223372036854775808").encoding(), StringEncoding::kInt);
  EXPECT_EQ(StringValue("9223372036854775808").encoding(), StringEncoding::kEmbstr);  // overflows int64
  EXPECT_EQ(StringValue("012").encoding(), StringEncoding::kEmbstr);                  // not canonical
  EXPECT_EQ(StringValue(" 1").encoding(), StringEncoding::kEmbstr);
  EXPECT_EQ(StringValue(std::string(44, 'a')).encoding(), StringEncoding::kEmbstr);
  EXPECT_EQ(StringValue(std::string(45, 'a')).encoding(), StringEncoding::kRaw);
}

TEST(StringValueTest, RoundTripsAllRepresentations) {
  for (std::string s : {std::string(""), std::string("x"), std::string(15, 'i'), std::string(16, 'h'),
                        std::string(100, 'r'), std::string("-17"), std::string("0")}) {
    StringValue v(s);
    EXPECT_EQ(v.ToString(), s);
    EXPECT_EQ(v.size(), s.size());
    StringValue moved(std::move(v));
    EXPECT_EQ(moved.ToString(), s);
  }
}

TEST(StringValueTest, AppendAndSetRangeMakeRaw) {
  StringValue v("10");
  v.Append("abc");
  EXPECT_EQ(v.encoding(), StringEncoding::kRaw);
  EXPECT_EQ(v.ToString(), "10abc");
  v.SetRange(7, "Z");
  EXPECT_EQ(v.ToString(), std::string("10abc\0\0Z", 8));
  for (int i = 0; i < 1000; ++i) v.Append("y");
  EXPECT_EQ(v.size(), 1008u);
}

TEST(StringOpsTest, SliceRangeMatchesGetrange) {
  EXPECT_EQ(SliceRange("Hello World", 0, 4), "Hello");
  EXPECT_EQ(SliceRange("Hello World", -5, -1), "World");
  EXPECT_EQ(SliceRange("Hello World", -1, -5), "");
  EXPECT_EQ(SliceRange("Hello World", 5, 100), " World");
  EXPECT_EQ(SliceRange("Hello World", 20, 30), "");
  EXPECT_EQ(SliceRange("", 0, -1), "");
}

TEST(StringOpsTest, FormatLongDoubleLikeIncrbyfloat) {
  EXPECT_EQ(FormatLongDouble(10.5L), "10.5");
  EXPECT_EQ(FormatLongDouble(3.0L), "3");
  EXPECT_EQ(FormatLongDouble(-0.0L), "0");
  EXPECT_EQ(FormatLongDouble(5.0e3L), "5000");
}

}  // namespace
}  // namespace ringkv::core
