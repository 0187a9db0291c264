#include "core/rdb_string.h"

#include <gtest/gtest.h>

namespace ringkv::core {
namespace {

std::string Enc(std::string_view s, bool compress = true) {
  std::string out;
  const size_t written = RdbEncodeString(s, compress, &out);
  EXPECT_EQ(written, out.size());
  return out;
}

TEST(RdbStringTest, IntegerEncodings) {
  EXPECT_EQ(Enc("5"), std::string("\xC0\x05", 2));
  EXPECT_EQ(Enc("-1"), std::string("\xC0\xFF", 2));
  EXPECT_EQ(Enc("12345"), std::string("\xC1\x39\x30", 3));  // little endian
  EXPECT_EQ(Enc("-1000000"), std::string("\xC2\xC0\xBD\xF0\xFF", 5));
  EXPECT_EQ(Enc("012"), std::string("\x03" "012", 4));  // not canonical: raw
  EXPECT_EQ(Enc("1234567890123"), std::string("\x0D" "1234567890123", 14));  // > int32: raw
}

TEST(RdbStringTest, LengthPrefixes) {
  EXPECT_EQ(RdbLengthSize(63), 1u);
  EXPECT_EQ(RdbLengthSize(64), 2u);
  EXPECT_EQ(RdbLengthSize(16383), 2u);
  EXPECT_EQ(RdbLengthSize(16384), 5u);
  EXPECT_EQ(RdbLengthSize(1ull << 32), 9u);
  std::string s(100, 'x');
  s[50] = 'y';
  EXPECT_EQ(Enc(s, false).substr(0, 2), std::string("\x40\x64", 2));  // 14-bit length, big endian
}

TEST(RdbStringTest, LzfOnlyWhenItSaves) {
  std::string repetitive(79, 'a');
  std::string enc = Enc(repetitive);
  EXPECT_EQ(static_cast<uint8_t>(enc[0]), 0xC3);
  EXPECT_EQ(enc.size(), 13u);  // as redis-server 7.0 reports (DEBUG OBJECT serializedlength)
  EXPECT_EQ(Enc(repetitive, false).size(), 81u);  // 2-byte length (79 >= 64) + 79
  std::string noise = "q8#Lz!0pX@v2&Nw%r7^Tb*Ys(Jm)Uk";  // 30 bytes that do not compress
  EXPECT_EQ(Enc(noise), "\x1e" + noise);
}

TEST(RdbStringTest, StoredValues) {
  EXPECT_EQ(RdbStringSize(StringValue("12345"), true), 3u);
  EXPECT_EQ(RdbStringSize(StringValue("hello"), true), 6u);
  EXPECT_EQ(RdbStringSize(StringValue("1234567890123"), true), 14u);
}

}  // namespace
}  // namespace ringkv::core
