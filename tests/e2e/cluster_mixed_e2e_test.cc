// Mixed clusters of ringkv and redis-server 7.0 nodes, against the real
// binaries: what crosses the bus between the two implementations besides
// the failover (cluster_failover_e2e_test) and resharding
// (cluster_reshard_e2e_test):
// - PUBLISH on either kind of node reaches the subscribers of every node,
//   masters and replicas, once; SPUBLISH reaches the replicas of the
//   channel's shard, whichever implementation publishes or subscribes;
// - replica migration to an orphaned master, a ringkv replica to a
//   redis-server master and a redis-server replica to a ringkv master.
// node-timeout is 1000 ms throughout. Skipped without Debian's redis-server.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/key_slot.h"
#include "tests/e2e/cluster_test_util.h"
#include "tests/e2e/test_server.h"

namespace ringkv::testing::cluster_mixed_e2e_test {
namespace {

const std::string kPong = "*2\r\n$4\r\npong\r\n$0\r\n\r\n";  // PING's answer while subscribed

// A channel name whose slot is in [first, last].
std::string ChannelInSlots(int first, int last) {
  for (int i = 0;; ++i) {
    std::string name = "ch" + std::to_string(i);
    const int slot = core::KeyHashSlot(name);
    if (slot >= first && slot <= last) return name;
  }
}

TEST(ClusterMixedE2E, PublishAndShardPublishCrossImplementations) {
  const RedisCopy redis_copy;
  const std::string& redis = redis_copy.path();
  if (redis.empty()) GTEST_SKIP() << "no " << kRedisSrc;
  // Masters: ringkv, redis-server, ringkv. Replicas: a ringkv one of the
  // redis-server master, a redis-server one of the first ringkv master.
  std::vector<BusNode> nodes = StartCluster(kThreeMasters, {1, 0}, {}, "1000", {"", redis, "", "", redis});
  ASSERT_EQ(nodes.size(), 5u);
  BusNode& ringkv_master = nodes[0];
  BusNode& redis_master = nodes[1];
  BusNode& ringkv_replica = nodes[3];  // of redis_master
  BusNode& redis_replica = nodes[4];   // of ringkv_master

  // A subscriber on every node but the first.
  std::vector<std::unique_ptr<RawConn>> subs;
  for (size_t i = 1; i < nodes.size(); ++i) {
    subs.push_back(std::make_unique<RawConn>(nodes[i].port()));
    EXPECT_EQ(Cmd(*subs.back(), {"SUBSCRIBE", "news"}), "*3\r\n$9\r\nsubscribe\r\n$4\r\nnews\r\n:1\r\n");
  }
  // From a ringkv node: every subscriber, once (the replicas are not also
  // sent it by replication). PUBLISH counts this node's receivers only.
  EXPECT_EQ(Cmd(*ringkv_master.conn, {"PUBLISH", "news", "from-ringkv"}), ":0\r\n");
  for (auto& c : subs) {
    EXPECT_EQ(c->ReadReply(), Resp({"message", "news", "from-ringkv"}));
    EXPECT_EQ(Cmd(*c, {"PING"}), kPong);
  }
  // From a redis-server node: the same, the ringkv nodes included.
  RawConn publisher(redis_master.port());
  EXPECT_EQ(Cmd(publisher, {"PUBLISH", "news", "from-redis"}), ":1\r\n");  // its own subscriber
  for (auto& c : subs) {
    EXPECT_EQ(c->ReadReply(), Resp({"message", "news", "from-redis"}));
    EXPECT_EQ(Cmd(*c, {"PING"}), kPong);
  }

  // SPUBLISH on the redis-server master reaches its ringkv replica; on the
  // ringkv master, its redis-server replica.
  const std::string in_redis_shard = ChannelInSlots(5461, 10922);
  const std::string in_ringkv_shard = ChannelInSlots(0, 5460);
  RawConn ssub_ringkv(ringkv_replica.port());
  EXPECT_EQ(Cmd(ssub_ringkv, {"SSUBSCRIBE", in_redis_shard}),
            "*3\r\n$10\r\nssubscribe\r\n$" + std::to_string(in_redis_shard.size()) + "\r\n" + in_redis_shard +
                "\r\n:1\r\n");
  RawConn ssub_redis(redis_replica.port());
  EXPECT_EQ(Cmd(ssub_redis, {"SSUBSCRIBE", in_ringkv_shard}),
            "*3\r\n$10\r\nssubscribe\r\n$" + std::to_string(in_ringkv_shard.size()) + "\r\n" + in_ringkv_shard +
                "\r\n:1\r\n");
  EXPECT_EQ(Cmd(publisher, {"SPUBLISH", in_redis_shard, "s1"}), ":0\r\n");
  EXPECT_EQ(ssub_ringkv.ReadReply(), Resp({"smessage", in_redis_shard, "s1"}));
  EXPECT_EQ(Cmd(ssub_ringkv, {"PING"}), kPong);
  EXPECT_EQ(Cmd(*ringkv_master.conn, {"SPUBLISH", in_ringkv_shard, "s2"}), ":0\r\n");
  EXPECT_EQ(ssub_redis.ReadReply(), Resp({"smessage", in_ringkv_shard, "s2"}));
  EXPECT_EQ(Cmd(ssub_redis, {"PING"}), kPong);
}

TEST(ClusterMixedE2E, ARingkvReplicaMigratesToAnOrphanedRedisServerMaster) {
  const RedisCopy redis_copy;
  const std::string& redis = redis_copy.path();
  if (redis.empty()) GTEST_SKIP() << "no " << kRedisSrc;
  ExpectReplicaMigratesToOrphan({"", redis, redis, "", "", redis, redis});  // masters ringkv, redis, redis
}

TEST(ClusterMixedE2E, ARedisServerReplicaMigratesToAnOrphanedRingkvMaster) {
  const RedisCopy redis_copy;
  const std::string& redis = redis_copy.path();
  if (redis.empty()) GTEST_SKIP() << "no " << kRedisSrc;
  ExpectReplicaMigratesToOrphan({redis, "", "", redis, redis, "", ""});  // masters redis, ringkv, ringkv
}

}  // namespace
}  // namespace ringkv::testing::cluster_mixed_e2e_test
