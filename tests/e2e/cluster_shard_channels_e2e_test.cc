// Shard channels follow their slot, as in Redis 7.0 (runtest-cluster's
// 25-pubsubshard-slot-migration): when a slot leaves a master (CLUSTER
// SETSLOT ... NODE, or a claim of a greater epoch), its subscribers to
// channels of that slot -- on the master and on its replica -- get
// "sunsubscribe <channel> <shard channels left>" and are no longer
// subscribed; channels of other slots stay.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/key_slot.h"
#include "tests/e2e/cluster_test_util.h"
#include "tests/e2e/test_server.h"

namespace ringkv::testing::cluster_shard_channels_e2e_test {
namespace {

std::string Push3(const std::string& a, const std::string& b, int64_t n) {
  return "*3\r\n$" + std::to_string(a.size()) + "\r\n" + a + "\r\n$" + std::to_string(b.size()) + "\r\n" + b +
         "\r\n:" + std::to_string(n) + "\r\n";
}

TEST(ClusterShardChannelsE2E, MigratedSlotUnsubscribesItsShardChannelsOnMasterAndReplica) {
  std::vector<BusNode> nodes = StartCluster({{0, 12000}, {12001, 16383}}, {0});
  ASSERT_EQ(nodes.size(), 3u);
  const std::string channel = "mychannel";  // slot 10059: node 0's
  const std::string other = "ch7";          // another of node 0's slots
  const int slot = core::KeyHashSlot(channel);
  ASSERT_LT(slot, 12001);
  ASSERT_LT(core::KeyHashSlot(other), 12001);
  ASSERT_NE(core::KeyHashSlot(other), slot);
  BusNode& from = nodes[0];
  BusNode& to = nodes[1];

  RawConn one(from.port());
  EXPECT_EQ(Cmd(one, {"SSUBSCRIBE", channel}), Push3("ssubscribe", channel, 1));
  RawConn two(from.port());
  EXPECT_EQ(Cmd(two, {"SSUBSCRIBE", channel}), Push3("ssubscribe", channel, 1));
  EXPECT_EQ(Cmd(two, {"SSUBSCRIBE", other}), Push3("ssubscribe", other, 2));
  RawConn on_replica(nodes[2].port());
  EXPECT_EQ(Cmd(on_replica, {"READONLY"}), "+OK\r\n");
  EXPECT_EQ(Cmd(on_replica, {"SSUBSCRIBE", channel}), Push3("ssubscribe", channel, 1));

  const std::string s = std::to_string(slot);
  ASSERT_EQ(Cmd(*from.conn, {"CLUSTER", "SETSLOT", s, "MIGRATING", to.id}), "+OK\r\n");
  ASSERT_EQ(Cmd(*to.conn, {"CLUSTER", "SETSLOT", s, "IMPORTING", from.id}), "+OK\r\n");
  // Still subscribed while the slot migrates.
  EXPECT_EQ(Cmd(*from.conn, {"SPUBLISH", channel, "hello"}), ":2\r\n");
  const std::string hello = "*3\r\n$8\r\nsmessage\r\n$9\r\nmychannel\r\n$5\r\nhello\r\n";
  EXPECT_EQ(one.ReadReply(), hello);
  EXPECT_EQ(two.ReadReply(), hello);
  EXPECT_EQ(on_replica.ReadReply(), hello);  // SPUBLISH reaches the shard's replicas

  ASSERT_EQ(Cmd(*from.conn, {"CLUSTER", "SETSLOT", s, "NODE", to.id}), "+OK\r\n");
  EXPECT_EQ(one.ReadReply(), Push3("sunsubscribe", channel, 0));
  EXPECT_EQ(two.ReadReply(), Push3("sunsubscribe", channel, 1));
  ASSERT_EQ(Cmd(*to.conn, {"CLUSTER", "SETSLOT", s, "NODE", to.id}), "+OK\r\n");
  // The replica drops it once it learns the new owner's claim.
  EXPECT_EQ(on_replica.ReadReply(), Push3("sunsubscribe", channel, 0));

  // Gone from the old shard; the other channel stays.
  EXPECT_EQ(Cmd(*from.conn, {"PUBSUB", "SHARDNUMSUB", channel, other}),
            "*4\r\n$9\r\nmychannel\r\n:0\r\n$3\r\nch7\r\n:1\r\n");
  EXPECT_EQ(Cmd(*nodes[2].conn, {"PUBSUB", "SHARDCHANNELS"}), "*0\r\n");
  // The client left with no subscription is a normal client again.
  EXPECT_EQ(Cmd(one, {"PING"}), "+PONG\r\n");
}

}  // namespace
}  // namespace ringkv::testing::cluster_shard_channels_e2e_test
