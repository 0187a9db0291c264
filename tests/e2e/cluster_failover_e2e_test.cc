// Cluster failover and the bus's other duties against the real binary,
// each as Redis 7.0 does it:
// - the default CLUSTER FAILOVER (MFSTART, the master's write pause and its
//   PAUSED offset, the election with FORCEACK): roles swapped on every node,
//   an acknowledged write kept, a write racing the failover either kept or
//   redirected; the same with a redis-server 7.0 node on either side; and
//   its timeout when the master does not answer;
// - a master losing a slot to a greater config epoch deletes that slot's
//   keys (its replica too), and one losing all its slots follows the new
//   owner as a replica, its replica with it;
// - replica migration to an orphaned master, and a replica too stale to be
//   elected (cluster-replica-validity-factor) unless forced;
// - PUBLISH reaches subscribers on every node, SPUBLISH the nodes of the
//   channel's shard.
// node-timeout is 1000 ms throughout, so each test takes seconds.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/key_slot.h"
#include "tests/e2e/cluster_test_util.h"
#include "tests/e2e/test_server.h"

namespace ringkv::testing::cluster_failover_e2e_test {
namespace {


// True when the server on `port` leaves a PING unanswered for 500 ms: its
// main thread is busy (e.g. in DEBUG SLEEP).
bool MainThreadBusy(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  const sockaddr_in a = LoopbackAddress(port);
  timeval tv{0, 500 * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  char buf[16];
  const bool busy = connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof(a)) == 0 &&
                    send(fd, "PING\r\n", 6, MSG_NOSIGNAL) == 6 && recv(fd, buf, sizeof(buf), 0) < 0;
  close(fd);
  return busy;
}

std::string Moved(int slot, const BusNode& to) {
  return "-MOVED " + std::to_string(slot) + " 127.0.0.1:" + std::to_string(to.port()) + "\r\n";
}

TEST(ClusterFailoverE2E, DefaultFailoverSwapsRolesAndKeepsAckedWrites) {
  std::vector<BusNode> nodes = StartCluster(kThreeMasters, {0});
  ASSERT_EQ(nodes.size(), 4u);
  BusNode& master = nodes[0];
  BusNode& replica = nodes[3];
  EXPECT_EQ(Cmd(*master.conn, {"CLUSTER", "FAILOVER"}), "-ERR You should send CLUSTER FAILOVER to a replica\r\n");
  // "bar" is in slot 5061, the first master's.
  EXPECT_EQ(Cmd(*master.conn, {"SET", "bar", "acked"}), "+OK\r\n");
  EXPECT_EQ(Cmd(*master.conn, {"WAIT", "1", "5000"}), ":1\r\n");

  EXPECT_EQ(Cmd(*replica.conn, {"CLUSTER", "FAILOVER"}), "+OK\r\n");  // at once, as Redis
  // A write racing the failover: done before the pause (then replicated
  // and kept), or held by the pause and then redirected to the new master.
  const std::string racing = Cmd(*master.conn, {"SET", "{bar}race", "1"});
  EXPECT_TRUE(racing == "+OK\r\n" || racing == Moved(5061, replica)) << racing;

  EXPECT_TRUE(WaitFor([&] { return Has(NodeLine(*replica.conn, replica.id), "myself,master - "); }, 20))
      << Text(Cmd(*replica.conn, {"CLUSTER", "NODES"}));
  for (BusNode& n : nodes) {
    EXPECT_TRUE(WaitFor(
        [&] {
          const std::string r = NodeLine(*n.conn, replica.id);
          const std::string m = NodeLine(*n.conn, master.id);
          return Has(r, "master - ") && Has(r, " connected 0-5460") && Has(m, "slave " + replica.id + " ") &&
                 !Has(m, "0-5460");
        },
        20))
        << n.port() << "\n" << Text(Cmd(*n.conn, {"CLUSTER", "NODES"}));
  }
  EXPECT_EQ(Cmd(*replica.conn, {"GET", "bar"}), "$5\r\nacked\r\n");
  if (racing == "+OK\r\n") {
    EXPECT_EQ(Cmd(*replica.conn, {"GET", "{bar}race"}), "$1\r\n1\r\n");
  }
  EXPECT_TRUE(Has(Cmd(*replica.conn, {"INFO", "replication"}), "role:master\r\n"));
  EXPECT_EQ(Cmd(*master.conn, {"GET", "bar"}), Moved(5061, replica));
  EXPECT_TRUE(WaitFor([&] { return Has(Cmd(*master.conn, {"INFO", "replication"}), "master_link_status:up\r\n"); },
                      20));
  // The old master serves writes again (redirected): its pause ended.
  EXPECT_EQ(Cmd(*master.conn, {"SET", "bar", "x"}), Moved(5061, replica));
  EXPECT_EQ(Cmd(*nodes[1].conn, {"GET", "bar"}), Moved(5061, replica));

  // The steps, logged with Redis's words.
  const std::string rlog = replica.Log();
  EXPECT_TRUE(Has(rlog, "Manual failover user request accepted.")) << rlog;
  EXPECT_TRUE(Has(rlog, "Received replication offset for paused master manual failover: ")) << rlog;
  EXPECT_TRUE(Has(rlog, "All master replication stream processed, manual failover can start.")) << rlog;
  EXPECT_TRUE(Has(rlog, "Failover election won: I'm the new master.")) << rlog;
  EXPECT_TRUE(Has(master.Log(), "Manual failover requested by replica " + replica.id + ".")) << master.Log();

  // And back: the old master, now a replica, fails over the same way.
  EXPECT_EQ(Cmd(*master.conn, {"CLUSTER", "FAILOVER"}), "+OK\r\n");
  EXPECT_TRUE(WaitFor([&] { return Has(NodeLine(*master.conn, master.id), "myself,master - "); }, 20))
      << Text(Cmd(*master.conn, {"CLUSTER", "NODES"}));
  EXPECT_TRUE(WaitFor([&] { return Has(NodeLine(*replica.conn, replica.id), "myself,slave " + master.id); }, 20))
      << Text(Cmd(*replica.conn, {"CLUSTER", "NODES"}));
  EXPECT_EQ(Cmd(*master.conn, {"GET", "bar"}), "$5\r\nacked\r\n");
}

// The same handshake across implementations: a redis-server 7.0 replica
// fails over a ringkv master, then the ringkv node (its replica now) fails
// back over the redis-server master.
TEST(ClusterFailoverE2E, DefaultFailoverWithRedisServerBothWays) {
  const RedisCopy redis_bin_copy;
  const std::string& redis_bin = redis_bin_copy.path();
  if (redis_bin.empty()) GTEST_SKIP() << "no " << kRedisSrc;
  std::vector<BusNode> nodes;
  for (int i = 0; i < 3; ++i) {
    nodes.push_back(StartBusNode());
    ASSERT_TRUE(nodes.back().server->ready());
  }
  nodes.push_back(StartBusNode(redis_bin));
  ASSERT_TRUE(nodes.back().server->ready());
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(Cmd(*nodes[i].conn, {"CLUSTER", "ADDSLOTSRANGE", std::to_string(kThreeMasters[i].first),
                                   std::to_string(kThreeMasters[i].second)}),
              "+OK\r\n");
  }
  for (int i = 1; i < 4; ++i) {
    EXPECT_EQ(Cmd(*nodes[0].conn, {"CLUSTER", "MEET", "127.0.0.1", std::to_string(nodes[i].port()),
                                   std::to_string(nodes[i].cport)}),
              "+OK\r\n");
  }
  BusNode& ringkv = nodes[0];
  BusNode& redis = nodes[3];
  ASSERT_TRUE(WaitFor([&] { return Has(NodeLine(*redis.conn, ringkv.id), " connected 0-5460"); }, 30))
      << Text(Cmd(*redis.conn, {"CLUSTER", "NODES"}));
  EXPECT_EQ(Cmd(*redis.conn, {"CLUSTER", "REPLICATE", ringkv.id}), "+OK\r\n");
  for (BusNode& n : nodes) {
    EXPECT_TRUE(WaitFor(
        [&] {
          const std::string info = Text(Cmd(*n.conn, {"CLUSTER", "INFO"}));
          return Has(info, "cluster_state:ok\r\n") && Has(info, "cluster_known_nodes:4\r\n") &&
                 Has(NodeLine(*n.conn, redis.id), "slave " + ringkv.id);
        },
        30))
        << Text(Cmd(*n.conn, {"CLUSTER", "NODES"}));
  }
  ASSERT_TRUE(WaitFor([&] { return Has(Cmd(*redis.conn, {"INFO", "replication"}), "master_link_status:up\r\n"); },
                      30));
  EXPECT_EQ(Cmd(*ringkv.conn, {"SET", "bar", "one"}), "+OK\r\n");
  EXPECT_EQ(Cmd(*ringkv.conn, {"WAIT", "1", "5000"}), ":1\r\n");

