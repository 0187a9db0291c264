#include "server/watched_keys.h"

#include <gtest/gtest.h>

namespace ringkv::server {
namespace {

const auto kNeverExpired = [](int, std::string_view) { return false; };

TEST(WatchedKeysTest, TouchMakesOnlyThatKeysWatchersDirty) {
  WatchedKeys w;
  w.Watch(1, 0, "a", false);
  w.Watch(2, 0, "b", false);
  w.Watch(3, 1, "a", false);  // same name, other database
  w.Touch(0, "a");
  EXPECT_TRUE(w.Dirty(1, kNeverExpired));
  EXPECT_FALSE(w.Dirty(2, kNeverExpired));
  EXPECT_FALSE(w.Dirty(3, kNeverExpired));
  w.Touch(0, "zzz");  // nobody watches it
  EXPECT_FALSE(w.Dirty(2, kNeverExpired));
}

TEST(WatchedKeysTest, UnwatchForgetsKeysAndDirtiness) {
  WatchedKeys w;
  w.Watch(1, 0, "a", false);
  w.Watch(1, 0, "a", false);  // twice: one entry
  w.Watch(1, 0, "b", false);
  EXPECT_EQ(w.CountOf(1), 2u);
  w.Touch(0, "b");
  EXPECT_TRUE(w.Dirty(1, kNeverExpired));
  w.UnwatchAll(1);
  EXPECT_FALSE(w.Watching(1));
  EXPECT_TRUE(w.empty());
  EXPECT_FALSE(w.Dirty(1, kNeverExpired));
  w.Watch(1, 0, "a", false);
  EXPECT_FALSE(w.Dirty(1, kNeverExpired));  // a fresh watch starts clean
}

TEST(WatchedKeysTest, OtherWatchersSurviveOneUnwatching) {
  WatchedKeys w;
  w.Watch(1, 0, "k", false);
  w.Watch(2, 0, "k", false);
  w.UnwatchAll(1);
  w.Touch(0, "k");
  EXPECT_TRUE(w.Dirty(2, kNeverExpired));
}

TEST(WatchedKeysTest, FlushTouchesOnlyAffectedKeys) {
  WatchedKeys w;
  w.Watch(1, 0, "present", false);
  w.Watch(2, 0, "absent", false);
  w.TouchDb(0, [](std::string_view key) { return key == "present"; });
  EXPECT_TRUE(w.Dirty(1, kNeverExpired));
  EXPECT_FALSE(w.Dirty(2, kNeverExpired));
}

TEST(WatchedKeysTest, AKeyThatExpiresAfterWatchIsDirtyButOneExpiredBeforeIsNot) {
  WatchedKeys w;
  const auto expired = [](int, std::string_view) { return true; };
  w.Watch(1, 0, "alive-then", false);
  w.Watch(2, 0, "expired-already", true);
  EXPECT_TRUE(w.Dirty(1, expired));
  EXPECT_FALSE(w.Dirty(2, expired));
}

}  // namespace
}  // namespace ringkv::server
