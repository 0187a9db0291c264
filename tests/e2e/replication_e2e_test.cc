// Replication end to end: ringkv pairs and chains on loopback, and mixed
// pairs with Debian's redis-server 7.0 in both roles -- full sync, the
// stream, partial resync after a dropped link, backlog overflow, promotion,
// WAIT / WAITAOF, restart with persisted replication info, and "acknowledged
// by WAIT means present after a failover".
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/persistence_test_util.h"

namespace ringkv::testing::replication_e2e_test {
namespace {

const char* kRedis = "/usr/bin/redis-server";


bool WaitLinkUp(RawConn& replica, int timeout_ms = 10000) {
  return WaitInfo(replica, "master_link_status", "up", timeout_ms);
}

// Polls until the primary lists an online replica (a diskless transfer ends
// on the primary's side when its fork child is reaped, a moment after the
// replica may already report its link up).
bool WaitReplicaOnline(RawConn& primary, int timeout_ms = 10000) {
  for (int i = 0; i < timeout_ms / 20; ++i) {
    if (Call(primary, {"INFO", "replication"}).find("state=online") != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// Polls until both servers hold the same data.
bool WaitSameDigest(RawConn& a, RawConn& b, int timeout_ms = 10000) {
  for (int i = 0; i < timeout_ms / 20; ++i) {
    if (Digest(a) == Digest(b)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

void WriteMix(RawConn& c, const std::string& tag) {
  ASSERT_EQ(Call(c, {"SET", tag + ":s", "v"}), "+OK\r\n");
  ASSERT_EQ(Call(c, {"SET", tag + ":ex", "v", "EX", "1000"}), "+OK\r\n");
  ASSERT_EQ(Call(c, {"INCRBYFLOAT", tag + ":f", "1.5"}), "$3\r\n1.5\r\n");
  ASSERT_EQ(Call(c, {"SELECT", "3"}), "+OK\r\n");
  ASSERT_EQ(Call(c, {"SET", tag + ":db3", "x"}), "+OK\r\n");
  ASSERT_EQ(Call(c, {"SELECT", "0"}), "+OK\r\n");
  ASSERT_EQ(Call(c, {"DEL", tag + ":s"}), ":1\r\n");
}

// Diskless sync (Redis's default) without its 5 s wait for more replicas.
std::vector<std::string> Args(std::vector<std::string> extra) {
  std::vector<std::string> a = {"--save", "", "--enable-debug-command", "yes", "--repl-diskless-sync-delay", "0"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

TEST(ReplicationE2E, FullSyncThenStreamThenWait) {
  TestServer primary(Args({}));
  TestServer replica(Args({}));
  ASSERT_TRUE(primary.ready() && replica.ready());
  RawConn p(primary.port()), r(replica.port());
  ASSERT_EQ(Call(p, {"DEBUG", "POPULATE", "10000"}), "+OK\r\n");
  EXPECT_EQ(Call(p, {"WAIT", "1", "50"}), ":0\r\n");  // nobody to acknowledge
  EXPECT_EQ(Call(r, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
  ASSERT_TRUE(WaitLinkUp(r));
  WriteMix(p, "a");
  EXPECT_EQ(Call(p, {"WAIT", "1", "0"}), ":1\r\n");
  EXPECT_EQ(Call(p, {"WAIT", "2", "100"}), ":1\r\n");  // only one replica: the timeout answers
  EXPECT_TRUE(WaitSameDigest(p, r));
  EXPECT_EQ(Info(p, "connected_slaves", "replication"), "1");
  EXPECT_EQ(Info(p, "sync_full", "stats"), "1");
  EXPECT_EQ(Info(r, "role", "replication"), "slave");
  EXPECT_EQ(Call(r, {"SET", "x", "1"}), "-READONLY You can't write against a read only replica.\r\n");
  EXPECT_EQ(Call(r, {"WAIT", "1", "0"}).rfind("-ERR WAIT cannot be used with replica instances", 0), 0u);
  EXPECT_EQ(Info(p, "master_repl_offset", "replication"), Info(r, "master_repl_offset", "replication"));
}

bool HasFile(const TestServer& s, const std::string& name) {
  return std::filesystem::exists(std::filesystem::path(s.dir()) / name);
}

// Every combination of the primary's transfer (a file, or streamed from the
// fork child) and the replica's load (through a file, or parsed straight
// from the socket into a staging keyspace swapped in at the end).
TEST(ReplicationE2E, FullSyncInEveryTransferAndLoadMode) {
  struct Mode {
    const char* sync;
    const char* load;
  };
  for (Mode m : {Mode{"no", "disabled"}, Mode{"yes", "disabled"}, Mode{"yes", "swapdb"}, Mode{"no", "swapdb"},
                 Mode{"yes", "on-empty-db"}}) {
    SCOPED_TRACE(std::string("repl-diskless-sync ") + m.sync + ", repl-diskless-load " + m.load);
    TestServer primary(Args({"--repl-diskless-sync", m.sync}));
    TestServer replica(Args({"--repl-diskless-load", m.load}));
    ASSERT_TRUE(primary.ready() && replica.ready());
    RawConn p(primary.port()), r(replica.port());
    ASSERT_EQ(Call(p, {"DEBUG", "POPULATE", "30000", "key", "100"}), "+OK\r\n");
    WriteMix(p, "mode");
    ASSERT_EQ(Call(r, {"SET", "replaced-by-the-sync", "1"}), "+OK\r\n");
    ASSERT_EQ(Call(r, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
    ASSERT_TRUE(WaitLinkUp(r));
    EXPECT_EQ(Call(r, {"EXISTS", "replaced-by-the-sync"}), ":0\r\n");
    WriteMix(p, "after");  // the stream follows the payload in both forms
    EXPECT_EQ(Call(p, {"WAIT", "1", "5000"}), ":1\r\n");
    EXPECT_TRUE(WaitSameDigest(p, r));
    EXPECT_EQ(Call(r, {"DBSIZE"}), Call(p, {"DBSIZE"}));
    // Where the RDB went: a file on the primary only for a disk transfer; on
    // the replica, a file only when it loaded through one.
    const bool disk_transfer = std::string(m.sync) == "no";
    const bool socket_load = std::string(m.load) == "swapdb";  // on-empty-db: we held a key
    EXPECT_EQ(HasFile(primary, "dump.rdb"), disk_transfer);
    EXPECT_EQ(HasFile(replica, "dump.rdb"), !socket_load);
    EXPECT_EQ(Info(r, "async_loading", "persistence"), "0");
  }
}

// Replicas asking within repl-diskless-sync-delay share one fork child, and
// repl-diskless-sync-max-replicas starts it as soon as that many asked.
TEST(ReplicationE2E, DisklessDelayGathersReplicasIntoOneTransfer) {
  TestServer primary(Args({"--repl-diskless-sync-delay", "60", "--repl-diskless-sync-max-replicas", "2"}));
  TestServer r1(Args({})), r2(Args({}));
  ASSERT_TRUE(primary.ready() && r1.ready() && r2.ready());
  RawConn p(primary.port()), c1(r1.port()), c2(r2.port());
  ASSERT_EQ(Call(p, {"DEBUG", "POPULATE", "5000"}), "+OK\r\n");
  const std::string forks_before = Info(p, "total_forks", "stats");
  ASSERT_EQ(Call(c1, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(Info(c1, "master_link_status", "replication"), "down");  // waiting for a second replica
  EXPECT_EQ(Info(p, "total_forks", "stats"), forks_before);
  ASSERT_EQ(Call(c2, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
  ASSERT_TRUE(WaitLinkUp(c1));
  ASSERT_TRUE(WaitLinkUp(c2));
  EXPECT_EQ(std::stoi(Info(p, "total_forks", "stats")), std::stoi(forks_before) + 1);
  EXPECT_EQ(Info(p, "sync_full", "stats"), "2");
  ASSERT_EQ(Call(p, {"SET", "k", "v"}), "+OK\r\n");
  EXPECT_EQ(Call(p, {"WAIT", "2", "5000"}), ":2\r\n");
  EXPECT_TRUE(WaitSameDigest(p, c1));
  EXPECT_TRUE(WaitSameDigest(p, c2));
}

// A replica that goes away mid-transfer stops the child (nobody reads the
// pipe any more); the next replica gets a transfer of its own.
TEST(ReplicationE2E, DisklessTransferStopsWhenItsReplicaLeaves) {
  TestServer primary(Args({"--rdbcompression", "no"}));
  ASSERT_TRUE(primary.ready());
  RawConn p(primary.port());
  ASSERT_EQ(Call(p, {"DEBUG", "POPULATE", "100000", "key", "200"}), "+OK\r\n");  // ~20 MB of RDB
  {
    // A fake replica that asks for a full sync and then reads nothing.
    RawConn fake(primary.port());
    ASSERT_EQ(Call(fake, {"REPLCONF", "capa", "eof", "capa", "psync2"}), "+OK\r\n");
    ASSERT_TRUE(fake.Send(Resp({"PSYNC", "?", "-1"})));
    ASSERT_TRUE(WaitInfo(p, "rdb_bgsave_in_progress", "1", 5000, "persistence"));
  }  // closed
  ASSERT_TRUE(WaitInfo(p, "rdb_bgsave_in_progress", "0", 10000, "persistence"));
  EXPECT_EQ(Info(p, "connected_slaves", "replication"), "0");
  TestServer replica(Args({}));
  RawConn r(replica.port());
  ASSERT_EQ(Call(r, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
  ASSERT_TRUE(WaitLinkUp(r, 60000));
  EXPECT_TRUE(WaitSameDigest(p, r, 20000));
}

// With I/O threads, replica connections live on other threads than the one
// writing the backlog: they send from backlog blocks the main thread may be
// trimming meanwhile (reference counted), and a diskless payload's blocks the
// same way. Run under ASan in scripts/test.sh.
TEST(ReplicationE2E, ReplicasOnIoThreadsSendFromSharedBlocks) {
  TestServer primary(Args({"--io-threads", "3", "--repl-backlog-size", "16384"}));
  TestServer r1(Args({})), r2(Args({}));
  ASSERT_TRUE(primary.ready() && r1.ready() && r2.ready());
  RawConn p(primary.port()), c1(r1.port()), c2(r2.port());
  ASSERT_EQ(Call(p, {"DEBUG", "POPULATE", "20000", "key", "64"}), "+OK\r\n");
  ASSERT_EQ(Call(c1, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
  ASSERT_EQ(Call(c2, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
  ASSERT_TRUE(WaitLinkUp(c1));
  ASSERT_TRUE(WaitLinkUp(c2));
  std::string batch;  // far more than the 16 KB backlog, pipelined
  for (int i = 0; i < 20000; ++i) batch += Resp({"SET", "s" + std::to_string(i % 3000), std::string(100, 'a' + i % 26)});
  ASSERT_TRUE(p.Send(batch));
  for (int i = 0; i < 20000; ++i) ASSERT_EQ(p.ReadReply(), "+OK\r\n");
  EXPECT_EQ(Call(p, {"WAIT", "2", "10000"}), ":2\r\n");
  EXPECT_TRUE(WaitSameDigest(p, c1));
  EXPECT_TRUE(WaitSameDigest(p, c2));
}

// One line of a raw replication link, without CRLF; keep-alive newlines skipped.
std::string ReadLinkLine(RawConn& c) {
  std::string line;
  while (true) {
    const std::string ch = c.ReadN(1);
    if (ch.empty()) return line;
    if (ch == "\n") {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (!line.empty()) return line;
      continue;
    }
    line += ch;
  }
}

// A diskless payload that takes seconds to deliver (the replica reads
// slowly) is exactly "$EOF:<mark>", an RDB redis-check-rdb accepts, and the
// mark: the once-a-second keep-alive newline never lands inside it.
TEST(ReplicationE2E, SlowDisklessPayloadIsByteExact) {
  TestServer primary(Args({"--rdbcompression", "no"}));
  ASSERT_TRUE(primary.ready());
  RawConn p(primary.port());
  ASSERT_EQ(Call(p, {"DEBUG", "POPULATE", "100000", "key", "200"}), "+OK\r\n");  // ~20 MB
  RawConn fake(primary.port());
  ASSERT_TRUE(fake.Send(Resp({"REPLCONF", "capa", "eof", "capa", "psync2"}) + Resp({"PSYNC", "?", "-1"})));
  EXPECT_EQ(ReadLinkLine(fake), "+OK");
  EXPECT_EQ(ReadLinkLine(fake).rfind("+FULLRESYNC ", 0), 0u);
  const std::string header = ReadLinkLine(fake);
  ASSERT_EQ(header.size(), 45u) << header;
  ASSERT_EQ(header.rfind("$EOF:", 0), 0u);
  const std::string mark = header.substr(5);
  std::string payload;
  for (int i = 0; i < 3; ++i) {  // ~2.4 s of slow reading: crosses second boundaries
    payload += fake.ReadN(256 * 1024);
    std::this_thread::sleep_for(std::chrono::milliseconds(800));
  }
  while (payload.size() < 40 || payload.compare(payload.size() - 40, 40, mark) != 0) {
    const std::string more = fake.ReadSome(64 * 1024);
    ASSERT_FALSE(more.empty()) << "the payload never ended with its mark";
    payload += more;
    ASSERT_LT(payload.size(), 200u << 20);
  }
  payload.resize(payload.size() - 40);
  EXPECT_EQ(payload.rfind("REDIS0010", 0), 0u);
  if (HaveTool("redis-check-rdb")) {
    const std::string path = primary.dir() + "/streamed.rdb";
    FILE* f = fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(fwrite(payload.data(), 1, payload.size(), f), payload.size());
    fclose(f);
    EXPECT_EQ(RunShell("redis-check-rdb " + path + " > /dev/null 2>&1"), 0);
  }
}

// A disk-based full sync sends every replica of the same save the file
// from one shared window (repl::SharedSnapshot): three replicas attach to
// one BGSAVE; two read at once, one reads nothing for a while (it leaves
// the window and reads on its own). Each receives the file byte for byte,
// then the stream. (How often the file is read depends on timing: that is
// measured by perf/disk_sync_read.sh, docs/performance.md 8.5.)
TEST(ReplicationE2E, DiskSyncSendsEveryReplicaTheFileThenTheStream) {
  TestServer primary(Args({"--repl-diskless-sync", "no", "--rdbcompression", "no"}));
  ASSERT_TRUE(primary.ready());
  RawConn p(primary.port());
  ASSERT_EQ(Call(p, {"DEBUG", "POPULATE", "250000", "key", "120"}), "+OK\r\n");  // ~35 MB
  std::vector<std::unique_ptr<RawConn>> fakes;
  for (int i = 0; i < 3; ++i) {
    fakes.push_back(std::make_unique<RawConn>(primary.port()));
    ASSERT_TRUE(fakes.back()->Send(Resp({"REPLCONF", "capa", "psync2"}) + Resp({"PSYNC", "?", "-1"})));
  }
  std::vector<size_t> sizes;
  for (auto& f : fakes) {
    EXPECT_EQ(ReadLinkLine(*f), "+OK");
    EXPECT_EQ(ReadLinkLine(*f).rfind("+FULLRESYNC ", 0), 0u);
    const std::string header = ReadLinkLine(*f);  // after the save: "$<size>"
    ASSERT_EQ(header[0], '$') << header;
    sizes.push_back(std::stoull(header.substr(1)));
  }
  ASSERT_EQ(sizes[0], sizes[1]);
  ASSERT_EQ(sizes[0], sizes[2]);
  const size_t size = sizes[0];
  ASSERT_GT(size, 30u << 20);
  std::vector<std::string> payloads(3);
  std::vector<std::thread> readers;
  for (int i = 0; i < 2; ++i) readers.emplace_back([&, i] { payloads[i] = fakes[i]->ReadN(size); });
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // the third reads nothing meanwhile
  payloads[2] = fakes[2]->ReadN(size);
  for (auto& t : readers) t.join();
  const std::string file = ReadFile(primary.dir() + "/dump.rdb");
  ASSERT_EQ(file.size(), size);
  for (int i = 0; i < 3; ++i) {
    SCOPED_TRACE("replica " + std::to_string(i));
    ASSERT_EQ(payloads[i].size(), size);
    EXPECT_TRUE(payloads[i] == file) << "the payload differs from the file";
  }
  // Then the stream, to each of them.
  ASSERT_EQ(Call(p, {"SET", "after-the-sync", "1"}), "+OK\r\n");
  const std::string set = Resp({"SET", "after-the-sync", "1"});
  for (auto& f : fakes) {
    std::string got;
    while (got.find(set) == std::string::npos && got.size() < 4096) {
      const std::string more = f->ReadN(1);
      ASSERT_FALSE(more.empty()) << "no stream after the payload: " << got;
      got += more;
    }
    EXPECT_NE(got.find(set), std::string::npos);
  }
  EXPECT_EQ(Info(p, "connected_slaves", "replication"), "3");
}

TEST(ReplicationE2E, PartialResyncAfterTheLinkDrops) {
  TestServer primary(Args({}));
  TestServer replica(Args({}));
  ASSERT_TRUE(primary.ready() && replica.ready());
  RawConn p(primary.port()), r(replica.port());
  ASSERT_EQ(Call(r, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
  ASSERT_TRUE(WaitLinkUp(r));
  WriteMix(p, "before");
  EXPECT_EQ(Call(p, {"CLIENT", "KILL", "TYPE", "replica"}), ":1\r\n");
  WriteMix(p, "while-down");
  ASSERT_TRUE(WaitInfo(p, "sync_partial_ok", "1"));
  EXPECT_EQ(Info(p, "sync_partial_ok", "stats"), "1");
  EXPECT_EQ(Info(p, "sync_full", "stats"), "1");
  EXPECT_TRUE(WaitSameDigest(p, r));
}

TEST(ReplicationE2E, BacklogOverflowMeansAFullResync) {
  TestServer primary(Args({"--repl-backlog-size", "16384"}));
  TestServer replica(Args({}));
  ASSERT_TRUE(primary.ready() && replica.ready());
  RawConn p(primary.port()), r(replica.port());
  ASSERT_EQ(Call(r, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
  ASSERT_TRUE(WaitLinkUp(r));
  EXPECT_EQ(Call(p, {"CLIENT", "KILL", "TYPE", "replica"}), ":1\r\n");
  std::string batch;  // ~1 MB while the replica is away: far past the 16 KB backlog
  for (int i = 0; i < 5000; ++i) batch += Resp({"SET", "k" + std::to_string(i), std::string(200, 'x')});
  p.Send(batch);
  for (int i = 0; i < 5000; ++i) ASSERT_EQ(p.ReadReply(), "+OK\r\n");
  for (int i = 0; i < 500 && Info(p, "sync_full", "stats") != "2"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(Info(p, "sync_full", "stats"), "2");
  EXPECT_TRUE(WaitSameDigest(p, r));
}

TEST(ReplicationE2E, ChainAndPromotionKeepPartialResync) {
  TestServer a(Args({})), b(Args({})), c(Args({}));
  ASSERT_TRUE(a.ready() && b.ready() && c.ready());
  RawConn ca(a.port()), cb(b.port()), cc(c.port());
  ASSERT_EQ(Call(cb, {"REPLICAOF", "127.0.0.1", std::to_string(a.port())}), "+OK\r\n");
  ASSERT_TRUE(WaitLinkUp(cb));
  ASSERT_EQ(Call(cc, {"REPLICAOF", "127.0.0.1", std::to_string(b.port())}), "+OK\r\n");
  ASSERT_TRUE(WaitLinkUp(cc));
  WriteMix(ca, "chain");
  EXPECT_EQ(Call(ca, {"WAIT", "1", "0"}), ":1\r\n");
  EXPECT_TRUE(WaitSameDigest(ca, cc));  // through the middle replica
  a.Kill();
  EXPECT_EQ(Call(cb, {"REPLICAOF", "NO", "ONE"}), "+OK\r\n");
  EXPECT_EQ(Info(cb, "role", "replication"), "master");
  ASSERT_EQ(Call(cb, {"SET", "after-promotion", "1"}), "+OK\r\n");
  EXPECT_EQ(Call(cb, {"WAIT", "1", "5000"}), ":1\r\n");
  EXPECT_EQ(Call(cc, {"GET", "after-promotion"}), "$1\r\n1\r\n");
  EXPECT_EQ(Info(cb, "sync_partial_ok", "stats"), "1");  // c continued under the new id
  EXPECT_TRUE(WaitSameDigest(cb, cc));
}

TEST(ReplicationE2E, WaitaofCountsReplicaFsyncs) {
  TestServer primary(Args({"--appendonly", "yes", "--appendfsync", "always"}));
  TestServer replica(Args({"--appendonly", "yes", "--appendfsync", "always"}));
  TestServer plain(Args({}));
  ASSERT_TRUE(primary.ready() && replica.ready() && plain.ready());
  RawConn p(primary.port()), r(replica.port()), n(plain.port());
  ASSERT_EQ(Call(r, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
  ASSERT_TRUE(WaitLinkUp(r));
  ASSERT_TRUE(WaitInfo(r, "aof_rewrite_in_progress", "0"));
  ASSERT_EQ(Call(p, {"SET", "k", "v"}), "+OK\r\n");
  EXPECT_EQ(Call(p, {"WAITAOF", "1", "1", "5000"}), "*2\r\n:1\r\n:1\r\n");
  EXPECT_EQ(Call(r, {"WAITAOF", "0", "0", "0"}).rfind("-ERR WAITAOF cannot be used with replica instances", 0), 0u);
  // A replica without an AOF never reports an fsync: the timeout answers.
  ASSERT_EQ(Call(n, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
  ASSERT_TRUE(WaitLinkUp(n));
  ASSERT_EQ(Call(p, {"SET", "k2", "v"}), "+OK\r\n");
  EXPECT_EQ(Call(p, {"WAITAOF", "1", "2", "300"}), "*2\r\n:1\r\n:1\r\n");
  EXPECT_EQ(Call(p, {"WAIT", "2", "5000"}), ":2\r\n");
}

TEST(ReplicationE2E, ReplicaRestartResumesWithPsync) {
  TempDir dir;
  TestServer primary(Args({}));
  ASSERT_TRUE(primary.ready());
  RawConn p(primary.port());
  const std::vector<std::string> replica_args =
      Args({"--dir", dir.path(), "--replicaof", "127.0.0.1 " + std::to_string(primary.port())});
  {
    TestServer replica(replica_args);
    ASSERT_TRUE(replica.ready());
    RawConn r(replica.port());
    ASSERT_TRUE(WaitLinkUp(r));
    WriteMix(p, "first");
    EXPECT_EQ(Call(p, {"WAIT", "1", "0"}), ":1\r\n");
    EXPECT_EQ(Call(r, {"SAVE"}), "+OK\r\n");  // the file records replid and offset
  }
  WriteMix(p, "while-restarting");
  TestServer replica(replica_args);
  ASSERT_TRUE(replica.ready());
  RawConn r(replica.port());
  ASSERT_TRUE(WaitLinkUp(r));
  EXPECT_TRUE(WaitSameDigest(p, r));
  EXPECT_EQ(Info(p, "sync_full", "stats"), "1");
  EXPECT_EQ(Info(p, "sync_partial_ok", "stats"), "1");
}

// Under write load, every write acknowledged by WAIT 1 is on the replica
// after the primary is killed and the replica promoted. Several rounds.
TEST(ReplicationE2E, AcknowledgedWritesSurviveFailover) {
  std::mt19937 rng(std::random_device{}());
  for (int round = 0; round < 3; ++round) {
    TestServer primary(Args({}));
    TestServer replica(Args({}));
    ASSERT_TRUE(primary.ready() && replica.ready());
    RawConn r(replica.port());
    ASSERT_EQ(Call(r, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
    ASSERT_TRUE(WaitLinkUp(r));
    std::vector<std::vector<int>> acked(3);
    std::vector<std::thread> writers;
    for (int w = 0; w < 3; ++w) {
      writers.emplace_back([&, w] {
        RawConn c(primary.port());
        for (int i = 0;; ++i) {
          const std::string key = "w" + std::to_string(w) + ":" + std::to_string(i);
          if (!c.Send(Resp({"SET", key, "v"}) + Resp({"WAIT", "1", "0"}))) return;
          if (c.ReadReply() != "+OK\r\n") return;
          if (c.ReadReply() != ":1\r\n") return;
          acked[w].push_back(i);
        }
      });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<int>(200, 600)(rng)));
    primary.Kill();
    for (auto& t : writers) t.join();
    EXPECT_EQ(Call(r, {"REPLICAOF", "NO", "ONE"}), "+OK\r\n");
    size_t total = 0, missing = 0;
    for (int w = 0; w < 3; ++w) {
      std::string batch;
      for (int i : acked[w]) batch += Resp({"EXISTS", "w" + std::to_string(w) + ":" + std::to_string(i)});
      r.Send(batch);
      for (size_t k = 0; k < acked[w].size(); ++k) missing += r.ReadReply() == ":1\r\n" ? 0 : 1;
      total += acked[w].size();
    }
    EXPECT_GT(total, 10u);
    EXPECT_EQ(missing, 0u) << "round " << round << ": " << missing << " of " << total << " acknowledged writes lost";
  }
}

// `replica` replicates `primary` while a client writes to the primary; the
// link is killed once mid-load (a partial resync must follow); at the end
// both hold the same data.
void ReplicateUnderLoad(TestServer& primary, TestServer& replica) {
  RawConn p(primary.port()), r(replica.port());
  ASSERT_EQ(Call(p, {"DEBUG", "POPULATE", "20000", "key", "50"}), "+OK\r\n");
  ASSERT_EQ(Call(r, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
  std::atomic<bool> stop{false};
  std::thread load([&] {  // writes during the sync and after
    RawConn c(primary.port());
    for (int i = 0; !stop; ++i) Call(c, {"SET", "load:" + std::to_string(i % 5000), std::to_string(i)});
  });
  ASSERT_TRUE(WaitLinkUp(r));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(Call(p, {"CLIENT", "KILL", "TYPE", "replica"}), ":1\r\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  stop = true;
  load.join();
  WriteMix(p, "final");
  EXPECT_EQ(Call(p, {"WAIT", "1", "5000"}), ":1\r\n");
  EXPECT_TRUE(WaitSameDigest(p, r));
  EXPECT_EQ(Info(p, "sync_partial_ok", "stats"), "1");
}

// Both primaries keep 64 MB of backlog: the writes made while the link is
// down (~1 s) must fit, or the resync would rightly be a full one.
TEST(ReplicationE2E, RedisServerAsReplicaOfRingkv) {
  if (!HaveTool("redis-server")) GTEST_SKIP() << "redis-server not installed";
  TestServer primary(Args({"--repl-backlog-size", "64mb"}));
  TestServer redis({"--enable-debug-command", "yes"}, kRedis);
  ASSERT_TRUE(primary.ready() && redis.ready());
  ReplicateUnderLoad(primary, redis);
}

TEST(ReplicationE2E, RedisServerAsReplicaOfRingkvDiskTransfer) {
  if (!HaveTool("redis-server")) GTEST_SKIP() << "redis-server not installed";
  TestServer primary(Args({"--repl-backlog-size", "64mb", "--repl-diskless-sync", "no"}));
  TestServer redis({"--enable-debug-command", "yes", "--repl-diskless-load", "swapdb"}, kRedis);
  ASSERT_TRUE(primary.ready() && redis.ready());
  ReplicateUnderLoad(primary, redis);
}

// redis-server streams its payload ("$EOF:" form) by default; ringkv loads
// it through a file, or parses it from the socket.
TEST(ReplicationE2E, RingkvAsReplicaOfRedisServer) {
  if (!HaveTool("redis-server")) GTEST_SKIP() << "redis-server not installed";
  TestServer redis({"--enable-debug-command", "yes", "--repl-backlog-size", "64mb", "--repl-diskless-sync-delay", "0"},
                   kRedis);
  TestServer replica(Args({}));
  ASSERT_TRUE(redis.ready() && replica.ready());
  ReplicateUnderLoad(redis, replica);  // redis-server counts our ACKs in WAIT
}

TEST(ReplicationE2E, RingkvAsReplicaOfRedisServerLoadingFromTheSocket) {
  if (!HaveTool("redis-server")) GTEST_SKIP() << "redis-server not installed";
  for (const char* diskless : {"yes", "no"}) {  // "$EOF:" and "$<len>" payloads
    SCOPED_TRACE(std::string("redis-server repl-diskless-sync ") + diskless);
    TestServer redis({"--enable-debug-command", "yes", "--repl-backlog-size", "64mb", "--repl-diskless-sync", diskless,
                      "--repl-diskless-sync-delay", "0"},
                     kRedis);
    TestServer replica(Args({"--repl-diskless-load", "swapdb"}));
    ASSERT_TRUE(redis.ready() && replica.ready());
    ReplicateUnderLoad(redis, replica);
    EXPECT_FALSE(HasFile(replica, "dump.rdb"));
  }
}

TEST(ReplicationE2E, MinReplicasAndStaleDataGates) {
  TestServer primary(Args({"--min-replicas-to-write", "1", "--min-replicas-max-lag", "10"}));
  TestServer replica(Args({"--replica-serve-stale-data", "no"}));
  ASSERT_TRUE(primary.ready() && replica.ready());
  RawConn p(primary.port()), r(replica.port());
  EXPECT_EQ(Call(p, {"SET", "k", "v"}), "-NOREPLICAS Not enough good replicas to write.\r\n");
  EXPECT_EQ(Call(p, {"GET", "k"}), "$-1\r\n");  // reads are fine
  ASSERT_EQ(Call(r, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
  ASSERT_TRUE(WaitLinkUp(r));
  ASSERT_TRUE(WaitReplicaOnline(p));
  EXPECT_EQ(Call(p, {"SET", "k", "v"}), "+OK\r\n");  // one good replica now
  // The replica's link goes down (its primary moves to a closed port).
  ASSERT_EQ(Call(r, {"REPLICAOF", "127.0.0.1", std::to_string(FreePort())}), "+OK\r\n");
  EXPECT_EQ(Call(r, {"GET", "k"}),
            "-MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.\r\n");
  EXPECT_EQ(Call(r, {"PING"}).rfind("-MASTERDOWN", 0), 0u);
  EXPECT_EQ(Info(r, "master_link_status", "replication"), "down");  // INFO is allowed (stale flag)
}

TEST(ReplicationE2E, BacklogFreedAfterTtlWithoutReplicas) {
  TestServer primary(Args({"--repl-backlog-ttl", "1"}));
  TestServer replica(Args({}));
  ASSERT_TRUE(primary.ready() && replica.ready());
  RawConn p(primary.port()), r(replica.port());
  ASSERT_EQ(Call(r, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
  ASSERT_TRUE(WaitLinkUp(r));
  EXPECT_EQ(Info(p, "repl_backlog_active", "replication"), "1");
  const std::string replid = Info(p, "master_replid", "replication");
  ASSERT_EQ(Call(r, {"REPLICAOF", "NO", "ONE"}), "+OK\r\n");
  EXPECT_TRUE(WaitInfo(p, "repl_backlog_active", "0", 5000, "replication"));
  EXPECT_NE(Info(p, "master_replid", "replication"), replid);  // a new history starts
}

TEST(ReplicationE2E, FailoverHandsOverWithoutLosingWrites) {
  TestServer a(Args({})), b(Args({}));
  ASSERT_TRUE(a.ready() && b.ready());
  RawConn ca(a.port()), cb(b.port());
  EXPECT_EQ(Call(ca, {"FAILOVER"}), "-ERR FAILOVER requires connected replicas.\r\n");
  EXPECT_EQ(Call(ca, {"FAILOVER", "ABORT"}), "-ERR No failover in progress.\r\n");
  EXPECT_EQ(Call(ca, {"FAILOVER", "TO", "127.0.0.1", "1", "FORCE"}),
            "-ERR FAILOVER with force option requires both a timeout and target HOST and IP.\r\n");
  ASSERT_EQ(Call(cb, {"REPLICAOF", "127.0.0.1", std::to_string(a.port())}), "+OK\r\n");
  ASSERT_TRUE(WaitLinkUp(cb));
  ASSERT_TRUE(WaitReplicaOnline(ca));
  EXPECT_EQ(Call(cb, {"FAILOVER"}), "-ERR FAILOVER is not valid when server is a replica.\r\n");
  EXPECT_EQ(Call(ca, {"FAILOVER", "TO", "127.0.0.1", "1"}), "-ERR FAILOVER target HOST and PORT is not a replica.\r\n");
  WriteMix(ca, "before");
  EXPECT_EQ(Call(ca, {"FAILOVER", "TO", "127.0.0.1", std::to_string(b.port()), "TIMEOUT", "5000"}), "+OK\r\n");
  ASSERT_TRUE(WaitInfo(cb, "role", "master", 10000, "replication"));
  ASSERT_TRUE(WaitInfo(ca, "master_link_status", "up", 10000, "replication"));
  EXPECT_EQ(Info(ca, "master_failover_state", "replication"), "no-failover");
  EXPECT_EQ(Info(cb, "sync_partial_ok", "stats"), "1");  // the old primary continued, no full sync
  ASSERT_EQ(Call(cb, {"SET", "after", "1"}), "+OK\r\n");
  EXPECT_EQ(Call(cb, {"WAIT", "1", "5000"}), ":1\r\n");
  EXPECT_TRUE(WaitSameDigest(ca, cb));
}

// A target that refuses PSYNC FAILOVER (its ACL denies PSYNC) aborts the
// failover: the primary stays the primary, logs Redis's reason, and its
// replica comes back by partial resync once PSYNC is allowed again.
TEST(ReplicationE2E, FailoverAbortedWhenTheTargetRejectsPsync) {
  TempDir dir;
  const std::string log_path = dir / "a.log";
  TestServer a(Args({"--logfile", log_path})), b(Args({}));
  ASSERT_TRUE(a.ready() && b.ready());
  RawConn ca(a.port()), cb(b.port());
  ASSERT_EQ(Call(cb, {"REPLICAOF", "127.0.0.1", std::to_string(a.port())}), "+OK\r\n");
  ASSERT_TRUE(WaitLinkUp(cb));
  ASSERT_TRUE(WaitReplicaOnline(ca));
  ASSERT_EQ(Call(cb, {"ACL", "SETUSER", "default", "-psync"}), "+OK\r\n");
  EXPECT_EQ(Call(ca, {"FAILOVER", "TO", "127.0.0.1", std::to_string(b.port())}), "+OK\r\n");
  ASSERT_TRUE(WaitInfo(ca, "master_failover_state", "no-failover", 10000, "replication"));
  EXPECT_EQ(Info(ca, "role", "replication"), "master");
  EXPECT_NE(ReadFile(log_path).find("FAILOVER aborted: Failover target rejected psync request"), std::string::npos)
      << ReadFile(log_path);
  ASSERT_EQ(Call(cb, {"ACL", "SETUSER", "default", "+psync"}), "+OK\r\n");
  ASSERT_TRUE(WaitInfo(cb, "master_link_status", "up", 10000, "replication"));
  ASSERT_EQ(Call(ca, {"SET", "after", "1"}), "+OK\r\n");
  EXPECT_EQ(Call(ca, {"WAIT", "1", "5000"}), ":1\r\n");
  EXPECT_TRUE(WaitSameDigest(ca, cb));
}

TEST(ReplicationE2E, FailoverInteropWithRedisServer) {
  if (!HaveTool("redis-server")) GTEST_SKIP() << "redis-server not installed";
  TestServer k(Args({}));
  TestServer redis({"--enable-debug-command", "yes"}, kRedis);
  ASSERT_TRUE(k.ready() && redis.ready());
  RawConn ck(k.port()), cr(redis.port());
  ASSERT_EQ(Call(cr, {"REPLICAOF", "127.0.0.1", std::to_string(k.port())}), "+OK\r\n");
  ASSERT_TRUE(WaitLinkUp(cr));
  ASSERT_TRUE(WaitReplicaOnline(ck));
  WriteMix(ck, "k");
  // ringkv hands over to redis-server ...
  EXPECT_EQ(Call(ck, {"FAILOVER", "TO", "127.0.0.1", std::to_string(redis.port())}), "+OK\r\n");
  ASSERT_TRUE(WaitInfo(cr, "role", "master", 10000, "replication"));
  ASSERT_TRUE(WaitInfo(ck, "master_link_status", "up", 10000, "replication"));
  WriteMix(cr, "r");
  EXPECT_EQ(Call(cr, {"WAIT", "1", "5000"}), ":1\r\n");
  EXPECT_TRUE(WaitSameDigest(ck, cr));
  // ... and redis-server hands back to ringkv (it sends PSYNC ... FAILOVER).
  EXPECT_EQ(Call(cr, {"FAILOVER", "TO", "127.0.0.1", std::to_string(k.port())}), "+OK\r\n");
  ASSERT_TRUE(WaitInfo(ck, "role", "master", 10000, "replication"));
  ASSERT_TRUE(WaitInfo(cr, "master_link_status", "up", 10000, "replication"));
  WriteMix(ck, "k2");
  EXPECT_EQ(Call(ck, {"WAIT", "1", "5000"}), ":1\r\n");
  EXPECT_TRUE(WaitSameDigest(ck, cr));
}

TEST(ReplicationE2E, HandshakeOnlyConnectionsLeaveNothingBehind) {
  TestServer primary(Args({}));
  TestServer replica(Args({}));
  ASSERT_TRUE(primary.ready() && replica.ready());
  {
    RawConn half(primary.port());  // starts a replica handshake, then goes away
    EXPECT_EQ(Call(half, {"REPLCONF", "listening-port", "5555"}), "+OK\r\n");
  }
  RawConn p(primary.port()), r(replica.port());
  ASSERT_EQ(Call(r, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
  ASSERT_TRUE(WaitLinkUp(r));
  ASSERT_TRUE(WaitReplicaOnline(p));
  EXPECT_EQ(Info(p, "connected_slaves", "replication"), "1");
  // Looks at every link's address: the closed one must be gone.
  EXPECT_EQ(Call(p, {"FAILOVER", "TO", "127.0.0.1", "5555"}), "-ERR FAILOVER target HOST and PORT is not a replica.\r\n");
}

// A command of the primary's stream that fails here means this replica's
// data may now differ: counted (unexpected_error_replies, INFO errorstats)
// and logged as Redis logs it; propagation-error-behavior panic-on-replicas
// stops a read-only replica, and a writable one is let diverge.
TEST(ReplicationE2E, ErrorsOnThePrimarysStreamAreCountedLoggedAndMayPanic) {
  const ScopedTempDir scoped_dir;
  const std::string& dir = scoped_dir.path();
  const std::string log = dir + "/replica.log";
  TestServer primary(Args({}));
  TestServer replica(Args({"--logfile", log}));
  ASSERT_TRUE(primary.ready() && replica.ready());
  RawConn p(primary.port()), r(replica.port());
  ASSERT_EQ(Call(r, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
  ASSERT_TRUE(WaitLinkUp(r));
  ASSERT_TRUE(WaitReplicaOnline(p));
  // DEBUG REPLICATE sends a command the replica does not know.
  EXPECT_EQ(Call(p, {"DEBUG", "REPLICATE", "fake-command-1"}), "+OK\r\n");
  EXPECT_EQ(Call(p, {"SET", "foo", "bar"}), "+OK\r\n");
  EXPECT_EQ(Call(p, {"WAIT", "1", "5000"}), ":1\r\n");
  EXPECT_EQ(Info(r, "unexpected_error_replies", "stats"), "1");
  EXPECT_EQ(Info(r, "total_error_replies", "stats"), "1");
  EXPECT_NE(Call(r, {"INFO", "errorstats"}).find("errorstat_ERR:count=1\r\n"), std::string::npos);
  EXPECT_NE(ReadFile(log).find("== CRITICAL == This replica is sending an error to its master: 'unknown command "
                               "'fake-command-1', with args beginning with: ' after processing the command "
                               "'<unknown>'"),
            std::string::npos)
      << ReadFile(log);
  EXPECT_EQ(Call(r, {"GET", "foo"}), "$3\r\nbar\r\n");  // the stream goes on
  // A writable replica may hold data of its own: the error is logged only.
  ASSERT_EQ(Call(r, {"CONFIG", "SET", "replica-read-only", "no"}), "+OK\r\n");
  ASSERT_EQ(Call(r, {"CONFIG", "SET", "propagation-error-behavior", "panic-on-replicas"}), "+OK\r\n");
  ASSERT_EQ(Call(r, {"SET", "number", "foo"}), "+OK\r\n");
  EXPECT_EQ(Call(p, {"INCRBY", "number", "1"}), ":1\r\n");
  EXPECT_EQ(Call(p, {"WAIT", "1", "5000"}), ":1\r\n");
  EXPECT_EQ(Call(r, {"GET", "number"}), "$3\r\nfoo\r\n");
  EXPECT_NE(ReadFile(log).find("after processing the command 'incrby'"), std::string::npos);
  // Read-only again: the next failing command of the stream panics it.
  ASSERT_EQ(Call(r, {"CONFIG", "SET", "replica-read-only", "yes"}), "+OK\r\n");
  EXPECT_EQ(Call(p, {"INCRBY", "number", "1"}), ":2\r\n");
  int status = 0;
  ASSERT_TRUE(replica.WaitExit(&status));
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT) << status;
  EXPECT_NE(ReadFile(log).find("Guru Meditation: This replica panicked sending an error to its master after "
                               "processing the command 'incrby'"),
            std::string::npos)
      << ReadFile(log);
}

}  // namespace
}  // namespace ringkv::testing::replication_e2e_test
