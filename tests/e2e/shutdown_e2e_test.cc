// SHUTDOWN with replicas, as Redis 7.0 shuts down: a primary whose replicas
// have not acknowledged its offset waits for them (up to shutdown-timeout
// seconds, writes paused) before it saves and exits; SHUTDOWN blocks its
// client meanwhile; SHUTDOWN ABORT cancels and answers the waiting clients
// with an error. A replica is held back with SIGSTOP.
#include <gtest/gtest.h>
#include <signal.h>

#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/persistence_test_util.h"

namespace ringkv::testing::shutdown_e2e_test {
namespace {

std::vector<std::string> Args(std::vector<std::string> extra = {}) {
  std::vector<std::string> a = {"--save", "", "--repl-diskless-sync-delay", "0"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

// A primary and a replica in sync, with the primary logging to a file.
struct Pair {
  TempDir dir;
  TestServer primary;
  TestServer replica{Args()};
  RawConn p;
  RawConn r{replica.port()};
  int replica_pid = 0;

  explicit Pair(std::vector<std::string> primary_args)
      : primary([&] {
          std::vector<std::string> a = Args(std::move(primary_args));
          a.insert(a.end(), {"--dir", dir.path(), "--logfile", dir.path() + "/primary.log"});
          return a;
        }()),
        p(primary.port()) {}

  bool Start() {
    if (Call(r, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}) != "+OK\r\n") return false;
    if (!WaitInfo(r, "master_link_status", "up", 10000, "replication")) return false;
    replica_pid = std::stoi(Info(r, "process_id", "server"));
    return Call(p, {"SET", "k", "1"}) == "+OK\r\n" && InSync();
  }
  // The replica acknowledged everything the primary sent.
  bool InSync() {
    for (int i = 0; i < 500; ++i) {
      const std::string info = Call(p, {"INFO", "replication"});
      const std::string offset = Info(p, "master_repl_offset", "replication");
      if (info.find(",offset=" + offset + ",") != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }
  void Stop() { kill(replica_pid, SIGSTOP); }
  void Continue() { kill(replica_pid, SIGCONT); }
  std::string Log() { return ReadFile(dir.path() + "/primary.log"); }
};

TEST(ShutdownTest, WaitsForALaggingReplicaThenExits) {
  Pair pair({});
  ASSERT_TRUE(pair.Start());
  pair.Stop();
  ASSERT_EQ(Call(pair.p, {"INCR", "k"}), ":2\r\n");
  RawConn waiter(pair.primary.port());
  ASSERT_TRUE(waiter.Send(Resp({"SHUTDOWN"})));
  // Waiting: the client is blocked, INFO says for how long at most, and
  // the replica's link is not counted among the clients.
  ASSERT_TRUE(WaitInfo(pair.p, "blocked_clients", "1", 5000, "clients"));
  const std::string left = Info(pair.p, "shutdown_in_milliseconds", "server");
  ASSERT_FALSE(left.empty());
  EXPECT_GT(std::stoll(left), 0);
  EXPECT_LE(std::stoll(left), 10000);  // shutdown-timeout's default: 10 s
  EXPECT_EQ(Info(pair.p, "connected_clients", "clients"), "2");
  EXPECT_EQ(Info(pair.p, "connected_slaves", "replication"), "1");
  // Once the replica has the INCR, the primary exits (with no reply).
  pair.Continue();
  int status = 0;
  ASSERT_TRUE(pair.primary.WaitExit(&status, 10000));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_TRUE(waiter.ReadEof());
  EXPECT_EQ(Call(pair.r, {"GET", "k"}), "$1\r\n2\r\n");
  const std::string log = pair.Log();
  EXPECT_NE(log.find("Waiting for replicas before shutting down."), std::string::npos);
  EXPECT_NE(log.find("1 of 1 replicas are in sync when shutting down."), std::string::npos);
  EXPECT_EQ(log.find("Lagging replica"), std::string::npos);
}

TEST(ShutdownTest, AbortAnswersEveryWaitingClientAndResumesWrites) {
  Pair pair({});
  ASSERT_TRUE(pair.Start());
  pair.Stop();
  ASSERT_EQ(Call(pair.p, {"INCR", "k"}), ":2\r\n");
  RawConn w1(pair.primary.port()), w2(pair.primary.port());
  ASSERT_TRUE(w1.Send(Resp({"SHUTDOWN"})));
  ASSERT_TRUE(WaitInfo(pair.p, "blocked_clients", "1", 5000, "clients"));
  ASSERT_TRUE(w2.Send(Resp({"SHUTDOWN", "NOW"})));  // joins the shutdown already waiting
  ASSERT_TRUE(WaitInfo(pair.p, "blocked_clients", "2", 5000, "clients"));
  // Writes are paused meanwhile: this SET waits.
  RawConn writer(pair.primary.port());
  ASSERT_TRUE(writer.Send(Resp({"SET", "during", "shutdown"})));
  EXPECT_EQ(Call(pair.p, {"SHUTDOWN", "ABORT", "NOW"}), "-ERR syntax error\r\n");
  EXPECT_EQ(Call(pair.p, {"SHUTDOWN", "ABORT"}), "+OK\r\n");
  EXPECT_EQ(w1.ReadReply(), "-ERR Errors trying to SHUTDOWN. Check logs.\r\n");
  EXPECT_EQ(w2.ReadReply(), "-ERR Errors trying to SHUTDOWN. Check logs.\r\n");
  EXPECT_EQ(writer.ReadReply(), "+OK\r\n");
  EXPECT_EQ(Info(pair.p, "shutdown_in_milliseconds", "server"), "");
  EXPECT_EQ(Call(pair.p, {"SHUTDOWN", "ABORT"}), "-ERR No shutdown in progress.\r\n");
  EXPECT_EQ(Call(w1, {"PING"}), "+PONG\r\n");  // its connection serves again
  pair.Continue();
  EXPECT_NE(pair.Log().find("Shutdown manually aborted."), std::string::npos);
}

TEST(ShutdownTest, TimeoutExitsWithoutTheLaggingReplica) {
  Pair pair({"--shutdown-timeout", "1"});
  ASSERT_TRUE(pair.Start());
  pair.Stop();
  ASSERT_EQ(Call(pair.p, {"INCR", "k"}), ":2\r\n");
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(pair.p.Send(Resp({"SHUTDOWN"})));
  int status = 0;
  ASSERT_TRUE(pair.primary.WaitExit(&status, 10000));
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(900));
  pair.Continue();
  const std::string log = pair.Log();
  EXPECT_NE(log.find("Lagging replica 127.0.0.1:" + std::to_string(pair.replica.port()) + " reported offset "),
            std::string::npos);
  EXPECT_NE(log.find("0 of 1 replicas are in sync when shutting down."), std::string::npos);
}

TEST(ShutdownTest, NowAndATimeoutOfZeroDoNotWait) {
  for (const bool now : {true, false}) {
    Pair pair(now ? std::vector<std::string>{} : std::vector<std::string>{"--shutdown-timeout", "0"});
    ASSERT_TRUE(pair.Start());
    pair.Stop();
    ASSERT_EQ(Call(pair.p, {"INCR", "k"}), ":2\r\n");
    ASSERT_TRUE(pair.p.Send(Resp(now ? std::vector<std::string>{"SHUTDOWN", "NOW"} : std::vector<std::string>{"SHUTDOWN"})));
    int status = 0;
    EXPECT_TRUE(pair.primary.WaitExit(&status, 2000)) << "now=" << now;
    pair.Continue();
  }
}

// Once SHUTDOWN is decided nothing more is accepted: a client that sees the
// SHUTDOWN connection end and connects at once is refused, as by Redis
// (whose listeners close before it exits), even while a background save's
// child is still being stopped.
TEST(ShutdownTest, AClientConnectingAfterShutdownIsRefused) {
  for (int round = 0; round < 20; ++round) {
    TestServer s;
    ASSERT_TRUE(s.ready());
    RawConn c(s.port());
    for (int i = 0; i < 20; ++i) Call(c, {"SET", std::to_string(i), "v"});
    EXPECT_EQ(Call(c, {"CONFIG", "SET", "rdb-key-save-delay", "100000"}), "+OK\r\n");
    EXPECT_EQ(Call(c, {"BGSAVE"}), "+Background saving started\r\n");
    c.Send(Resp({"SHUTDOWN", "NOSAVE"}));
    EXPECT_TRUE(c.ReadEof());
    RawConn late(s.port());
    EXPECT_FALSE(late.ok()) << "round " << round << ": connected after SHUTDOWN";
  }
}

// SIGTERM waits as SHUTDOWN does; the signal's shutdown can be aborted too.
TEST(ShutdownTest, SigtermWaitsAndCanBeAborted) {
  Pair pair({});
  ASSERT_TRUE(pair.Start());
  const int primary_pid = std::stoi(Info(pair.p, "process_id", "server"));
  pair.Stop();
  ASSERT_EQ(Call(pair.p, {"INCR", "k"}), ":2\r\n");
  kill(primary_pid, SIGTERM);
  for (int i = 0; i < 250 && Info(pair.p, "shutdown_in_milliseconds", "server").empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_NE(Info(pair.p, "shutdown_in_milliseconds", "server"), "");
  EXPECT_EQ(Call(pair.p, {"SHUTDOWN", "ABORT"}), "+OK\r\n");
  pair.Continue();
  ASSERT_TRUE(pair.InSync());
  EXPECT_EQ(Call(pair.p, {"PING"}), "+PONG\r\n");  // still running
}

// shutdown-on-sigterm now: SIGTERM does not wait for the lagging replica;
// shutdown-on-sigint keeps the default and waits.
TEST(ShutdownTest, ShutdownOnSigtermNowDoesNotWait) {
  Pair pair({"--shutdown-on-sigterm", "now"});
  ASSERT_TRUE(pair.Start());
  const int primary_pid = std::stoi(Info(pair.p, "process_id", "server"));
  pair.Stop();
  ASSERT_EQ(Call(pair.p, {"INCR", "k"}), ":2\r\n");
  kill(primary_pid, SIGINT);  // the default: waits
  for (int i = 0; i < 250 && Info(pair.p, "shutdown_in_milliseconds", "server").empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_NE(Info(pair.p, "shutdown_in_milliseconds", "server"), "");
  EXPECT_EQ(Call(pair.p, {"SHUTDOWN", "ABORT"}), "+OK\r\n");
  kill(primary_pid, SIGTERM);  // now: exits at once
  int status = 0;
  EXPECT_TRUE(pair.primary.WaitExit(&status, 2000));
  pair.Continue();
  EXPECT_NE(pair.Log().find("0 of 1 replicas are in sync when shutting down."), std::string::npos);
}

// mem_total_replication_buffers counts the stream a stopped replica has not
// read (Redis 7.0's shared replication buffer), and drops back when the
// replica is gone.
TEST(ShutdownTest, ReplicationBufferMemoryFollowsALaggingReplica) {
  Pair pair({"--repl-backlog-size", "16384"});
  ASSERT_TRUE(pair.Start());
  EXPECT_NE(Info(pair.p, "mem_total_replication_buffers", "memory"), "");
  pair.Stop();
  const std::string value(1024, 'x');
  int64_t buffers = 0;
  for (int i = 0; i < 40000 && buffers <= 4 * 1024 * 1024; ++i) {
    ASSERT_EQ(Call(pair.p, {"SET", "key:" + std::to_string(i), value}), "+OK\r\n");
    if (i % 256 == 0) buffers = std::stoll(Info(pair.p, "mem_total_replication_buffers", "memory"));
  }
  EXPECT_GT(buffers, 4 * 1024 * 1024);
  EXPECT_GT(std::stoll(Info(pair.p, "mem_clients_slaves", "memory")), 2 * 1024 * 1024);
  EXPECT_EQ(Info(pair.p, "mem_replication_backlog", "memory"), "16384");
  pair.replica.Kill();  // its connection closes: nothing holds the stream any more
  bool shrunk = false;
  for (int i = 0; i < 250 && !shrunk; ++i) {
    Call(pair.p, {"PING"});  // a loop turn trims
    shrunk = std::stoll(Info(pair.p, "mem_total_replication_buffers", "memory")) <= 2 * 64 * 1024;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(shrunk);
}

}  // namespace
}  // namespace ringkv::testing::shutdown_e2e_test

namespace ringkv::testing::shutdown_e2e_test {
namespace {

// A signal the main loop has not taken yet (DEBUG PAUSE-CRON holds it, as
// Redis's serverCron would) is cancelled by SHUTDOWN ABORT; the server keeps
// serving once the cron runs again.
TEST(ShutdownSignalTest, AbortCancelsASignalNotTakenYet) {
  TempDir dir;
  TestServer s(InDir(dir, {"--logfile", dir / "log.txt"}));
  ASSERT_TRUE(s.ready());
  RawConn c(s.port());
  ASSERT_EQ(Call(c, {"DEBUG", "PAUSE-CRON", "1"}), "+OK\r\n");
  kill(std::stoi(Info(c, "process_id", "server")), SIGTERM);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(Call(c, {"SHUTDOWN", "ABORT"}), "+OK\r\n");
  EXPECT_NE(ReadFile(dir / "log.txt").find("Shutdown manually aborted"), std::string::npos);
  ASSERT_EQ(Call(c, {"DEBUG", "PAUSE-CRON", "0"}), "+OK\r\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(250));  // a few cron ticks
  EXPECT_EQ(Call(c, {"PING"}), "+PONG\r\n");
  EXPECT_EQ(Call(c, {"SHUTDOWN", "ABORT"}), "-ERR No shutdown in progress.\r\n");
}

// A second SIGINT while a signalled shutdown saves its final snapshot exits
// at once, removing the snapshot's temp file (Redis's "You insist").
TEST(ShutdownSignalTest, SecondSigintDuringTheFinalSaveExitsAndRemovesTheTempFile) {
  TempDir dir;
  TestServer s(InDir(dir, {"--logfile", dir / "log.txt", "--save", "900 1"}));
  ASSERT_TRUE(s.ready());
  RawConn c(s.port());
  for (int i = 0; i < 20; ++i) ASSERT_EQ(Call(c, {"SET", std::to_string(i), "v"}), "+OK\r\n");
  ASSERT_EQ(Call(c, {"CONFIG", "SET", "rdb-key-save-delay", "100000"}), "+OK\r\n");  // 2 s of saving
  const int pid = std::stoi(Info(c, "process_id", "server"));
  const std::string temp = dir / ("temp-" + std::to_string(pid) + ".rdb");
  kill(pid, SIGINT);
  bool saving = false;
  for (int i = 0; i < 250 && !saving; ++i) {
    saving = ReadFile(dir / "log.txt").find("Saving the final RDB snapshot") != std::string::npos;
    if (!saving) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(saving) << ReadFile(dir / "log.txt");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_TRUE(std::filesystem::exists(temp));
  kill(pid, SIGINT);
  int status = 0;
  ASSERT_TRUE(s.WaitExit(&status, 3000));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1);
  EXPECT_FALSE(std::filesystem::exists(temp));
  EXPECT_FALSE(std::filesystem::exists(dir / "dump.rdb"));
  EXPECT_NE(ReadFile(dir / "log.txt").find("You insist on killing ringkv, exiting now."), std::string::npos);
}

}  // namespace
}  // namespace ringkv::testing::shutdown_e2e_test
