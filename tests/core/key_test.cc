#include "core/key.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace ringkv::core {
namespace {

TEST(KeyTest, InlineAndHeapBoundary) {
  for (size_t n : {0u, 1u, 15u, 16u, 22u, 23u, 24u, 100u}) {
    std::string s(n, 'k');
    if (n > 0) s[n - 1] = 'z';
    Key k(s);
    EXPECT_EQ(k.view(), s) << n;
    EXPECT_EQ(k.heap_bytes(), n > Key::kInlineMax ? n : 0u) << n;
    Key copy(k);
    EXPECT_EQ(copy.view(), s);
    Key moved(std::move(copy));
    EXPECT_EQ(moved.view(), s);
    EXPECT_EQ(copy.view(), "");  // NOLINT: moved-from is empty by contract
    Key assigned("x");
    assigned = std::move(moved);
    EXPECT_EQ(assigned.view(), s);
  }
}

TEST(KeyTest, KeysWithZeroBytesCompareByTheirBytes) {
  std::string a("a\0b", 3), b(40, '\0');
  EXPECT_EQ(Key(a).view(), a);
  EXPECT_EQ(Key(b).view(), b);
  EXPECT_NE(Key(a).view(), std::string_view("a"));
  EXPECT_EQ(Key(b).view().size(), 40u);
}

// Equals answers as comparing views does, for every inline length (each
// word-load path), heap keys, and a difference at every position.
TEST(KeyTest, EqualsIsViewEquality) {
  for (size_t n = 0; n <= 40; ++n) {
    std::string s(n, 'k');
    for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + i % 26);
    const Key key(s);
    EXPECT_TRUE(key.Equals(s)) << n;
    EXPECT_FALSE(key.Equals(s + "x")) << n;
    if (n > 0) {
      EXPECT_FALSE(key.Equals(s.substr(0, n - 1))) << n;
    }
    for (size_t i = 0; i < n; ++i) {
      std::string other = s;
      other[i] ^= 1;
      EXPECT_FALSE(key.Equals(other)) << n << " at " << i;
      EXPECT_EQ(key.Equals(other), key.view() == other);
    }
  }
  EXPECT_TRUE(Key(std::string("a\0b", 3)).Equals(std::string_view("a\0b", 3)));
  EXPECT_FALSE(Key(std::string("a\0b", 3)).Equals(std::string_view("a\0c", 3)));
}

}  // namespace
}  // namespace ringkv::core
