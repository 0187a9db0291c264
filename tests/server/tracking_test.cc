#include "server/tracking.h"

#include <gtest/gtest.h>

#include <vector>

namespace ringkv::server {
namespace {

// `writer` changed `key` while running a command of its own (0: the server did).
std::vector<uint64_t> Told(Tracking& t, uint64_t writer, std::string_view key) {
  std::vector<uint64_t> ids;
  t.Invalidate(writer, writer, key, [&](uint64_t id) { ids.push_back(id); });
  std::sort(ids.begin(), ids.end());
  return ids;
}

TEST(TrackingTest, ReadersAreToldOnceThenForgotten) {
  Tracking t;
  ASSERT_EQ(t.Enable(1, {}), "");
  ASSERT_EQ(t.Enable(2, {}), "");
  t.RememberKeys(1, {"k"});
  t.RememberKeys(2, {"k", "other"});
  EXPECT_EQ(t.keys(), 2u);
  EXPECT_EQ(t.items(), 3u);
  EXPECT_EQ(Told(t, 0, "k"), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(Told(t, 0, "k"), std::vector<uint64_t>{});  // one-shot
  t.Disable(2);
  EXPECT_EQ(Told(t, 0, "other"), std::vector<uint64_t>{});  // no longer tracking
}

TEST(TrackingTest, EvictedKeysAreInvalidatedForTheirReaders) {
  Tracking t;
  ASSERT_EQ(t.Enable(1, {}), "");
  t.RememberKeys(1, {"a", "b", "c"});
  std::vector<std::string> told;
  t.EvictKeys(2, [&](uint64_t id, std::string_view key) {
    EXPECT_EQ(id, 1u);
    told.emplace_back(key);
  });
  EXPECT_EQ(told.size(), 2u);
  EXPECT_EQ(t.keys(), 1u);
}

TEST(TrackingTest, NoloopSkipsTheWriter) {
  Tracking t;
  TrackingOptions noloop;
  noloop.noloop = true;
  ASSERT_EQ(t.Enable(1, noloop), "");
  ASSERT_EQ(t.Enable(2, {}), "");
  t.RememberKeys(1, {"k"});
  t.RememberKeys(2, {"k"});
  EXPECT_EQ(Told(t, 1, "k"), std::vector<uint64_t>{2});
  t.RememberKeys(2, {"j"});
  EXPECT_EQ(Told(t, 2, "j"), std::vector<uint64_t>{2});  // without NOLOOP, the writer is told too
}

TEST(TrackingTest, OptinAndOptoutFollowClientCaching) {
  Tracking t;
  TrackingOptions in, out;
  in.optin = true;
  out.optout = true;
  ASSERT_EQ(t.Enable(1, in), "");
  ASSERT_EQ(t.Enable(2, out), "");
  t.RememberKeys(1, {"a"});  // OPTIN without CACHING yes: not tracked
  t.Find(1)->caching_yes = true;
  t.RememberKeys(1, {"b"});
  t.Find(2)->caching_no = true;
  t.RememberKeys(2, {"a"});  // OPTOUT with CACHING no: not tracked
  t.EndCommand(*t.Find(2));
  t.RememberKeys(2, {"b"});
  EXPECT_EQ(Told(t, 0, "a"), std::vector<uint64_t>{});
  EXPECT_EQ(Told(t, 0, "b"), (std::vector<uint64_t>{1, 2}));
}

TEST(TrackingTest, BroadcastsGroupKeysPerPrefixSortedAndDeduplicated) {
  Tracking t;
  TrackingOptions bcast;
  bcast.bcast = true;
  bcast.prefixes = {"user:", "item:"};
  ASSERT_EQ(t.Enable(7, bcast), "");
  EXPECT_EQ(Told(t, 0, "user:2"), std::vector<uint64_t>{});  // nothing per key in BCAST
  Told(t, 0, "user:1");
  Told(t, 0, "user:2");
  Told(t, 0, "other");
  ASSERT_TRUE(t.has_broadcasts());
  std::vector<std::vector<std::string>> sent;
  t.TakeBroadcasts([&](uint64_t id, const std::vector<std::string>& keys) {
    EXPECT_EQ(id, 7u);
    sent.push_back(keys);
  });
  EXPECT_EQ(sent, (std::vector<std::vector<std::string>>{{"user:1", "user:2"}}));
  EXPECT_FALSE(t.has_broadcasts());
}

// An expiry caused by a NOLOOP client's own read: a default-mode client is
// not told (its command was running), a BCAST client is (Redis records no
// writer for it, and the last writer of a key in a batch counts) -- the
// suite's "Tracking gets notification of lazy expired keys".
TEST(TrackingTest, ServerMadeChangesReachBroadcastNoloopClients) {
  Tracking t;
  TrackingOptions bcast;
  bcast.bcast = true;
  bcast.noloop = true;
  ASSERT_EQ(t.Enable(7, bcast), "");
  TrackingOptions noloop;
  noloop.noloop = true;
  ASSERT_EQ(t.Enable(8, noloop), "");
  t.RememberKeys(8, {"k"});
  std::vector<uint64_t> told;
  t.Invalidate(7, 7, "mine", [&](uint64_t id) { told.push_back(id); });
  t.Invalidate(7, 7, "expired", [&](uint64_t id) { told.push_back(id); });
  t.Invalidate(0, 0, "expired", [&](uint64_t id) { told.push_back(id); });  // same batch: last writer counts
  t.Invalidate(0, 8, "k", [&](uint64_t id) { told.push_back(id); });
  EXPECT_EQ(told, std::vector<uint64_t>{});
  std::vector<std::vector<std::string>> sent;
  t.TakeBroadcasts([&](uint64_t, const std::vector<std::string>& keys) { sent.push_back(keys); });
  EXPECT_EQ(sent, (std::vector<std::vector<std::string>>{{"expired", "k"}}));
}

TEST(TrackingTest, ModeSwitchesAndOverlapsAreRefusedAsRedisDoes) {
  Tracking t;
  TrackingOptions prefix_only;
  prefix_only.prefixes = {"a"};
  EXPECT_EQ(t.Enable(1, prefix_only), "ERR PREFIX option requires BCAST mode to be enabled");
  ASSERT_EQ(t.Enable(1, {}), "");
  TrackingOptions bcast;
  bcast.bcast = true;
  EXPECT_NE(t.Enable(1, bcast).find("switch BCAST"), std::string::npos);
  t.Disable(1);
  bcast.prefixes = {"ab", "a"};
  EXPECT_EQ(t.Enable(1, bcast),
            "ERR Prefix 'ab' overlaps with another provided prefix 'a'. Prefixes for a single client must not overlap.");
  bcast.prefixes = {"a"};
  ASSERT_EQ(t.Enable(1, bcast), "");
  bcast.prefixes = {"abc"};
  EXPECT_EQ(t.Enable(1, bcast),
            "ERR Prefix 'abc' overlaps with an existing prefix 'a'. Prefixes for a single client must not overlap.");
  EXPECT_EQ(t.prefixes(), 1u);
  t.Disable(1);
  EXPECT_EQ(t.prefixes(), 0u);
}

}  // namespace
}  // namespace ringkv::server