  EXPECT_EQ(Cmd(*redis.conn, {"CLUSTER", "FAILOVER"}), "+OK\r\n");
  EXPECT_TRUE(WaitFor([&] { return Has(NodeLine(*redis.conn, redis.id), "myself,master - "); }, 20))
      << Text(Cmd(*redis.conn, {"CLUSTER", "NODES"}));
  EXPECT_TRUE(WaitFor([&] { return Has(NodeLine(*ringkv.conn, ringkv.id), "myself,slave " + redis.id); }, 20))
      << Text(Cmd(*ringkv.conn, {"CLUSTER", "NODES"}));
  EXPECT_EQ(Cmd(*redis.conn, {"GET", "bar"}), "$3\r\none\r\n");
  EXPECT_TRUE(Has(ringkv.Log(), "Manual failover requested by replica " + redis.id + ".")) << ringkv.Log();

  ASSERT_TRUE(WaitFor([&] { return Has(Cmd(*ringkv.conn, {"INFO", "replication"}), "master_link_status:up\r\n"); },
                      30));
  // The master accepts MFSTART only from a node it knows as its replica.
  ASSERT_TRUE(WaitFor([&] { return Has(NodeLine(*redis.conn, ringkv.id), "slave " + redis.id); }, 20))
      << Text(Cmd(*redis.conn, {"CLUSTER", "NODES"}));
  EXPECT_EQ(Cmd(*redis.conn, {"SET", "bar", "two"}), "+OK\r\n");
  EXPECT_EQ(Cmd(*redis.conn, {"WAIT", "1", "5000"}), ":1\r\n");
  EXPECT_EQ(Cmd(*ringkv.conn, {"CLUSTER", "FAILOVER"}), "+OK\r\n");
  EXPECT_TRUE(WaitFor([&] { return Has(NodeLine(*ringkv.conn, ringkv.id), "myself,master - "); }, 20))
      << Text(Cmd(*ringkv.conn, {"CLUSTER", "NODES"}));
  EXPECT_TRUE(WaitFor([&] { return Has(NodeLine(*redis.conn, redis.id), "myself,slave " + ringkv.id); }, 20))
      << Text(Cmd(*redis.conn, {"CLUSTER", "NODES"}));
  EXPECT_EQ(Cmd(*ringkv.conn, {"GET", "bar"}), "$3\r\ntwo\r\n");
  EXPECT_TRUE(Has(ringkv.Log(), "All master replication stream processed, manual failover can start."))
      << ringkv.Log();
}

TEST(ClusterFailoverE2E, DefaultFailoverTimesOutWhenTheMasterDoesNotAnswer) {
  // A node timeout longer than the sleep: the replica refuses a default
  // failover once its master is failed or its link dropped (which a 1 s
  // timeout does within the sleep on a loaded machine).
  std::vector<BusNode> nodes = StartCluster(kThreeMasters, {0}, {"--enable-debug-command", "yes"}, "30000");
  ASSERT_EQ(nodes.size(), 4u);
  BusNode& master = nodes[0];
  BusNode& replica = nodes[3];
  // No automatic failover: the master's silence must not promote the replica.
  EXPECT_EQ(Cmd(*replica.conn, {"CONFIG", "SET", "cluster-replica-no-failover", "yes"}), "+OK\r\n");
  RawConn sleeper(master.port());
  sleeper.Send(Resp({"DEBUG", "SLEEP", "8"}));  // MFSTART waits in its socket past the 5 s limit
  // The sleep must have begun before MFSTART is sent: the master reads the
  // bus and client sockets in no fixed order.
  ASSERT_TRUE(WaitFor([&] { return MainThreadBusy(master.port()); }, 5));
  EXPECT_EQ(Cmd(*replica.conn, {"CLUSTER", "FAILOVER"}), "+OK\r\n");
  EXPECT_TRUE(WaitFor([&] { return Has(replica.Log(), "Manual failover timed out."); }, 15)) << replica.Log();
  EXPECT_TRUE(Has(NodeLine(*replica.conn, replica.id), "myself,slave,nofailover " + master.id))
      << Text(Cmd(*replica.conn, {"CLUSTER", "NODES"}));
  EXPECT_FALSE(Has(replica.Log(), "Starting a failover election")) << replica.Log();
  EXPECT_EQ(sleeper.ReadReply(), "+OK\r\n");
}

TEST(ClusterFailoverE2E, AReplicaMigratesToAnOrphanedMaster) { ExpectReplicaMigratesToOrphan(); }

TEST(ClusterFailoverE2E, AStaleReplicaIsNotElectedUnlessForced) {
  std::vector<BusNode> nodes = StartCluster(kThreeMasters, {0});
  ASSERT_EQ(nodes.size(), 4u);
  BusNode& master = nodes[0];
  BusNode& replica = nodes[3];
  // Stale after 1 s (ping period) + 1 x node-timeout past the node timeout;
  // the master sends no replication PING meanwhile.
  EXPECT_EQ(Cmd(*master.conn, {"CONFIG", "SET", "repl-ping-replica-period", "3600"}), "+OK\r\n");
  EXPECT_EQ(Cmd(*replica.conn, {"CONFIG", "SET", "cluster-replica-validity-factor", "1"}), "+OK\r\n");
  EXPECT_EQ(Cmd(*replica.conn, {"CONFIG", "SET", "repl-ping-replica-period", "1"}), "+OK\r\n");
  EXPECT_EQ(Cmd(*master.conn, {"SET", "bar", "acked"}), "+OK\r\n");
  EXPECT_EQ(Cmd(*master.conn, {"WAIT", "1", "5000"}), ":1\r\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(3500));
  master.server->Kill();
  EXPECT_TRUE(WaitFor([&] { return Has(NodeLine(*replica.conn, master.id), "master,fail"); }, 20));
  // Logged once the master has been failed for node-timeout + 5 s.
  EXPECT_TRUE(WaitFor([&] { return Has(replica.Log(), "Currently unable to failover: Disconnected from master for "
                                                      "longer than allowed. Please check the "
                                                      "'cluster-replica-validity-factor' configuration option."); },
                      20))
      << replica.Log();
  EXPECT_TRUE(Has(NodeLine(*replica.conn, replica.id), "myself,slave " + master.id));
  EXPECT_FALSE(Has(replica.Log(), "Starting a failover election")) << replica.Log();
  // A manual failover is not held back by the data's age.
  EXPECT_EQ(Cmd(*replica.conn, {"CLUSTER", "FAILOVER", "FORCE"}), "+OK\r\n");
  EXPECT_TRUE(WaitFor([&] { return Has(NodeLine(*replica.conn, replica.id), "myself,master - "); }, 20))
      << Text(Cmd(*replica.conn, {"CLUSTER", "NODES"}));
  EXPECT_EQ(Cmd(*replica.conn, {"GET", "bar"}), "$5\r\nacked\r\n");
}

// Two keys of distinct slots in [first, last].
std::pair<std::string, std::string> KeysIn(int first, int last) {
  std::vector<std::string> found;
  int slot0 = -1;
  for (int i = 0; found.size() < 2; ++i) {
    const std::string k = "key:" + std::to_string(i);
    const int s = core::KeyHashSlot(k);
    if (s < first || s > last || s == slot0) continue;
    slot0 = s;
    found.push_back(k);
  }
  return {found[0], found[1]};
}

TEST(ClusterFailoverE2E, LostSlotsLoseTheirKeysAndAnEmptiedMasterFollows) {
  std::vector<BusNode> nodes = StartCluster({{0, 99}, {100, 16383}}, {0});
  ASSERT_EQ(nodes.size(), 3u);
  BusNode& a = nodes[0];
  BusNode& b = nodes[1];
  BusNode& r = nodes[2];  // a's replica
  const auto [k1, k2] = KeysIn(0, 99);
  const int s1 = core::KeyHashSlot(k1);
  const int s2 = core::KeyHashSlot(k2);
  EXPECT_EQ(Cmd(*a.conn, {"SET", k1, "one"}), "+OK\r\n");
  EXPECT_EQ(Cmd(*a.conn, {"SET", k2, "two"}), "+OK\r\n");
  EXPECT_EQ(Cmd(*a.conn, {"WAIT", "1", "5000"}), ":1\r\n");

  // b takes s1 (an import completed without its keys): its epoch is bumped,
  // so a loses the slot and deletes its keys, and so does a's replica.
  EXPECT_EQ(Cmd(*b.conn, {"CLUSTER", "SETSLOT", std::to_string(s1), "IMPORTING", a.id}), "+OK\r\n");
  EXPECT_EQ(Cmd(*b.conn, {"CLUSTER", "SETSLOT", std::to_string(s1), "NODE", b.id}), "+OK\r\n");
  EXPECT_TRUE(WaitFor([&] { return Cmd(*a.conn, {"CLUSTER", "COUNTKEYSINSLOT", std::to_string(s1)}) == ":0\r\n"; },
                      20));
  EXPECT_EQ(Cmd(*a.conn, {"GET", k1}), Moved(s1, b));
  EXPECT_EQ(Cmd(*a.conn, {"GET", k2}), "$3\r\ntwo\r\n");
  EXPECT_TRUE(Has(NodeLine(*a.conn, a.id), "myself,master - ")) << NodeLine(*a.conn, a.id);
  EXPECT_TRUE(WaitFor([&] { return Cmd(*r.conn, {"CLUSTER", "COUNTKEYSINSLOT", std::to_string(s1)}) == ":0\r\n"; },
                      20));
  EXPECT_EQ(Cmd(*r.conn, {"CLUSTER", "COUNTKEYSINSLOT", std::to_string(s2)}), ":1\r\n");

  // b takes the rest of a's slots: a has none left and becomes b's replica;
  // a's replica follows b too (cluster-allow-replica-migration yes).
  for (int s = 0; s <= 99; ++s) {
    if (s == s1) continue;
    EXPECT_EQ(Cmd(*b.conn, {"CLUSTER", "SETSLOT", std::to_string(s), "IMPORTING", a.id}), "+OK\r\n");
    EXPECT_EQ(Cmd(*b.conn, {"CLUSTER", "SETSLOT", std::to_string(s), "NODE", b.id}), "+OK\r\n");
  }
  EXPECT_TRUE(WaitFor([&] { return Has(NodeLine(*a.conn, a.id), "myself,slave " + b.id); }, 20))
      << Text(Cmd(*a.conn, {"CLUSTER", "NODES"}));
  EXPECT_TRUE(WaitFor([&] { return Has(NodeLine(*r.conn, r.id), "myself,slave " + b.id); }, 20))
      << Text(Cmd(*r.conn, {"CLUSTER", "NODES"}));
  EXPECT_TRUE(WaitFor([&] { return Has(NodeLine(*b.conn, a.id), "slave " + b.id); }, 20))
      << Text(Cmd(*b.conn, {"CLUSTER", "NODES"}));
  for (BusNode* n : {&a, &r}) {
    EXPECT_TRUE(WaitFor([&] { return Has(Cmd(*n->conn, {"INFO", "replication"}), "master_link_status:up\r\n"); },
                        20));
    // b's data now: k2 was never there.
    EXPECT_TRUE(WaitFor([&] { return Cmd(*n->conn, {"DBSIZE"}) == ":0\r\n"; }, 20)) << Cmd(*n->conn, {"DBSIZE"});
    EXPECT_EQ(Cmd(*n->conn, {"GET", k2}), Moved(s2, b));
  }
}

// cluster-allow-replica-migration no (runtest-cluster's
// 12.1-replica-migration-3): a master whose slots were all resharded to
// another (which had slots of its own) stays a master, and its replica
// stays with it, as Redis's `sender_slots == migrated_our_slots`.
TEST(ClusterFailoverE2E, WithoutReplicaMigrationAReshardedAwayShardKeepsItsReplica) {
  std::vector<BusNode> nodes = StartCluster({{0, 9}, {10, 16383}}, {0}, {"--cluster-allow-replica-migration", "no"});
  ASSERT_EQ(nodes.size(), 3u);
  BusNode& a = nodes[0];
  BusNode& b = nodes[1];
  BusNode& r = nodes[2];  // a's replica
  for (int s = 0; s <= 9; ++s) {
    EXPECT_EQ(Cmd(*b.conn, {"CLUSTER", "SETSLOT", std::to_string(s), "IMPORTING", a.id}), "+OK\r\n");
    EXPECT_EQ(Cmd(*b.conn, {"CLUSTER", "SETSLOT", std::to_string(s), "NODE", b.id}), "+OK\r\n");
  }
  // Every node learns b's claim of all the slots.
  for (BusNode* n : {&a, &r}) {
    EXPECT_TRUE(WaitFor([&] { return Has(NodeLine(*n->conn, b.id), " 0-16383"); }, 20))
        << Text(Cmd(*n->conn, {"CLUSTER", "NODES"}));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // more pings, nothing else changes
  EXPECT_TRUE(Has(NodeLine(*a.conn, a.id), "myself,master - ")) << NodeLine(*a.conn, a.id);
  EXPECT_TRUE(Has(NodeLine(*r.conn, r.id), "myself,slave " + a.id)) << NodeLine(*r.conn, r.id);
  EXPECT_TRUE(Has(NodeLine(*b.conn, r.id), "slave " + a.id)) << NodeLine(*b.conn, r.id);
  EXPECT_TRUE(Has(Cmd(*a.conn, {"INFO", "replication"}), "connected_slaves:1\r\n"));
  EXPECT_TRUE(Has(Cmd(*r.conn, {"INFO", "replication"}), "master_port:" + std::to_string(a.port()) + "\r\n"));
}

TEST(ClusterFailoverE2E, PublishReachesEveryNodeAndShardPublishItsShard) {
  std::vector<BusNode> nodes = StartCluster(kThreeMasters, {0});
  ASSERT_EQ(nodes.size(), 4u);
  // Plain subscribers on a second master and on the first master's replica.
  RawConn sub_b(nodes[1].port());
  RawConn sub_r(nodes[3].port());
  for (RawConn* c : {&sub_b, &sub_r}) {
    EXPECT_EQ(Cmd(*c, {"SUBSCRIBE", "news"}), "*3\r\n$9\r\nsubscribe\r\n$4\r\nnews\r\n:1\r\n");
  }
  // PUBLISH counts only this node's receivers, as Redis.
  EXPECT_EQ(Cmd(*nodes[0].conn, {"PUBLISH", "news", "hello"}), ":0\r\n");
  const std::string message = "*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$5\r\nhello\r\n";
  for (RawConn* c : {&sub_b, &sub_r}) {
    EXPECT_EQ(c->ReadReply(), message);
    // Once only (the replica is not also sent it by replication).
    EXPECT_EQ(Cmd(*c, {"PING"}), "*2\r\n$4\r\npong\r\n$0\r\n\r\n");
  }

  // SPUBLISH of "bar" (slot 5061, the first master's shard) reaches the
  // shard's replica; another master refuses the subscription.
  RawConn ssub_r(nodes[3].port());
  EXPECT_EQ(Cmd(ssub_r, {"SSUBSCRIBE", "bar"}), "*3\r\n$10\r\nssubscribe\r\n$3\r\nbar\r\n:1\r\n");
  RawConn other(nodes[2].port());
  EXPECT_EQ(Cmd(other, {"SSUBSCRIBE", "bar"}), Moved(5061, nodes[0]));
  EXPECT_EQ(Cmd(*nodes[0].conn, {"SPUBLISH", "bar", "hi"}), ":0\r\n");
  EXPECT_EQ(ssub_r.ReadReply(), "*3\r\n$8\r\nsmessage\r\n$3\r\nbar\r\n$2\r\nhi\r\n");
  EXPECT_EQ(Cmd(ssub_r, {"PING"}), "*2\r\n$4\r\npong\r\n$0\r\n\r\n");
}

// CLUSTER RESET of a replica ends its replication (Redis's
// replicationUnsetMaster): given slots, it takes writes instead of READONLY
// (runtest-cluster resets every node between units and reuses them).
TEST(ClusterFailoverE2E, ResetReplicaBecomesAWritableMaster) {
  std::vector<BusNode> nodes = StartCluster({{0, 16383}}, {0});
  ASSERT_EQ(nodes.size(), 2u);
  RawConn& r = *nodes[1].conn;
  EXPECT_EQ(Cmd(r, {"CLUSTER", "RESET", "HARD"}), "+OK\r\n");
  EXPECT_TRUE(Has(Cmd(r, {"INFO", "replication"}), "role:master\r\n"));
  EXPECT_EQ(Cmd(r, {"CLUSTER", "ADDSLOTSRANGE", "0", "16383"}), "+OK\r\n");
  ASSERT_TRUE(WaitFor([&] { return Has(Text(Cmd(r, {"CLUSTER", "INFO"})), "cluster_state:ok\r\n"); }, 10));
  EXPECT_EQ(Cmd(r, {"SET", "k", "v"}), "+OK\r\n");
}

}  // namespace
}  // namespace ringkv::testing::cluster_failover_e2e_test
