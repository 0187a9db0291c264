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

}  // namespace
}  // namespace ringkv::core
