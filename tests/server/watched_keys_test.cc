#include "server/watched_keys.h"

#include <gtest/gtest.h>

namespace ringkv::server {
namespace {

const auto kNeverExpired = [](int, std::string_view) { return false; };
const auto kExists = [] { return true; };
const auto kNone = [](std::string_view) { return false; };

TEST(WatchedKeysTest, TouchMakesOnlyThatKeysWatchersDirty) {
  WatchedKeys w;
  w.Watch(1, 0, "a", false);
  w.Watch(2, 0, "b", false);
  w.Watch(3, 1, "a", false);  // same name, other database
  w.Touch(0, "a", kExists);
  EXPECT_TRUE(w.Dirty(1, kNeverExpired));
  EXPECT_FALSE(w.Dirty(2, kNeverExpired));
  EXPECT_FALSE(w.Dirty(3, kNeverExpired));
  w.Touch(0, "zzz", kExists);  // nobody watches it
  EXPECT_FALSE(w.Dirty(2, kNeverExpired));
}

TEST(WatchedKeysTest, UnwatchForgetsKeysAndDirtiness) {
  WatchedKeys w;
  w.Watch(1, 0, "a", false);
  w.Watch(1, 0, "a", false);  // twice: one entry
  w.Watch(1, 0, "b", false);
  EXPECT_EQ(w.CountOf(1), 2u);
  w.Touch(0, "b", kExists);
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
  w.Touch(0, "k", kExists);
  EXPECT_TRUE(w.Dirty(2, kNeverExpired));
}

TEST(WatchedKeysTest, FlushTouchesOnlyAffectedKeys) {
  WatchedKeys w;
  w.Watch(1, 0, "present", false);
  w.Watch(2, 0, "absent", false);
  w.TouchDb(0, [](std::string_view key) { return key == "present"; }, kNone, kNone);
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

// Redis 7.0's rules for a key watched already expired: deleting it (lazy
// expiry, DEL, FLUSHDB) changes nothing logically; once deleted it is
// watched as absent, so a later write makes the watcher dirty.
TEST(WatchedKeysTest, DeletingAKeyWatchedExpiredIsNoChange) {
  WatchedKeys w;
  w.Watch(1, 0, "stale", true);
  w.Touch(0, "stale", [] { return false; });  // its deletion
  EXPECT_FALSE(w.Dirty(1, kNeverExpired));
  w.Touch(0, "stale", kExists);  // then written
  EXPECT_TRUE(w.Dirty(1, kNeverExpired));

  w.Watch(2, 0, "flushed", true);
  w.TouchDb(0, [](std::string_view) { return true; }, kNone, kNone);
  EXPECT_FALSE(w.Dirty(2, kNeverExpired));
}

// SWAPDB (Redis's touchAllWatchedKeysInDb with a replacement): a key that
// stays logically absent -- missing or expired on both sides -- is no change.
TEST(WatchedKeysTest, SwapdbKeepsLogicallyAbsentKeysClean) {
  const auto yes = [](std::string_view) { return true; };
  WatchedKeys w;
  w.Watch(1, 0, "x", true);  // stale, swapped for nothing
  w.TouchDb(0, yes, kNone, kNone);
  EXPECT_FALSE(w.Dirty(1, kNeverExpired));

  w.Watch(2, 0, "y", false);  // nothing, swapped for a stale key
  w.TouchDb(0, kNone, yes, yes);
  EXPECT_FALSE(w.Dirty(2, kNeverExpired));
  // ... which it now watches as expired: EXEC's expiry check passes it.
  EXPECT_FALSE(w.Dirty(2, [](int, std::string_view) { return true; }));

  w.Watch(3, 0, "z", true);  // stale, swapped for another stale key
  w.TouchDb(0, yes, yes, yes);
  EXPECT_FALSE(w.Dirty(3, kNeverExpired));

  w.Watch(4, 0, "live", false);  // a live key swapped for anything: dirty
  w.TouchDb(0, yes, kNone, kNone);
  EXPECT_TRUE(w.Dirty(4, kNeverExpired));
}

TEST(WatchedKeysTest, MemoryOfGrowsWithTheKeysAClientWatches) {
  WatchedKeys w;
  EXPECT_EQ(w.MemoryOf(1), 0u);
  w.Watch(1, 0, "short", false);
  const size_t one = w.MemoryOf(1);
  EXPECT_GT(one, 0u);
  for (int i = 0; i < 100; ++i) w.Watch(1, 0, "key:" + std::to_string(i), false);
  EXPECT_GT(w.MemoryOf(1), one + 100 * sizeof(uint64_t));
  const size_t before_long = w.MemoryOf(1);
  w.Watch(1, 0, std::string(1000, 'k'), false);  // its bytes are the client's too
  EXPECT_GE(w.MemoryOf(1), before_long + 1000);
  EXPECT_EQ(w.MemoryOf(2), 0u);
  w.UnwatchAll(1);
  EXPECT_EQ(w.MemoryOf(1), 0u);
}

}  // namespace
}  // namespace ringkv::server
