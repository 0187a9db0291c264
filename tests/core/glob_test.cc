// core::GlobMatch (core/glob.h) against what Redis 7.0's stringmatchlen
// answers for the same pattern and string (KEYS, SCAN MATCH, PSUBSCRIBE,
// PUBSUB CHANNELS, CONFIG GET, ACL patterns).
#include "core/glob.h"

#include <gtest/gtest.h>

namespace ringkv::core {
namespace {

TEST(GlobMatchTest, StarsQuestionMarksClassesAndEscapes) {
  EXPECT_TRUE(GlobMatch("*", "abc"));
  EXPECT_TRUE(GlobMatch("a*", "a"));
  EXPECT_TRUE(GlobMatch("a**", "a"));
  EXPECT_TRUE(GlobMatch("*a*", "a"));
  EXPECT_TRUE(GlobMatch("h?llo", "hello"));
  EXPECT_FALSE(GlobMatch("h?llo", "hllo"));
  EXPECT_TRUE(GlobMatch("h[ae]llo", "hallo"));
  EXPECT_FALSE(GlobMatch("h[^e]llo", "hello"));
  EXPECT_TRUE(GlobMatch("h[a-b]llo", "hbllo"));
  EXPECT_TRUE(GlobMatch("h\\*llo", "h*llo"));
  EXPECT_FALSE(GlobMatch("h\\*llo", "hello"));
  EXPECT_TRUE(GlobMatch("HELLO", "hello", /*nocase=*/true));
  EXPECT_FALSE(GlobMatch("HELLO", "hello"));
}

TEST(GlobMatchTest, TheEmptyStringMatchesOnlyTheEmptyPattern) {
  // stringmatchlen's loop needs a character of each: "*" does not match "".
  EXPECT_TRUE(GlobMatch("", ""));
  EXPECT_FALSE(GlobMatch("*", ""));
  EXPECT_FALSE(GlobMatch("**", ""));
  EXPECT_FALSE(GlobMatch("[a]", ""));
  EXPECT_FALSE(GlobMatch("", "a"));
}

}  // namespace
}  // namespace ringkv::core
