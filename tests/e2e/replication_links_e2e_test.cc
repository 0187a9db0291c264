// What a primary does with its replicas' links, and a replica with its own
// clients while it loads, as Redis 7.0 does (issue 16, Redis's
// integration/replication unit): a replica link that answers is a rogue one
// and is dropped; a replica loading a payload of another history answers
// -LOADING; a snapshot written only for replicas that all left is stopped;
// REPLICAOF to another primary keeps this server's own replicas; PSYNC
// wants an integer offset.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/persistence_test_util.h"

namespace ringkv::testing::replication_links_e2e_test {
namespace {

std::vector<std::string> Args(std::vector<std::string> extra = {}) {
  std::vector<std::string> a = {"--save", "", "--enable-debug-command", "yes", "--repl-diskless-sync-delay", "0"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

std::string LogOf(const TempDir& dir) { return ReadFile(dir.path() + "/server.log"); }

std::vector<std::string> Logged(const TempDir& dir, std::vector<std::string> extra = {}) {
  std::vector<std::string> a = Args(std::move(extra));
  a.insert(a.end(), {"--dir", dir.path(), "--logfile", dir.path() + "/server.log"});
  return a;
}

bool WaitLinkUp(RawConn& replica) { return WaitInfo(replica, "master_link_status", "up", 10000, "replication"); }

// Reads until `what` arrived (or 5 s passed); false at EOF.
bool ReadUntil(RawConn& c, const std::string& what) {
  std::string got;
  while (got.find(what) == std::string::npos) {
    std::string more = c.ReadN(1);
    if (more.empty()) return false;
    got += more;
  }
  return true;
}

TEST(ReplicationLinksE2E, ARogueReplicaThatGetsAReplyIsDropped) {
  TempDir dir;
  TestServer s(Logged(dir, {"--repl-diskless-sync", "no"}));
  ASSERT_TRUE(s.ready());
  RawConn replica(s.port());
  ASSERT_TRUE(replica.Send(Resp({"PSYNC", "?", "-1"})));
  ASSERT_TRUE(ReadUntil(replica, "+FULLRESYNC "));
  // A replica may not touch the keyspace; the error is a reply, and a
  // replica's link carries no replies: it is closed.
  ASSERT_TRUE(replica.Send(Resp({"GET", "foo"})));
  for (int i = 0; i < 100 && !replica.ReadN(1 << 16).empty(); ++i) {
  }
  RawConn c(s.port());
  EXPECT_EQ(Call(c, {"PING"}), "+PONG\r\n");
  const std::string log = LogOf(dir);
  EXPECT_NE(log.find("Replica generated a reply to command 'get', disconnecting it: id="), std::string::npos);
  EXPECT_NE(log.find("== CRITICAL == This master is sending an error to its replica: 'ERR Replica can't interact "
                     "with the keyspace' after processing the command 'get'"),
            std::string::npos);
  EXPECT_TRUE(WaitInfo(c, "connected_slaves", "0", 5000, "replication"));
}

TEST(ReplicationLinksE2E, AMonitorMayNotTouchTheKeyspace) {
  TestServer s(Args());
  RawConn m(s.port());
  ASSERT_EQ(Call(m, {"MONITOR"}), "+OK\r\n");
  EXPECT_EQ(Call(m, {"GET", "foo"}), "-ERR Replica can't interact with the keyspace\r\n");
  EXPECT_EQ(Call(m, {"DBSIZE"}), "-ERR Replica can't interact with the keyspace\r\n");
}

TEST(ReplicationLinksE2E, PsyncWantsAnIntegerOffset) {
  TestServer s(Args());
  RawConn c(s.port());
  EXPECT_EQ(Call(c, {"PSYNC", "replicationid", "offset_str"}), "-ERR value is not an integer or out of range\r\n");
  EXPECT_EQ(Call(c, {"PING"}), "+PONG\r\n");  // still a normal client
}

// A disk snapshot started for replicas that all went away is of no use:
// stopped, unless save points make it worth finishing.
TEST(ReplicationLinksE2E, SnapshotNobodyWaitsForIsStopped) {
  for (const bool save_points : {false, true}) {
    SCOPED_TRACE(save_points ? "save points" : "no save points");
    TestServer primary(Args({"--repl-diskless-sync", "no", "--rdb-key-save-delay", "1000000"}));
    TestServer replica(Args());
    RawConn p(primary.port()), r(replica.port());
    if (save_points) {
      ASSERT_EQ(Call(p, {"CONFIG", "SET", "save", "900 1"}), "+OK\r\n");
    }
    for (int i = 0; i < 5; ++i) ASSERT_EQ(Call(p, {"SET", std::to_string(i), "v"}), "+OK\r\n");
    ASSERT_EQ(Call(r, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
    ASSERT_TRUE(WaitInfo(p, "rdb_bgsave_in_progress", "1", 10000, "persistence"));
    ASSERT_EQ(Call(r, {"REPLICAOF", "NO", "ONE"}), "+OK\r\n");
    const bool stopped = WaitInfo(p, "rdb_bgsave_in_progress", "0", 3000, "persistence");
    EXPECT_EQ(stopped, !save_points);
  }
}

// REPLICAOF another primary keeps this server's replicas: if the new
// primary continues the history they miss nothing (Redis 7.0).
TEST(ReplicationLinksE2E, ReplicaofKeepsSubReplicasUntilTheHistoryChanges) {
  TempDir sub_dir;
  TestServer m1(Args());
  TestServer m2(Args({"--rdb-key-save-delay", "1000000"}));
  TestServer middle(Args());
  TestServer sub(Logged(sub_dir));
  RawConn p1(m1.port()), p2(m2.port()), mid(middle.port()), s(sub.port());
  ASSERT_EQ(Call(p1, {"SET", "a", "b"}), "+OK\r\n");
  ASSERT_EQ(Call(p2, {"DEBUG", "POPULATE", "10"}), "+OK\r\n");
  ASSERT_EQ(Call(mid, {"REPLICAOF", "127.0.0.1", std::to_string(m1.port())}), "+OK\r\n");
  ASSERT_TRUE(WaitLinkUp(mid));
  ASSERT_EQ(Call(s, {"REPLICAOF", "127.0.0.1", std::to_string(middle.port())}), "+OK\r\n");
  ASSERT_TRUE(WaitLinkUp(s));
  // To m2, whose full sync never completes: the sub-replica stays.
  ASSERT_EQ(Call(mid, {"REPLICAOF", "127.0.0.1", std::to_string(m2.port())}), "+OK\r\n");
  ASSERT_TRUE(WaitInfo(p2, "rdb_bgsave_in_progress", "1", 10000, "persistence"));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(Info(mid, "connected_slaves", "replication"), "1");
  // Back to m1, which continues the history: still no resync below.
  ASSERT_EQ(Call(mid, {"REPLICAOF", "127.0.0.1", std::to_string(m1.port())}), "+OK\r\n");
  ASSERT_TRUE(WaitLinkUp(mid));
  ASSERT_EQ(Call(p1, {"SET", "c", "d"}), "+OK\r\n");
  ASSERT_TRUE(WaitInfo(s, "master_repl_offset", Info(p1, "master_repl_offset", "replication"), 10000, "replication"));
  EXPECT_EQ(Info(s, "master_replid", "replication"), Info(p1, "master_replid", "replication"));
  EXPECT_EQ(Info(mid, "sync_full", "stats"), "1");  // the sub-replica's first sync only
  EXPECT_EQ(Info(mid, "sync_partial_ok", "stats"), "0");
  EXPECT_EQ(LogOf(sub_dir).find("Connection with master lost"), std::string::npos);
  EXPECT_EQ(Call(s, {"GET", "c"}), "$1\r\nd\r\n");
}

// A diskless load of a payload from another history is a "synchronous"
// load: clients get -LOADING (INFO loading:1); one of the history the
// replica already follows is async: it serves its old data meanwhile and
// refuses only what may not run beside the load.
TEST(ReplicationLinksE2E, DisklessSwapdbLoadingModes) {
  TestServer primary(Args({"--rdb-key-save-delay", "20000", "--rdbcompression", "no"}));
  TestServer replica(Args({"--repl-diskless-load", "swapdb"}));
  RawConn p(primary.port()), r(replica.port());
  ASSERT_EQ(Call(p, {"DEBUG", "POPULATE", "400", "k", "1000"}), "+OK\r\n");
  ASSERT_EQ(Call(r, {"SET", "mine", "old"}), "+OK\r\n");
  // Another history: loading.
  ASSERT_EQ(Call(r, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
  ASSERT_TRUE(WaitInfo(r, "loading", "1", 10000, "persistence"));
  EXPECT_EQ(Info(r, "async_loading", "persistence"), "0");
  EXPECT_EQ(Call(r, {"GET", "mine"}), "-LOADING Redis is loading the dataset in memory\r\n");
  EXPECT_EQ(Call(r, {"PING"}), "-LOADING Redis is loading the dataset in memory\r\n");
  ASSERT_TRUE(WaitLinkUp(r));
  EXPECT_EQ(Call(r, {"GET", "mine"}), "$-1\r\n");
  // The same history (a full resync forced by a backlog too small): async.
  ASSERT_EQ(Call(p, {"CONFIG", "SET", "repl-backlog-size", "16384"}), "+OK\r\n");
  ASSERT_EQ(Call(r, {"CLIENT", "KILL", "TYPE", "master"}), ":1\r\n");
  for (int i = 0; i < 8; ++i) ASSERT_EQ(Call(p, {"SET", "big" + std::to_string(i), std::string(16384, 'x')}), "+OK\r\n");
  ASSERT_TRUE(WaitInfo(r, "async_loading", "1", 10000, "persistence"));
  EXPECT_EQ(Info(r, "loading", "persistence"), "0");
  EXPECT_EQ(Call(r, {"DBSIZE"}), ":400\r\n");  // the old data, served
  EXPECT_EQ(Call(r, {"REPLICAOF", "NO", "ONE"}), "-LOADING Redis is loading the dataset in memory\r\n");
  EXPECT_EQ(Call(r, {"CONFIG", "SET", "appendonly", "yes"}), "-LOADING Redis is loading the dataset in memory\r\n");
  ASSERT_TRUE(WaitInfo(r, "async_loading", "0", 30000, "persistence"));
  ASSERT_TRUE(WaitLinkUp(r));
  EXPECT_TRUE(WaitInfo(r, "master_repl_offset", Info(p, "master_repl_offset", "replication"), 10000, "replication"));
}

// A diskless load cut short by the link says so in Redis's words ("Internal
// error in RDB", what Redis's `diskless loading short read` test and
// operators look for), drops the half-loaded data and syncs again.
TEST(ReplicationLinksE2E, ADisklessLoadCutShortLogsRedisWordsAndResyncs) {
  TempDir dir;
  TestServer primary(Args({"--rdb-key-save-delay", "20000", "--rdbcompression", "no"}));
  TestServer replica(Logged(dir, {"--repl-diskless-load", "swapdb"}));
  RawConn p(primary.port()), r(replica.port());
  ASSERT_EQ(Call(p, {"DEBUG", "POPULATE", "400", "k", "1000"}), "+OK\r\n");
  ASSERT_EQ(Call(r, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
  ASSERT_TRUE(WaitInfo(r, "loading", "1", 10000, "persistence"));
  // About 50 of the 400 keys sent (20 ms each): cut inside the payload.
  std::this_thread::sleep_for(std::chrono::seconds(1));
  ASSERT_EQ(Call(p, {"CLIENT", "KILL", "TYPE", "replica"}), ":1\r\n");
  ASSERT_EQ(Call(p, {"CONFIG", "SET", "rdb-key-save-delay", "0"}), "+OK\r\n");
  ASSERT_TRUE(WaitLinkUp(r));
  EXPECT_EQ(Call(r, {"DBSIZE"}), ":400\r\n");
  const std::string log = LogOf(dir);
  EXPECT_NE(log.find("# Internal error in RDB reading the MASTER synchronization DB from socket: Short read or "
                     "unexpected end of file"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find(". Failure loading rdb format from socket, assuming connection error, resuming operation.\n"),
            std::string::npos);
  EXPECT_NE(log.find("MASTER <-> REPLICA sync: Discarding the half-loaded data"), std::string::npos);
}

// A replica that stops reading a diskless payload holds the fork child and
// the other replicas of the transfer back: after repl-timeout it is dropped,
// and the transfer ends for the one still up.
TEST(ReplicationLinksE2E, AStuckDisklessReplicaIsDropped) {
  TempDir dir;
  TestServer primary(Logged(dir, {"--rdbcompression", "no", "--repl-timeout", "2", "--repl-diskless-sync-delay",
                                  "5", "--repl-diskless-sync-max-replicas", "2"}));
  TestServer slow(Args({"--repl-diskless-load", "swapdb", "--key-load-delay", "1000"}));
  TestServer fast(Args());
  RawConn p(primary.port()), r(slow.port()), f(fast.port());
  ASSERT_EQ(Call(p, {"DEBUG", "POPULATE", "20000", "k", "1000"}), "+OK\r\n");
  const int slow_pid = std::stoi(Info(r, "process_id", "server"));
  ASSERT_EQ(Call(r, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
  ASSERT_EQ(Call(f, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
  ASSERT_TRUE(WaitInfo(r, "loading", "1", 10000, "persistence"));
  kill(slow_pid, SIGSTOP);
  const bool dropped = WaitInfo(p, "connected_slaves", "1", 15000, "replication");
  const bool fast_up = WaitLinkUp(f);
  kill(slow_pid, SIGCONT);
  EXPECT_TRUE(dropped);
  EXPECT_TRUE(fast_up);
  const std::string log = LogOf(dir);
  EXPECT_NE(log.find("Disconnecting timedout replica (full sync): 127.0.0.1:" + std::to_string(slow.port())),
            std::string::npos);
  EXPECT_NE(log.find("Diskless rdb transfer, done reading from pipe, 1 replicas still up."), std::string::npos);
}

}  // namespace
}  // namespace ringkv::testing::replication_links_e2e_test
