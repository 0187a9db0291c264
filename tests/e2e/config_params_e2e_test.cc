// The parameters Redis's CONFIG sanity test sets that act on something
// outside the keyspace: what a primary sees of its replica's connection,
// INFO fields, the process name, the crash report, the files kept.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/persistence_test_util.h"

namespace ringkv::testing::config_params_e2e_test {
namespace {

std::vector<std::string> Args(std::vector<std::string> extra = {}) {
  std::vector<std::string> a = {"--save", "", "--repl-diskless-sync", "no", "--protected-mode", "no"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

bool WaitLinkUp(RawConn& replica) { return WaitInfo(replica, "master_link_status", "up", 10000, "replication"); }

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

template <typename Fn>
bool Eventually(Fn done, int timeout_ms = 5000) {
  for (int i = 0; i < timeout_ms / 20; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

std::string GetConfig(RawConn& c, const std::string& name) {
  const std::string r = Call(c, {"CONFIG", "GET", name});
  const size_t last = r.rfind("$");
  const size_t body = r.find("\r\n", last) + 2;
  return r.substr(body, r.size() - body - 2);
}

// Values Redis adjusts after setting them and shows adjusted: hz within
// [1, 500] (also INFO configured_hz), a watchdog period of at least two
// cron ticks, a repl-backlog-size set under 16kb. A start-up hz or watchdog
// period is adjusted the same way; a start-up repl-backlog-size is kept.
TEST(ConfigParamsE2E, AdjustedValuesAreShownAsApplied) {
  TestServer s(Args({"--hz", "1000", "--watchdog-period", "1", "--repl-backlog-size", "100"}));
  ASSERT_TRUE(s.ready());
  RawConn c(s.port());
  EXPECT_EQ(GetConfig(c, "hz"), "500");
  EXPECT_EQ(GetConfig(c, "watchdog-period"), "4");  // 2 ticks of 1000/500 ms
  EXPECT_EQ(GetConfig(c, "repl-backlog-size"), "100");
  ASSERT_EQ(Call(c, {"CONFIG", "SET", "hz", "0"}), "+OK\r\n");
  EXPECT_EQ(GetConfig(c, "hz"), "1");
  EXPECT_NE(Call(c, {"INFO", "server"}).find("configured_hz:1\r\n"), std::string::npos);
  ASSERT_EQ(Call(c, {"CONFIG", "SET", "watchdog-period", "5"}), "+OK\r\n");
  EXPECT_EQ(GetConfig(c, "watchdog-period"), "2000");
  ASSERT_EQ(Call(c, {"CONFIG", "SET", "watchdog-period", "0"}), "+OK\r\n");
  EXPECT_EQ(GetConfig(c, "watchdog-period"), "0");
  ASSERT_EQ(Call(c, {"CONFIG", "SET", "hz", "1000"}), "+OK\r\n");
  EXPECT_EQ(GetConfig(c, "hz"), "500");
  EXPECT_NE(Call(c, {"INFO", "server"}).find("configured_hz:500\r\n"), std::string::npos);
  ASSERT_EQ(Call(c, {"CONFIG", "SET", "repl-backlog-size", "1"}), "+OK\r\n");
  EXPECT_EQ(GetConfig(c, "repl-backlog-size"), "16384");
  ASSERT_EQ(Call(c, {"CONFIG", "SET", "repl-backlog-size", "1mb"}), "+OK\r\n");
  EXPECT_EQ(GetConfig(c, "repl-backlog-size"), "1048576");
}

// bind-source-addr: the replica connects from the address given, which is
// the one its primary sees (127.0.0.2 is a loopback address on Linux).
TEST(ConfigParamsE2E, BindSourceAddrIsWhereTheReplicaConnectsFrom) {
  TestServer primary(Args()), replica(Args({"--bind-source-addr", "127.0.0.2"}));
  ASSERT_TRUE(primary.ready() && replica.ready());
  RawConn p(primary.port()), r(replica.port());
  ASSERT_EQ(Call(r, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
  ASSERT_TRUE(WaitLinkUp(r));
  EXPECT_NE(Call(p, {"CLIENT", "LIST"}).find("addr=127.0.0.2:"), std::string::npos) << Call(p, {"CLIENT", "LIST"});
  EXPECT_EQ(Info(p, "slave0", "replication").rfind("ip=127.0.0.2,", 0), 0u) << Info(p, "slave0", "replication");
  // An address the host does not have: the link stays down, and comes up
  // again once the parameter is cleared.
  ASSERT_EQ(Call(r, {"CONFIG", "SET", "bind-source-addr", "192.0.2.1"}), "+OK\r\n");
  ASSERT_EQ(Call(p, {"CLIENT", "KILL", "TYPE", "replica"}), ":1\r\n");
  ASSERT_TRUE(WaitInfo(r, "master_link_status", "down", 5000, "replication"));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_EQ(Info(r, "master_link_status", "replication"), "down");
  ASSERT_EQ(Call(r, {"CONFIG", "SET", "bind-source-addr", ""}), "+OK\r\n");
  EXPECT_TRUE(WaitLinkUp(r));
}

// replica-announced: INFO replication's replica_announced (Sentinel reads it).
TEST(ConfigParamsE2E, ReplicaAnnouncedIsShown) {
  TestServer primary(Args()), replica(Args());
  ASSERT_TRUE(primary.ready() && replica.ready());
  RawConn r(replica.port());
  ASSERT_EQ(Call(r, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
  EXPECT_EQ(Info(r, "replica_announced", "replication"), "1");
  ASSERT_EQ(Call(r, {"CONFIG", "SET", "replica-announced", "no"}), "+OK\r\n");
  EXPECT_EQ(Info(r, "replica_announced", "replication"), "0");
}

// replica-lazy-flush: the replica's old data is freed on the lazy-free
// thread before a full sync's file is loaded (counted in lazyfreed_objects).
TEST(ConfigParamsE2E, ReplicaLazyFlushFreesOldDataLazily) {
  for (const bool lazy : {false, true}) {
    TestServer primary(Args()), replica(Args({"--replica-lazy-flush", lazy ? "yes" : "no"}));
    ASSERT_TRUE(primary.ready() && replica.ready());
    RawConn p(primary.port()), r(replica.port());
    ASSERT_EQ(Call(p, {"SET", "new", "1"}), "+OK\r\n");
    for (int i = 0; i < 100; ++i) ASSERT_EQ(Call(r, {"SET", "old" + std::to_string(i), "x"}), "+OK\r\n");
    ASSERT_EQ(Call(r, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
    ASSERT_TRUE(WaitLinkUp(r));
    EXPECT_EQ(Call(r, {"DBSIZE"}), ":1\r\n");
    EXPECT_TRUE(Eventually([&] { return Info(r, "lazyfreed_objects", "memory") == (lazy ? "100" : "0"); }))
        << "lazy=" << lazy << " lazyfreed_objects=" << Info(r, "lazyfreed_objects", "memory");
  }
}

// rdb-del-sync-files: without persistence, neither side keeps the RDB file
// of a full sync; with it off (the default), both do.
TEST(ConfigParamsE2E, RdbDelSyncFilesRemovesTheReplicationRdb) {
  for (const bool del : {false, true}) {
    const std::vector<std::string> extra = {"--rdb-del-sync-files", del ? "yes" : "no"};
    TestServer primary(Args(extra)), replica(Args(extra));
    ASSERT_TRUE(primary.ready() && replica.ready());
    RawConn p(primary.port()), r(replica.port());
    ASSERT_EQ(Call(p, {"SET", "k", "v"}), "+OK\r\n");
    ASSERT_EQ(Call(r, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
    ASSERT_TRUE(WaitLinkUp(r));
    EXPECT_EQ(Call(r, {"GET", "k"}), "$1\r\nv\r\n");
    const std::string primary_rdb = primary.dir() + "/dump.rdb", replica_rdb = replica.dir() + "/dump.rdb";
    if (del) {
      EXPECT_TRUE(Eventually([&] { return !std::filesystem::exists(primary_rdb); }));
      EXPECT_FALSE(std::filesystem::exists(replica_rdb));
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));  // a few cron ticks
      EXPECT_TRUE(std::filesystem::exists(primary_rdb));
      EXPECT_TRUE(std::filesystem::exists(replica_rdb));
    }
  }
}

// proc-title-template rewrites the command line, as Redis does (what
// `ps -o args` and `pgrep -f` read), and leaves the process name that
// `pgrep -x`, `pidof` and `killall` match.
TEST(ConfigParamsE2E, ProcTitleTemplateRewritesTheCommandLine) {
  TestServer s(Args());
  ASSERT_TRUE(s.ready());
  RawConn c(s.port());
  const std::string pid = Info(c, "process_id", "server");
  const std::string proc = "/proc/" + pid;
  // The kernel shows the whole old argv block: the title, then NULs.
  auto cmdline = [&] {
    std::string line = ReadAll(proc + "/cmdline");
    line.erase(line.find_last_not_of('\0') + 1);
    return line;
  };
  const std::string port = std::to_string(s.port());
  EXPECT_EQ(ReadAll(proc + "/comm"), "ringkv-server\n");
  const std::string title = cmdline();
  EXPECT_EQ(title.find('\0'), std::string::npos) << title;
  EXPECT_TRUE(title.ends_with("ringkv-server 127.0.0.1:" + port)) << title;
  ASSERT_EQ(Call(c, {"CONFIG", "SET", "proc-title-template", "rk {port} {tls-port} {listen-addr}"}), "+OK\r\n");
  EXPECT_EQ(cmdline(), "rk " + port + " 0 127.0.0.1:" + port);
  EXPECT_EQ(Call(c, {"CONFIG", "SET", "proc-title-template", "{bad}"}).rfind("-ERR CONFIG SET failed", 0), 0u);
  EXPECT_EQ(cmdline(), "rk " + port + " 0 127.0.0.1:" + port);
  EXPECT_EQ(ReadAll(proc + "/comm"), "ringkv-server\n");
  // The arguments and the environment moved, not lost: CONFIG GET still
  // answers from what the command line set.
  EXPECT_EQ(Call(c, {"CONFIG", "GET", "port"}), "*2\r\n$4\r\nport\r\n$" + std::to_string(port.size()) + "\r\n" + port + "\r\n");
}

// bind takes host names, as Redis's (getaddrinfo, in the family the
// address's form says), and an optional address ("-::2") that is not on
// this host is skipped. Was: "localhost" refused ("Invalid bind
// address"), so a config file Redis starts with stopped ringkv.
TEST(ConfigParamsE2E, BindTakesAHostName) {
  TestServer s(Args({"--bind", "localhost -::2"}));
  ASSERT_TRUE(s.ready());
  RawConn c(s.port());
  EXPECT_EQ(Call(c, {"PING"}), "+PONG\r\n");
  EXPECT_EQ(GetConfig(c, "bind"), "localhost -::2");
  EXPECT_EQ(Call(c, {"CONFIG", "SET", "bind", "nosuchhost.invalid"}),
            "-ERR CONFIG SET failed (possibly related to argument 'bind') - Failed to bind to specified addresses.\r\n");
  EXPECT_EQ(Call(c, {"CONFIG", "SET", "bind", "localhost"}), "+OK\r\n");
  RawConn again(s.port());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(Call(again, {"PING"}), "+PONG\r\n");
}

// bind "" (Redis's setConfigBindOption): no address at all, so no TCP
// listener -- connections already open stay served -- and CONFIG REWRITE
// writes `bind ""`; binding again listens again. (Redis's unit/networking,
// "Default bind address configuration handling".)
TEST(ConfigParamsE2E, AnEmptyBindListensOnNoAddress) {
  const ScopedTempDir scoped_dir;
  const std::string& dir = scoped_dir.path();
  const std::string conf = dir + "/ringkv.conf";
  std::ofstream(conf) << "save \"\"\n";
  TestServer s(Args(), RINGKV_SERVER_PATH, conf);
  ASSERT_TRUE(s.ready());
  RawConn c(s.port());
  EXPECT_EQ(Call(c, {"CONFIG", "SET", "bind", ""}), "+OK\r\n");
  EXPECT_EQ(GetConfig(c, "bind"), "");
  EXPECT_EQ(Call(c, {"PING"}), "+PONG\r\n");  // this connection stays
  {
    RawConn refused(s.port());
    EXPECT_FALSE(refused.ok()) << "a new connection was accepted with bind \"\"";
  }
  EXPECT_EQ(Call(c, {"CONFIG", "REWRITE"}), "+OK\r\n");
  EXPECT_NE(("\n" + ReadAll(conf)).find("\nbind \"\"\n"), std::string::npos) << ReadAll(conf);
  EXPECT_EQ(Call(c, {"CONFIG", "SET", "bind", "127.0.0.1"}), "+OK\r\n");
  RawConn again(s.port());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(Call(again, {"PING"}), "+PONG\r\n");
  // More than 16 addresses is still refused, with Redis's words.
  std::string many;
  for (int i = 0; i < 17; ++i) many += "127.0.0.1 ";
  EXPECT_NE(Call(c, {"CONFIG", "SET", "bind", many}).find("Too many bind addresses specified."), std::string::npos);
}

// rename-command, as Redis: the command answers to its new name only (or
// to none), CONFIG REWRITE keeps the line so a restart keeps the rename,
// and a rename of an unknown command, or to a taken name, stops start-up.
TEST(ConfigParamsE2E, RenameCommandMovesACommandsName) {
  const ScopedTempDir scoped_dir;
  const std::string& dir = scoped_dir.path();
  const std::string conf = dir + "/ringkv.conf";
  std::ofstream(conf) << "save \"\"\nrename-command flushdb badger\nrename-command KEYS \"\"\n";
  for (int start = 0; start < 2; ++start) {
    TestServer s(Args(), RINGKV_SERVER_PATH, conf);
    ASSERT_TRUE(s.ready());
    RawConn c(s.port());
    EXPECT_EQ(Call(c, {"SET", "k", "v"}), "+OK\r\n");
    EXPECT_EQ(Call(c, {"FLUSHDB"}), "-ERR unknown command 'FLUSHDB', with args beginning with: \r\n");
    EXPECT_EQ(Call(c, {"KEYS", "*"}), "-ERR unknown command 'KEYS', with args beginning with: '*' \r\n");
    EXPECT_EQ(Call(c, {"EVAL", "return redis.call('flushdb')", "0"}).substr(0, 40),
              "-ERR Unknown Redis command called from s");  // scripts see the new names too
    EXPECT_EQ(Call(c, {"badger"}), "+OK\r\n");
    EXPECT_EQ(Call(c, {"DBSIZE"}), ":0\r\n");
    EXPECT_EQ(Call(c, {"CONFIG", "REWRITE"}), "+OK\r\n");
  }
  EXPECT_NE(ReadAll(conf).find("rename-command flushdb badger\n"), std::string::npos) << ReadAll(conf);
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"rename-command nosuch x", "No such command in rename-command"},
      {"rename-command get set", "Target command name already exists"},
      {"rename-command get", "wrong number of arguments"}};
  for (const auto& [line, why] : bad) {
    std::string out;
    EXPECT_NE(RunShell("timeout 10 " + std::string(RINGKV_SERVER_PATH) + " --port 0 --unixsocket " + dir + "/s.sock --dir " + dir + " --" + line, &out), 0)
        << line;
    EXPECT_NE(out.find(why), std::string::npos) << line << ": " << out;
  }
}

// crash-log-enabled: a crash leaves Redis's report in the log, or nothing.
TEST(ConfigParamsE2E, CrashLogFollowsCrashLogEnabled) {
  if (ServerSanitized()) GTEST_SKIP() << "ASan builds keep the sanitizer's own signal handlers";
  for (const bool on : {true, false}) {
    TestServer s(Args({"--logfile", "server.log", "--crash-log-enabled", on ? "yes" : "no"}));
    ASSERT_TRUE(s.ready());
    RawConn c(s.port());
    const int pid = std::stoi(Info(c, "process_id", "server"));
    ASSERT_EQ(kill(pid, SIGABRT), 0);
    int status = 0;
    ASSERT_TRUE(s.WaitExit(&status));
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT) << status;
    const std::string log = ReadAll(s.dir() + "/server.log");
    EXPECT_EQ(log.find("crashed by signal: 6") != std::string::npos, on) << log;
    EXPECT_EQ(log.find("------ STACK TRACE ------") != std::string::npos, on) << log;
  }
}

// DEBUG SEGFAULT and DEBUG PANIC crash the server as Redis's do: the crash
// report's stack trace, and the panic's Guru Meditation line.
TEST(ConfigParamsE2E, DebugSegfaultAndPanicCrashWithTheirReports) {
  if (ServerSanitized()) GTEST_SKIP() << "ASan builds keep the sanitizer's own signal handlers";
  for (const std::string what : {"SEGFAULT", "PANIC"}) {
    TestServer s(Args({"--logfile", "server.log", "--enable-debug-command", "yes"}));
    ASSERT_TRUE(s.ready());
    RawConn c(s.port());
    c.Send(Resp({"DEBUG", what}));
    int status = 0;
    ASSERT_TRUE(s.WaitExit(&status)) << what;
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == (what == "SEGFAULT" ? SIGSEGV : SIGABRT)) << status;
    const std::string log = ReadAll(s.dir() + "/server.log");
    EXPECT_NE(log.find(what == "SEGFAULT" ? "------ STACK TRACE ------" : "Guru Meditation: DEBUG PANIC called at Unix time"),
              std::string::npos)
        << log;
  }
}

// no-appendfsync-on-rewrite with appendfsync always: while a child saves,
// writes are answered without waiting for an fsync the option skips (as
// Redis), and once it is gone the AOF is synced again.
TEST(ConfigParamsE2E, NoAppendfsyncOnRewriteAnswersWhileAChildRuns) {
  TestServer s(Args({"--appendonly", "yes", "--appendfsync", "always", "--no-appendfsync-on-rewrite", "yes"}));
  ASSERT_TRUE(s.ready());
  RawConn c(s.port());
  for (int i = 0; i < 20; ++i) ASSERT_EQ(Call(c, {"SET", "k" + std::to_string(i), "v"}), "+OK\r\n");
  ASSERT_EQ(Call(c, {"CONFIG", "SET", "rdb-key-save-delay", "100000"}), "+OK\r\n");  // 2 s of saving
  ASSERT_EQ(Call(c, {"BGSAVE"}), "+Background saving started\r\n");
  EXPECT_EQ(Info(c, "rdb_bgsave_in_progress"), "1");
  for (int i = 0; i < 10; ++i) EXPECT_EQ(Call(c, {"INCR", "n"}), ":" + std::to_string(i + 1) + "\r\n");
  EXPECT_EQ(Info(c, "rdb_bgsave_in_progress"), "1");
  ASSERT_TRUE(WaitInfo(c, "rdb_bgsave_in_progress", "0", 10000));
  EXPECT_EQ(Call(c, {"INCR", "n"}), ":11\r\n");
}

}  // namespace
}  // namespace ringkv::testing::config_params_e2e_test
