// A cluster replica's full sync as the other nodes see it, as in Redis 7.0
// (runtest-cluster's 28-cluster-shards): from the primary's +FULLRESYNC
// until the payload is loaded the replica announces offset 0 on the bus, so
// CLUSTER SHARDS on its master shows it `loading`; while it loads it keeps
// answering the bus's PINGs and the `loading`-flagged commands (CONFIG SET
// speeds the load up, INFO says loading:1), and once loaded it is `online`.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/e2e/cluster_test_util.h"
#include "tests/e2e/test_server.h"

namespace ringkv::testing::cluster_replica_sync_e2e_test {
namespace {

// The health CLUSTER SHARDS (RESP2) gives node `id`: the bulk after the
// first "health" that follows the node's id; "" when the node is not listed.
std::string ShardsHealth(RawConn& c, const std::string& id) {
  const std::string reply = Cmd(c, {"CLUSTER", "SHARDS"});
  const size_t at = reply.find("\r\n" + id + "\r\n");
  if (at == std::string::npos) return "";
  const std::string key = "$6\r\nhealth\r\n$";
  const size_t h = reply.find(key, at);
  if (h == std::string::npos) return "";
  const size_t len_end = reply.find("\r\n", h + key.size());
  const size_t len = std::stoul(reply.substr(h + key.size(), len_end - h - key.size()));
  return reply.substr(len_end + 2, len);
}

TEST(ClusterReplicaSyncE2E, ReplicaIsLoadingInClusterShardsDuringItsFullSync) {
  std::vector<BusNode> nodes = StartCluster({{0, 16383}}, {0}, {"--enable-debug-command", "yes"});
  ASSERT_EQ(nodes.size(), 2u);
  RawConn& master = *nodes[0].conn;
  RawConn& replica = *nodes[1].conn;
  const std::string replica_id = nodes[1].id;
  ASSERT_TRUE(WaitFor([&] { return ShardsHealth(master, replica_id) == "online"; }, 30));

  // 1000 keys, each loaded 4 ms late: the load takes 4 s, four node
  // timeouts, during which the master pings the replica.
  ASSERT_EQ(Cmd(master, {"DEBUG", "POPULATE", "1000", "key", "100"}), "+OK\r\n");
  ASSERT_EQ(Cmd(master, {"CONFIG", "SET", "repl-backlog-size", "100"}), "+OK\r\n");
  ASSERT_EQ(Cmd(replica, {"CONFIG", "SET", "key-load-delay", "4000"}), "+OK\r\n");
  ASSERT_EQ(Cmd(replica, {"CONFIG", "SET", "loading-process-events-interval-bytes", "1024"}), "+OK\r\n");
  // The link dropped, and more writes than the backlog holds (at least
  // 16 KB, as Redis's): a full sync.
  ASSERT_EQ(Cmd(master, {"MULTI"}), "+OK\r\n");
  Cmd(master, {"CLIENT", "KILL", "TYPE", "replica"});
  for (int i = 0; i < 100; ++i) Cmd(master, {"SET", "{x}" + std::to_string(i), std::string(1024, 'A')});
  ASSERT_EQ(Cmd(master, {"EXEC"}).substr(0, 4), "*101");

  // Seen loading by the master while the replica serves clients from
  // inside its load.
  bool both = false;
  ASSERT_TRUE(WaitFor(
      [&] {
        if (ShardsHealth(master, replica_id) != "loading") return false;
        both = Has(Cmd(replica, {"INFO", "persistence"}), "loading:1\r\n");
        return both;
      },
      30));
  EXPECT_TRUE(both);
  // A read a READONLY client may make here waits for the load (the
  // cluster's redirection comes first, as in Redis).
  EXPECT_EQ(Cmd(replica, {"READONLY"}), "+OK\r\n");
  EXPECT_EQ(Cmd(replica, {"GET", "key:1"}).substr(0, 9), "-LOADING ");
  // Never taken for failed meanwhile: it answered the bus's PINGs.
  EXPECT_FALSE(Has(NodeLine(master, replica_id), "fail"));
  ASSERT_EQ(Cmd(replica, {"CONFIG", "SET", "key-load-delay", "0"}), "+OK\r\n");

  ASSERT_TRUE(WaitFor([&] { return ShardsHealth(master, replica_id) == "online"; }, 30));
  ASSERT_TRUE(WaitFor([&] { return Has(Cmd(replica, {"INFO", "replication"}), "master_link_status:up\r\n"); }, 30));
  EXPECT_EQ(Cmd(replica, {"DBSIZE"}), ":1100\r\n");
  EXPECT_EQ(ShardsHealth(replica, replica_id), "online");
}

}  // namespace
}  // namespace ringkv::testing::cluster_replica_sync_e2e_test
