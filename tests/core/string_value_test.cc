#include "core/string_value.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

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

// Assign gives what a fresh StringValue(s) gives -- bytes, encoding,
// integer or not -- whatever the value held, and reuses the heap buffer
// only when s fits it closely.
TEST(StringValueTest, AssignIsAFreshValueReusingACloseBuffer) {
  const std::vector<std::string> values = {"", "x", "123", "-7", "0", "012", std::string(15, 'i'),
                                           std::string(16, 'h'), "1234567890123456", "12345678901234567890",
                                           std::string(40, 'e'), std::string(44, 'e'), std::string(45, 'r'),
                                           std::string(50, 'r'), std::string(64, 'v'), std::string(1000, 'b')};
  for (const std::string& before : values) {
    for (const std::string& after : values) {
      StringValue v(before);
      v.Assign(after);
      const StringValue fresh(after);
      EXPECT_EQ(v.ToString(), after) << before << " -> " << after;
      EXPECT_EQ(v.encoding(), fresh.encoding()) << before << " -> " << after;
      EXPECT_EQ(v.is_int(), fresh.is_int()) << before << " -> " << after;
      EXPECT_EQ(v.size(), after.size());
    }
  }
  char scratch[24];
  StringValue v(std::string(64, 'a'));
  const char* buffer = v.View(scratch).data();
  v.Assign(std::string(64, 'b'));  // the same size: in place
  EXPECT_EQ(v.View(scratch).data(), buffer);
  v.Assign(std::string(57, 'c'));  // 7 bytes of slack, under an eighth of 57: in place
  EXPECT_EQ(v.View(scratch).data(), buffer);
  EXPECT_EQ(v.heap_bytes(), 64u);
  v.Assign(std::string(56, 'd'));  // 8 bytes of slack, over an eighth of 56: a new buffer
  EXPECT_EQ(v.ToString(), std::string(56, 'd'));
  EXPECT_EQ(v.heap_bytes(), 56u);
  v.Assign(std::string(57, 'e'));  // larger than the buffer: a new one
  EXPECT_EQ(v.ToString(), std::string(57, 'e'));
  EXPECT_EQ(v.heap_bytes(), 57u);
  StringValue raw = StringValue::Raw(std::string(20, 'r'));  // raw, under 45 bytes
  raw.Assign(std::string(20, 's'));
  EXPECT_EQ(raw.encoding(), StringEncoding::kEmbstr);  // as SET makes it
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
