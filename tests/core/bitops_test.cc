#include "core/bitops.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace ringkv::core {
namespace {

const uint8_t* U(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

bool NaiveBit(const std::string& s, uint64_t pos) { return (static_cast<uint8_t>(s[pos >> 3]) >> (7 - (pos & 7))) & 1; }

std::string RandomBytes(std::mt19937_64& rng, size_t n, int density) {
  std::string s(n, '\0');
  for (char& c : s) {
    uint8_t b = 0;
    for (int i = 0; i < 8; ++i) b = static_cast<uint8_t>((b << 1) | (static_cast<int>(rng() % 100) < density));
    c = static_cast<char>(b);
  }
  return s;
}

TEST(BitopsTest, PopCountMatchesBitByBit) {
  std::mt19937_64 rng(1);
  for (size_t n : {0, 1, 7, 8, 9, 31, 32, 33, 100, 1000}) {
    std::string s = RandomBytes(rng, n, 50);
    uint64_t want = 0;
    for (uint64_t i = 0; i < n * 8; ++i) want += NaiveBit(s, i);
    EXPECT_EQ(PopCount(U(s), n), want) << n;
  }
  EXPECT_EQ(PopCount(U(std::string("foobar")), 6), 26u);  // Redis's doc example
}

TEST(BitopsTest, PopCountBitsAndFindBitOnEveryRange) {
  std::mt19937_64 rng(2);
  for (int density : {0, 3, 50, 97, 100}) {
    std::string s = RandomBytes(rng, 19, density);
    for (uint64_t a = 0; a < s.size() * 8; a += 3) {
      for (uint64_t b = a; b < s.size() * 8; b += 5) {
        uint64_t want = 0;
        int64_t first1 = -1, first0 = -1;
        for (uint64_t i = a; i <= b; ++i) {
          want += NaiveBit(s, i);
          if (first1 < 0 && NaiveBit(s, i)) first1 = static_cast<int64_t>(i);
          if (first0 < 0 && !NaiveBit(s, i)) first0 = static_cast<int64_t>(i);
        }
        ASSERT_EQ(PopCountBits(U(s), s.size(), a, b), want) << a << " " << b;
        ASSERT_EQ(FindBit(U(s), s.size(), true, a, b), first1) << a << " " << b;
        ASSERT_EQ(FindBit(U(s), s.size(), false, a, b), first0) << a << " " << b;
      }
    }
  }
}

TEST(BitopsTest, BitOpPadsShortSourcesWithZeros) {
  std::vector<std::string_view> srcs = {"\xff\xf0\x0f", "\x0f"};
  EXPECT_EQ(BitOp(BitOpKind::kAnd, srcs), std::string("\x0f\x00\x00", 3));
  EXPECT_EQ(BitOp(BitOpKind::kOr, srcs), std::string("\xff\xf0\x0f", 3));
  EXPECT_EQ(BitOp(BitOpKind::kXor, srcs), std::string("\xf0\xf0\x0f", 3));
  std::vector<std::string_view> one = {"\x01\xfe"};
  EXPECT_EQ(BitOp(BitOpKind::kNot, one), std::string("\xfe\x01", 2));
  std::vector<std::string_view> empty = {"", ""};
  EXPECT_EQ(BitOp(BitOpKind::kOr, empty), "");
  // A missing first key: an empty view with no data at all (UBSan: no
  // memcpy from a null pointer).
  std::vector<std::string_view> missing_first = {std::string_view(), "\x0f\xf0"};
  EXPECT_EQ(BitOp(BitOpKind::kOr, missing_first), std::string("\x0f\xf0", 2));
  EXPECT_EQ(BitOp(BitOpKind::kAnd, missing_first), std::string("\x00\x00", 2));
  // Word-sized paths against a byte loop.
  std::mt19937_64 rng(3);
  std::string a = RandomBytes(rng, 77, 50), b = RandomBytes(rng, 53, 50);
  std::vector<std::string_view> ab = {a, b};
  std::string x = BitOp(BitOpKind::kXor, ab), n = BitOp(BitOpKind::kAnd, ab);
  for (size_t i = 0; i < a.size(); ++i) {
    const char bb = i < b.size() ? b[i] : 0;
    ASSERT_EQ(x[i], static_cast<char>(a[i] ^ bb));
    ASSERT_EQ(n[i], static_cast<char>(a[i] & bb));
  }
}

TEST(BitopsTest, FieldsRoundTripAtAnyAlignment) {
  std::mt19937_64 rng(4);
  for (unsigned bits = 1; bits <= 64; ++bits) {
    for (uint64_t off : {0, 1, 7, 13}) {
      std::string buf(12, '\0');
      auto* p = reinterpret_cast<uint8_t*>(buf.data());
      const uint64_t v = rng();
      SetField(p, off, bits, v);
      const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
      EXPECT_EQ(GetUnsignedField(p, off, bits), v & mask);
      int64_t s = static_cast<int64_t>(v & mask);
      if (bits < 64 && ((v >> (bits - 1)) & 1)) s |= static_cast<int64_t>(~mask);
      EXPECT_EQ(GetSignedField(p, off, bits), s);
    }
  }
  std::string b("\x80", 1);
  EXPECT_EQ(GetSignedField(U(b), 0, 1), -1);
  EXPECT_EQ(GetUnsignedField(U(b), 0, 1), 1u);
}

TEST(BitopsTest, OverflowAsRedis) {
  int64_t s;
  uint64_t u;
  // i8: 100 + 100 wraps to -56, saturates at 127.
  EXPECT_TRUE(SignedFieldOverflows(100, 100, 8, Overflow::kWrap, &s));
  EXPECT_EQ(s, -56);
  EXPECT_TRUE(SignedFieldOverflows(100, 100, 8, Overflow::kSat, &s));
  EXPECT_EQ(s, 127);
  EXPECT_TRUE(SignedFieldOverflows(-100, -100, 8, Overflow::kSat, &s));
  EXPECT_EQ(s, -128);
  EXPECT_FALSE(SignedFieldOverflows(100, 27, 8, Overflow::kWrap, &s));
  // i64 at its limits.
  EXPECT_TRUE(SignedFieldOverflows(INT64_MAX, 1, 64, Overflow::kWrap, &s));
  EXPECT_EQ(s, INT64_MIN);
  EXPECT_TRUE(SignedFieldOverflows(INT64_MIN, -1, 64, Overflow::kSat, &s));
  EXPECT_EQ(s, INT64_MIN);
  // u8: 250 + 10 wraps to 4, saturates at 255; 5 - 10 saturates at 0.
  EXPECT_TRUE(UnsignedFieldOverflows(250, 10, 8, Overflow::kWrap, &u));
  EXPECT_EQ(u, 4u);
  EXPECT_TRUE(UnsignedFieldOverflows(250, 10, 8, Overflow::kSat, &u));
  EXPECT_EQ(u, 255u);
  EXPECT_TRUE(UnsignedFieldOverflows(5, -10, 8, Overflow::kSat, &u));
  EXPECT_EQ(u, 0u);
  EXPECT_TRUE(UnsignedFieldOverflows(5, -10, 8, Overflow::kWrap, &u));
  EXPECT_EQ(u, 251u);
  // A SET of a value out of range (incr 0).
  EXPECT_TRUE(UnsignedFieldOverflows(static_cast<uint64_t>(-1), 0, 8, Overflow::kWrap, &u));
  EXPECT_EQ(u, 255u);
  EXPECT_TRUE(SignedFieldOverflows(300, 0, 8, Overflow::kWrap, &s));
  EXPECT_EQ(s, 44);
}

}  // namespace
}  // namespace ringkv::core
