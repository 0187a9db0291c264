#include "server/pubsub/registry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/key_slot.h"

namespace ringkv::server {
namespace {

using Kind = PubSubRegistry::Kind;

std::vector<std::pair<uint64_t, std::string>> Receivers(const PubSubRegistry& ps, Kind kind, std::string_view channel) {
  std::vector<std::pair<uint64_t, std::string>> out;
  const size_t n = ps.ForEachReceiver(kind, channel, [&](uint64_t c, const std::string* p) {
    out.emplace_back(c, p == nullptr ? "" : "pattern " + *p);
  });
  EXPECT_EQ(n, out.size());
  return out;
}

TEST(PubSubRegistryTest, ChannelSubscribersInOrderThenPatterns) {
  PubSubRegistry ps;
  EXPECT_TRUE(ps.Subscribe(2, Kind::kChannel, "news"));
  EXPECT_TRUE(ps.Subscribe(1, Kind::kChannel, "news"));
  EXPECT_FALSE(ps.Subscribe(1, Kind::kChannel, "news"));
  EXPECT_TRUE(ps.Subscribe(3, Kind::kPattern, "n*"));
  EXPECT_TRUE(ps.Subscribe(1, Kind::kPattern, "*s"));
  const auto got = Receivers(ps, Kind::kChannel, "news");
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0], (std::pair<uint64_t, std::string>{2, ""}));
  EXPECT_EQ(got[1], (std::pair<uint64_t, std::string>{1, ""}));
  EXPECT_TRUE(Receivers(ps, Kind::kShard, "news").empty());  // shard channels are their own space
  // The empty pattern is a pattern (a pmessage) and matches only the empty
  // channel; "*" does not match it, as Redis's stringmatchlen.
  EXPECT_TRUE(ps.Subscribe(4, Kind::kPattern, ""));
  EXPECT_EQ(Receivers(ps, Kind::kChannel, ""), (std::vector<std::pair<uint64_t, std::string>>{{4, "pattern "}}));
  EXPECT_EQ(ps.ChannelAndPatternCount(1), 2u);
  EXPECT_EQ(ps.NumPatterns(), 3u);
  EXPECT_EQ(ps.NumSub(Kind::kChannel, "news"), 2u);
}

TEST(PubSubRegistryTest, TheComponentExistsOnlyWhileSubscribed) {
  PubSubRegistry ps;
  EXPECT_FALSE(ps.Subscribed(7));
  ps.Subscribe(7, Kind::kShard, "s");
  ps.Subscribe(7, Kind::kChannel, "c");
  EXPECT_TRUE(ps.Subscribed(7));
  EXPECT_TRUE(ps.Unsubscribe(7, Kind::kChannel, "c"));
  EXPECT_FALSE(ps.Unsubscribe(7, Kind::kChannel, "c"));
  EXPECT_TRUE(ps.Subscribed(7));  // still a shard subscription
  ps.RemoveClient(7);
  EXPECT_FALSE(ps.Subscribed(7));
  EXPECT_EQ(ps.NumChannels(Kind::kShard), 0u);
  EXPECT_TRUE(ps.Channels(Kind::kChannel, std::nullopt).empty());
}

TEST(PubSubRegistryTest, ChannelsFilterByGlob) {
  PubSubRegistry ps;
  for (const char* c : {"a.1", "a.2", "b.1"}) ps.Subscribe(1, Kind::kChannel, c);
  EXPECT_EQ(ps.Channels(Kind::kChannel, "a.*").size(), 2u);
  EXPECT_EQ(ps.Channels(Kind::kChannel, std::nullopt).size(), 3u);
  EXPECT_TRUE(ps.Channels(Kind::kChannel, "").empty());  // "" matches only the channel "", as Redis
  EXPECT_TRUE(ps.Channels(Kind::kChannel, "*").size() == 3u);
  EXPECT_EQ(ps.Subscriptions(1, Kind::kChannel), (std::vector<std::string>{"a.1", "a.2", "b.1"}));
}

// The slot index holds a shard channel while it has a subscriber, and only
// shard channels: what a slot leaving the shard must unsubscribe.
TEST(PubSubRegistryTest, ShardChannelsAreIndexedBySlot) {
  PubSubRegistry ps;
  const int slot = core::KeyHashSlot("{x}a");
  ASSERT_EQ(core::KeyHashSlot("{x}b"), slot);
  ASSERT_NE(core::KeyHashSlot("y"), slot);
  ps.Subscribe(1, Kind::kShard, "{x}a");
  ps.Subscribe(2, Kind::kShard, "{x}a");
  ps.Subscribe(2, Kind::kShard, "{x}b");
  ps.Subscribe(2, Kind::kShard, "y");
  ps.Subscribe(3, Kind::kChannel, "{x}c");  // not a shard channel
  std::vector<std::string> in_slot = ps.ShardChannelsInSlot(slot);
  std::sort(in_slot.begin(), in_slot.end());
  EXPECT_EQ(in_slot, (std::vector<std::string>{"{x}a", "{x}b"}));
  EXPECT_EQ(ps.ShardChannelsInSlot(core::KeyHashSlot("y")), (std::vector<std::string>{"y"}));
  ps.Unsubscribe(1, Kind::kShard, "{x}a");  // one subscriber left: still indexed
  EXPECT_EQ(ps.ShardChannelsInSlot(slot).size(), 2u);
  ps.RemoveClient(2);
  EXPECT_TRUE(ps.ShardChannelsInSlot(slot).empty());
  EXPECT_TRUE(ps.ShardChannelsInSlot(core::KeyHashSlot("y")).empty());
}

TEST(PubSubRegistryTest, MemoryOfCountsEveryKindAndLongNames) {
  PubSubRegistry ps;
  EXPECT_EQ(ps.MemoryOf(1), 0u);
  ps.Subscribe(1, Kind::kChannel, "a");
  const size_t one = ps.MemoryOf(1);
  EXPECT_GT(one, 0u);
  ps.Subscribe(1, Kind::kPattern, "p*");
  ps.Subscribe(1, Kind::kShard, "s");
  EXPECT_GT(ps.MemoryOf(1), one);
  const size_t before_long = ps.MemoryOf(1);
  const std::string long_name(1000, 'c');
  ps.Subscribe(1, Kind::kChannel, long_name);
  EXPECT_GE(ps.MemoryOf(1), before_long + 1000);
  ps.Unsubscribe(1, Kind::kChannel, long_name);  // its bytes go with it
  EXPECT_LT(ps.MemoryOf(1), before_long + 1000);
  ps.RemoveClient(1);
  EXPECT_EQ(ps.MemoryOf(1), 0u);
}

}  // namespace
}  // namespace ringkv::server
