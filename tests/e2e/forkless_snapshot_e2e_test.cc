// Snapshots without fork (snapshot-fork no) end to end: BGSAVE writes the
// dataset as it was when it started while clients go on changing it, forks
// nothing, shows its progress in INFO like a child, is stopped by FLUSHALL
// and SHUTDOWN without leaving a file behind, and a disk-based full sync
// made from it leaves the replica equal to its primary.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/persistence_test_util.h"

namespace ringkv::testing::forkless_snapshot_e2e_test {
namespace {

std::vector<std::string> Forkless(const TempDir& dir, std::vector<std::string> extra = {}) {
  std::vector<std::string> a = InDir(dir, {"--snapshot-fork", "no", "--enable-debug-command", "yes"});
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

// Every type, in four databases, some keys with a TTL.
void Fill(RawConn& c) {
  ASSERT_EQ(Call(c, {"DEBUG", "POPULATE", "20000", "k", "20"}), "+OK\r\n");
  for (int db = 0; db < 4; ++db) {
    ASSERT_EQ(Call(c, {"SELECT", std::to_string(db)}), "+OK\r\n");
    std::string batch;
    for (int i = 0; i < 300; ++i) {
      const std::string n = std::to_string(i);
      batch += Resp({"HSET", "h" + n, "f1", "v1", "f2", n});
      batch += Resp({"RPUSH", "l" + n, "a", "b", n});
      batch += Resp({"SADD", "s" + n, "1", "2", n});
      batch += Resp({"ZADD", "z" + n, "1", "a", "2", n});
      batch += Resp({"XADD", "x" + n, "1-1", "f", n});
      batch += Resp({"SET", "t" + n, n, "EX", "10000"});
    }
    c.Send(batch);
    for (int i = 0; i < 300 * 6; ++i) ASSERT_NE(c.ReadReply()[0], '-');
  }
  ASSERT_EQ(Call(c, {"SELECT", "0"}), "+OK\r\n");
}

// Changes of every kind, keys of the snapshot's instant among them.
void ChangeEverything(RawConn& c, int round) {
  const std::string r = std::to_string(round);
  std::string batch;
  for (int i = 0; i < 300; i += 7) {
    const std::string n = std::to_string(i);
    batch += Resp({"SET", "k:" + n, "changed" + r});
    batch += Resp({"DEL", "k:" + std::to_string(i + 1000)});
    batch += Resp({"APPEND", "k:" + std::to_string(i + 2000), "+"});
    batch += Resp({"EXPIRE", "k:" + std::to_string(i + 3000), "5000"});
    batch += Resp({"PERSIST", "t" + n});
    batch += Resp({"RENAME", "k:" + std::to_string(i + 4000 + round * 300), "renamed:" + r + ":" + n});
    batch += Resp({"HSET", "h" + n, "f3", r});
    batch += Resp({"LPOP", "l" + n});
    batch += Resp({"SREM", "s" + n, "1"});
    batch += Resp({"ZINCRBY", "z" + n, "5", "a"});
    batch += Resp({"XADD", "x" + n, "*", "f", r});
    batch += Resp({"SET", "new:" + r + ":" + n, "x"});
  }
  c.Send(batch);
  for (int i = 0; i < (300 + 6) / 7 * 12; ++i) (void)c.ReadReply();
}

TEST(ForklessSnapshotE2E, BgsaveIsTheDatasetAtItsStartWhileClientsChangeIt) {
  TempDir dir;
  std::string at_start;
  std::string pending_at_start;  // XPENDING's summary: count, ids, consumers (no idle times)
  {
    TestServer s(Forkless(dir));
    ASSERT_TRUE(s.ready());
    RawConn c(s.port());
    Fill(c);
    // 27,200 keys at 200 us a key: the save lasts over 5 s (the pace is
    // fixed at the start, as a forked child's copy of the setting).
    ASSERT_EQ(Call(c, {"CONFIG", "SET", "rdb-key-save-delay", "200"}), "+OK\r\n");
    // The digest in the same transaction as BGSAVE: the snapshot's instant.
    // A consumer group with pending entries: XACK and XCLAIM (write
    // commands with read lookups) change it during the save.
    ASSERT_EQ(Call(c, {"XGROUP", "CREATE", "x7", "g", "0"}), "+OK\r\n");
    ASSERT_EQ(Call(c, {"XADD", "x7", "2-1", "f", "v"}), "$3\r\n2-1\r\n");
    ASSERT_NE(Call(c, {"XREADGROUP", "GROUP", "g", "alice", "STREAMS", "x7", ">"})[0], '-');
    pending_at_start = Call(c, {"XPENDING", "x7", "g"});
    ASSERT_NE(pending_at_start.find("alice"), std::string::npos) << pending_at_start;
    ASSERT_EQ(Call(c, {"MULTI"}), "+OK\r\n");
    ASSERT_EQ(Call(c, {"BGSAVE"}), "+QUEUED\r\n");
    ASSERT_EQ(Call(c, {"DEBUG", "DIGEST"}), "+QUEUED\r\n");
    const std::string exec = Call(c, {"EXEC"});
    EXPECT_EQ(Call(c, {"XCLAIM", "x7", "g", "bob", "0", "1-1"})[0], '*');
    EXPECT_EQ(Call(c, {"XACK", "x7", "g", "2-1"}), ":1\r\n");
    ASSERT_NE(Call(c, {"XPENDING", "x7", "g"}), pending_at_start);
    ASSERT_NE(exec.find("+Background saving started"), std::string::npos) << exec;
    at_start = exec.substr(exec.rfind('+'));  // DEBUG DIGEST's status reply, as Digest() reads it
    ASSERT_EQ(at_start.size(), 43u) << exec;
    EXPECT_EQ(Info(c, "rdb_bgsave_in_progress"), "1");
    for (int round = 0; round < 5; ++round) {
      for (int db : {0, 1, 2, 3}) {
        ASSERT_EQ(Call(c, {"SELECT", std::to_string(db)}), "+OK\r\n");
        ChangeEverything(c, round);
      }
      ASSERT_EQ(Call(c, {"SELECT", "0"}), "+OK\r\n");
    }
    ASSERT_EQ(Call(c, {"SWAPDB", "1", "2"}), "+OK\r\n");
    ASSERT_EQ(Call(c, {"SELECT", "3"}), "+OK\r\n");
    ASSERT_EQ(Call(c, {"FLUSHDB"}), "+OK\r\n");
    ASSERT_EQ(Call(c, {"SELECT", "0"}), "+OK\r\n");
    EXPECT_EQ(Info(c, "rdb_bgsave_in_progress"), "1");  // still walking: the changes came first
    EXPECT_NE(Digest(c), at_start);
    EXPECT_EQ(Call(c, {"GET", "k:7"}), "$8\r\nchanged4\r\n");  // served meanwhile
    ASSERT_TRUE(WaitInfo(c, "rdb_bgsave_in_progress", "0", 30000));
    EXPECT_EQ(Info(c, "rdb_last_bgsave_status"), "ok");
    EXPECT_NE(Info(c, "rdb_changes_since_last_save"), "0");  // the changes after the start
    EXPECT_GT(std::stoll(Info(c, "rdb_last_cow_size")), 0);  // the keys written ahead of the walk
    EXPECT_EQ(Info(c, "total_forks", "stats"), "0");
    EXPECT_FALSE(std::filesystem::exists(dir / ("temp-bg-" + Info(c, "process_id", "server") + ".rdb")));
  }
  TestServer s(InDir(dir, {"--enable-debug-command", "yes"}));
  ASSERT_TRUE(s.ready());
  RawConn c(s.port());
  EXPECT_EQ(Digest(c), at_start);
  EXPECT_EQ(Call(c, {"XPENDING", "x7", "g"}), pending_at_start);  // the group as it was
}

TEST(ForklessSnapshotE2E, FlushallAndShutdownStopItAndLeaveNoFile) {
  TempDir dir;
  TestServer s(Forkless(dir));
  ASSERT_TRUE(s.ready());
  RawConn c(s.port());
  ASSERT_EQ(Call(c, {"DEBUG", "POPULATE", "5000"}), "+OK\r\n");
  ASSERT_EQ(Call(c, {"SAVE"}), "+OK\r\n");
  const std::string saved = ReadFile((dir / "dump.rdb"));
  const std::string temp = (dir / ("temp-bg-" + Info(c, "process_id", "server") + ".rdb"));
  ASSERT_EQ(Call(c, {"CONFIG", "SET", "rdb-key-save-delay", "1000"}), "+OK\r\n");
  ASSERT_EQ(Call(c, {"BGSAVE"}), "+Background saving started\r\n");
  EXPECT_EQ(Call(c, {"BGSAVE"}), "-ERR Background save already in progress\r\n");
  EXPECT_EQ(Call(c, {"SAVE"}), "-ERR Background save already in progress\r\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(Info(c, "rdb_bgsave_in_progress"), "1");
  EXPECT_GT(std::stoll(Info(c, "current_save_keys_processed")), 0);
  EXPECT_EQ(Info(c, "current_save_keys_total"), "5000");
  EXPECT_TRUE(std::filesystem::exists(temp));
  ASSERT_EQ(Call(c, {"FLUSHALL"}), "+OK\r\n");
  EXPECT_EQ(Info(c, "rdb_bgsave_in_progress"), "0");
  EXPECT_FALSE(std::filesystem::exists(temp));
  EXPECT_EQ(ReadFile((dir / "dump.rdb")), saved);  // no save points: FLUSHALL saved nothing
  ASSERT_EQ(Call(c, {"DEBUG", "POPULATE", "3000"}), "+OK\r\n");
  ASSERT_EQ(Call(c, {"BGSAVE"}), "+Background saving started\r\n");
  EXPECT_TRUE(std::filesystem::exists(temp));
  EXPECT_EQ(Call(c, {"SHUTDOWN", "NOSAVE"}), "<eof>");  // the connection closes
  int status = 0;
  ASSERT_TRUE(s.WaitExit(&status));
  EXPECT_FALSE(std::filesystem::exists(temp));
  EXPECT_EQ(ReadFile((dir / "dump.rdb")), saved);
}

// A full sync made from an in-process snapshot while the primary's clients
// write on: the replica ends equal to its primary.
void ExpectFullSyncUnderWritesLeavesTheReplicaEqual(bool diskless) {
  TempDir pdir, rdir;
  TestServer primary(Forkless(pdir, {"--save", "", "--repl-diskless-sync", diskless ? "yes" : "no",
                                     "--repl-diskless-sync-delay", "0", "--rdb-key-save-delay", "50"}));
  TestServer replica(InDir(rdir, {"--save", "", "--enable-debug-command", "yes"}));
  ASSERT_TRUE(primary.ready() && replica.ready());
  RawConn p(primary.port()), r(replica.port());
  Fill(p);
  ASSERT_EQ(Call(r, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
  ASSERT_TRUE(WaitInfo(p, "rdb_bgsave_in_progress", "1", 5000));
  // The primary's clients go on while the sync's snapshot is taken (27,200
  // keys at 50 us: over a second).
  for (int round = 0; round < 3; ++round) ChangeEverything(p, round);
  EXPECT_EQ(Info(p, "rdb_bgsave_in_progress"), "1");  // the changes came during the snapshot
  ASSERT_TRUE(WaitInfo(r, "master_link_status", "up", 30000, "replication"));
  EXPECT_EQ(Call(p, {"WAIT", "1", "5000"}), ":1\r\n");
  EXPECT_EQ(Digest(p), Digest(r));
  EXPECT_EQ(Info(p, "total_forks", "stats"), "0");
  // Diskless: no file was written.
  EXPECT_EQ(std::filesystem::exists(pdir / "dump.rdb"), !diskless);
}

TEST(ForklessSnapshotE2E, DiskFullSyncFromItLeavesTheReplicaEqual) {
  ExpectFullSyncUnderWritesLeavesTheReplicaEqual(/*diskless=*/false);
}

TEST(ForklessSnapshotE2E, DisklessFullSyncFromItLeavesTheReplicaEqual) {
  ExpectFullSyncUnderWritesLeavesTheReplicaEqual(/*diskless=*/true);
}

// BGREWRITEAOF without fork, its base in `preamble` (RDB) or commands:
// every write before, during and after the rewrite comes back on restart.
void ExpectAofRewriteKeepsEveryWrite(const std::string& preamble) {
  TempDir dir;
  std::string digest;
  {
    TestServer s(Forkless(dir, {"--appendonly", "yes", "--appendfsync", "everysec", "--aof-use-rdb-preamble", preamble,
                                "--aof-timestamp-enabled", "yes"}));
    ASSERT_TRUE(s.ready());
    RawConn c(s.port());
    Fill(c);
    ASSERT_EQ(Call(c, {"CONFIG", "SET", "rdb-key-save-delay", "100"}), "+OK\r\n");  // 27,200 keys: 2.7 s
    ASSERT_EQ(Call(c, {"BGREWRITEAOF"}), "+Background append only file rewriting started\r\n");
    EXPECT_EQ(Info(c, "aof_rewrite_in_progress"), "1");
    // Writes during the rewrite go to the new incremental file; the base is
    // the dataset at the start.
    for (int round = 0; round < 3; ++round) ChangeEverything(c, round);
    EXPECT_EQ(Info(c, "aof_rewrite_in_progress"), "1");
    ASSERT_TRUE(WaitInfo(c, "aof_rewrite_in_progress", "0", 30000));
    EXPECT_EQ(Info(c, "aof_last_bgrewrite_status"), "ok");
    EXPECT_EQ(Info(c, "total_forks", "stats"), "0");
    ChangeEverything(c, 3);  // after the rewrite too
    digest = Digest(c);
  }
  TestServer s(InDir(dir, {"--appendonly", "yes", "--enable-debug-command", "yes"}));
  ASSERT_TRUE(s.ready());
  RawConn c(s.port());
  EXPECT_EQ(Digest(c), digest);
}

TEST(ForklessSnapshotE2E, AofRewriteWithAnRdbBaseKeepsEveryWrite) { ExpectAofRewriteKeepsEveryWrite("yes"); }

TEST(ForklessSnapshotE2E, AofRewriteWithACommandBaseKeepsEveryWrite) { ExpectAofRewriteKeepsEveryWrite("no"); }

// The transfer's thread waits for room in a full pipe while its only
// replica reads nothing (a raw connection that asked for a diskless sync);
// the replica's going ends the transfer, and the thread with it, without
// stalling the primary.
TEST(ForklessSnapshotE2E, AReplicaLostMidTransferEndsItWhileThePipeIsFull) {
  TempDir pdir;
  TestServer primary(Forkless(pdir, {"--save", "", "--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0"}));
  ASSERT_TRUE(primary.ready());
  RawConn p(primary.port());
  ASSERT_EQ(Call(p, {"DEBUG", "POPULATE", "300000", "key", "200"}), "+OK\r\n");  // a ~60 MB image
  {
    auto replica = std::make_unique<RawConn>(primary.port());
    ASSERT_EQ(Call(*replica, {"REPLCONF", "capa", "eof"}), "+OK\r\n");
    replica->Send(Resp({"PSYNC", "?", "-1"}));  // and never reads: the socket, then the pipe, fill
    ASSERT_TRUE(WaitInfo(p, "rdb_bgsave_in_progress", "1", 5000));
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    EXPECT_EQ(Info(p, "rdb_bgsave_in_progress"), "1");  // held by the replica, not finished
    EXPECT_EQ(Call(p, {"PING"}), "+PONG\r\n");
  }  // the replica goes
  ASSERT_TRUE(WaitInfo(p, "rdb_bgsave_in_progress", "0", 10000));
  EXPECT_EQ(Call(p, {"SET", "after", "1"}), "+OK\r\n");
  EXPECT_EQ(Info(p, "connected_slaves", "replication"), "0");
}

}  // namespace
}  // namespace ringkv::testing::forkless_snapshot_e2e_test
