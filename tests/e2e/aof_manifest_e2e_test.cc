// The multi-part AOF's files and manifest over a server's life, as Redis
// 7.0 keeps them (issue 16, Redis's integration/aof-multi-part unit): what
// start-up refuses and how it finishes an interrupted Redis 6 upgrade, the
// sequence numbers DEBUG LOADAOF reads back, the temporary incremental file
// of an AOF being turned on, history kept with aof-disable-auto-gc, and the
// limit on rewrites that keep failing.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/persistence_test_util.h"

namespace ringkv::testing::aof_manifest_e2e_test {
namespace {

// As InDir, with the log in dir/log.txt.
std::vector<std::string> InDirLogged(const TempDir& dir, std::vector<std::string> extra = {}) {
  std::vector<std::string> a = {"--dir", dir.path(), "--save", "", "--enable-debug-command", "yes",
                                "--logfile", dir.path() + "/log.txt"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

std::string Manifest(const TempDir& dir) { return ReadFile(dir.path() + "/appendonlydir/appendonly.aof.manifest"); }
bool InAofDir(const TempDir& dir, const std::string& name) {
  return std::filesystem::exists(dir.path() + "/appendonlydir/" + name);
}
size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// An AOF child that will not finish on its own (rdb-key-save-delay) is
// killed from outside: the rewrite fails.
void FailRewrite(RawConn& c) {
  ASSERT_TRUE(WaitInfo(c, "aof_rewrite_in_progress", "1", 5000, "persistence"));
  // The server's only child is the rewrite's.
  std::string out;
  RunShell("pgrep -P " + Info(c, "process_id", "server"), &out);
  ASSERT_FALSE(out.empty());
  const pid_t child = std::stoi(out);
  kill(child, SIGKILL);
  // Gone once the server reaped it (a retry may already be running).
  for (int i = 0; i < 250 && kill(child, 0) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_NE(kill(child, 0), 0);
}

TEST(AofManifestE2E, StartUpRefusesWhatRedisRefuses) {
  const struct {
    const char* manifest;
    const char* logged;
  } cases[] = {
      {"file appendonly.aof.1.incr.aof seq 1 type i\n\nfile appendonly.aof.2.incr.aof seq 2 type i\n",
       "Invalid AOF manifest file format"},
      {"file appendonly.aof.1.incr.aof type i\n", "Invalid AOF manifest file format"},
      {"file appendonly.aof.1.incr.aof seq 1 type i\nfile appendonly.aof.2.incr.aof seq 2 type i\n",
       "Unable to obtain the AOF file appendonly.aof.2.incr.aof length. stat: No such file or directory"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.manifest);
    TempDir dir;
    std::filesystem::create_directory(dir.path() + "/appendonlydir");
    WriteFile(dir.path() + "/appendonlydir/appendonly.aof.manifest", c.manifest);
    WriteFile(dir.path() + "/appendonlydir/appendonly.aof.1.incr.aof", Resp({"SET", "k1", "v1"}));
    TestServer s(InDirLogged(dir, {"--appendonly", "yes"}));
    EXPECT_FALSE(s.ready());
    EXPECT_EQ(Count(ReadFile(dir.path() + "/log.txt"), c.logged), 1u);
  }
}

// Redis 7.0 writes the manifest, then moves the old file: a crash between
// the two leaves a manifest naming a base that is still in `dir`.
TEST(AofManifestE2E, AnInterruptedUpgradeIsFinished) {
  TempDir dir;
  WriteFile(dir.path() + "/appendonly.aof", Resp({"SET", "k1", "v1"}) + Resp({"SET", "k2", "v2"}));
  std::filesystem::create_directory(dir.path() + "/appendonlydir");
  WriteFile(dir.path() + "/appendonlydir/appendonly.aof.manifest", "file appendonly.aof seq 1 type b\n");
  TestServer s(InDirLogged(dir, {"--appendonly", "yes"}));
  ASSERT_TRUE(s.ready());
  RawConn c(s.port());
  EXPECT_EQ(Call(c, {"GET", "k2"}), "$2\r\nv2\r\n");
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/appendonly.aof"));
  EXPECT_TRUE(InAofDir(dir, "appendonly.aof"));
  EXPECT_EQ(Manifest(dir), "file appendonly.aof seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n");
}

// DEBUG LOADAOF reads the manifest from disk, numbers included: after a
// rewrite with the AOF off (a base alone), turning it on starts the
// incremental files at 1 again, as on Redis.
TEST(AofManifestE2E, SequenceNumbersFollowTheManifestOnDisk) {
  TempDir dir;
  TestServer s(InDirLogged(dir, {"--appendonly", "yes"}));
  ASSERT_TRUE(s.ready());
  RawConn c(s.port());
  ASSERT_EQ(Call(c, {"SET", "a", "1"}), "+OK\r\n");
  ASSERT_EQ(Call(c, {"CONFIG", "SET", "appendonly", "no"}), "+OK\r\n");
  ASSERT_EQ(Call(c, {"BGREWRITEAOF"}), "+Background append only file rewriting started\r\n");
  ASSERT_TRUE(WaitInfo(c, "aof_rewrite_in_progress", "0", 5000, "persistence"));
  EXPECT_EQ(Manifest(dir), "file appendonly.aof.2.base.rdb seq 2 type b\n");
  const std::string digest = Call(c, {"DEBUG", "DIGEST"});
  ASSERT_EQ(Call(c, {"DEBUG", "LOADAOF"}), "+OK\r\n");
  EXPECT_EQ(Call(c, {"DEBUG", "DIGEST"}), digest);
  EXPECT_EQ(Info(c, "rdb_changes_since_last_save", "persistence"), "0");
  ASSERT_EQ(Call(c, {"CONFIG", "SET", "appendonly", "yes"}), "+OK\r\n");
  ASSERT_TRUE(WaitInfo(c, "aof_rewrite_in_progress", "0", 5000, "persistence"));
  EXPECT_EQ(Manifest(dir), "file appendonly.aof.3.base.rdb seq 3 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n");
}

// Turning the AOF on collects the writes since the fork in a temporary
// file; a failed attempt drops it and leaves no manifest behind, and the
// attempt is made again.
TEST(AofManifestE2E, TurningTheAofOnUsesATemporaryIncrementalFile) {
  TempDir dir;
  TestServer s(InDirLogged(dir, {"--rdb-key-save-delay", "1000000"}));  // a second per key
  ASSERT_TRUE(s.ready());
  RawConn c(s.port());
  for (const char* k : {"a", "b", "c"}) ASSERT_EQ(Call(c, {"SET", k, "1"}), "+OK\r\n");
  ASSERT_EQ(Call(c, {"CONFIG", "SET", "appendonly", "yes"}), "+OK\r\n");
  EXPECT_TRUE(InAofDir(dir, "temp-appendonly.aof.incr"));
  const std::string log = dir.path() + "/log.txt";
  const std::string removed = "Removing the temp incr aof file temp-appendonly.aof.incr in the background";
  FailRewrite(c);
  for (int i = 0; i < 100 && Count(ReadFile(log), removed) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(Count(ReadFile(log), removed), 1u);
  EXPECT_FALSE(InAofDir(dir, "appendonly.aof.manifest"));
  EXPECT_FALSE(InAofDir(dir, "appendonly.aof.1.base.rdb"));
  // Tried again at once (scheduled): fail that one too, then let the third
  // succeed.
  ASSERT_EQ(Call(c, {"CONFIG", "SET", "rdb-key-save-delay", "0"}), "+OK\r\n");
  FailRewrite(c);
  ASSERT_TRUE(WaitInfo(c, "aof_enabled", "1", 5000, "persistence"));
  ASSERT_TRUE(WaitInfo(c, "aof_rewrite_in_progress", "0", 10000, "persistence"));
  for (int i = 0; i < 250 && Manifest(dir).find("type i") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(Count(ReadFile(log), removed), 2u);
  EXPECT_EQ(Manifest(dir), "file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n");
  EXPECT_FALSE(InAofDir(dir, "temp-appendonly.aof.incr"));
  ASSERT_EQ(Call(c, {"SET", "d", "2"}), "+OK\r\n");
  const std::string digest = Call(c, {"DEBUG", "DIGEST"});
  ASSERT_EQ(Call(c, {"DEBUG", "LOADAOF"}), "+OK\r\n");
  EXPECT_EQ(Call(c, {"DEBUG", "DIGEST"}), digest);
  EXPECT_EQ(Call(c, {"DBSIZE"}), ":4\r\n");
}

TEST(AofManifestE2E, AutoGcOffKeepsHistoryInRedisOrder) {
  TempDir dir;
  TestServer s(InDirLogged(dir, {"--appendonly", "yes", "--aof-disable-auto-gc", "yes"}));
  ASSERT_TRUE(s.ready());
  RawConn c(s.port());
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(Call(c, {"SET", "k", std::to_string(i)}), "+OK\r\n");
    ASSERT_EQ(Call(c, {"BGREWRITEAOF"}), "+Background append only file rewriting started\r\n");
    ASSERT_TRUE(WaitInfo(c, "aof_rewrite_in_progress", "0", 5000, "persistence"));
  }
  EXPECT_EQ(Manifest(dir),
            "file appendonly.aof.3.base.rdb seq 3 type b\n"
            "file appendonly.aof.2.incr.aof seq 2 type h\n"
            "file appendonly.aof.2.base.rdb seq 2 type h\n"
            "file appendonly.aof.1.incr.aof seq 1 type h\n"
            "file appendonly.aof.1.base.rdb seq 1 type h\n"
            "file appendonly.aof.3.incr.aof seq 3 type i\n");
  EXPECT_TRUE(InAofDir(dir, "appendonly.aof.1.base.rdb"));
  ASSERT_EQ(Call(c, {"CONFIG", "SET", "aof-disable-auto-gc", "no"}), "+OK\r\n");
  EXPECT_EQ(Manifest(dir), "file appendonly.aof.3.base.rdb seq 3 type b\nfile appendonly.aof.3.incr.aof seq 3 type i\n");
  for (int i = 0; i < 250 && InAofDir(dir, "appendonly.aof.1.base.rdb"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_FALSE(InAofDir(dir, "appendonly.aof.1.base.rdb"));
}

// Three failed rewrites in a row hold automatic ones back (logged once);
// BGREWRITEAOF still runs at once.
TEST(AofManifestE2E, RepeatedRewriteFailuresTriggerTheLimit) {
  TempDir dir;
  TestServer s(InDirLogged(dir, {"--appendonly", "yes"}));
  ASSERT_TRUE(s.ready());
  RawConn c(s.port());
  ASSERT_EQ(Call(c, {"SET", "k", "v"}), "+OK\r\n");
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(Call(c, {"CONFIG", "SET", "rdb-key-save-delay", "1000000"}), "+OK\r\n");
    ASSERT_EQ(Call(c, {"BGREWRITEAOF"}), "+Background append only file rewriting started\r\n");
    FailRewrite(c);
  }
  EXPECT_EQ(Manifest(dir),
            "file appendonly.aof.1.base.rdb seq 1 type b\n"
            "file appendonly.aof.1.incr.aof seq 1 type i\n"
            "file appendonly.aof.2.incr.aof seq 2 type i\n"
            "file appendonly.aof.3.incr.aof seq 3 type i\n"
            "file appendonly.aof.4.incr.aof seq 4 type i\n");
  ASSERT_EQ(Call(c, {"CONFIG", "SET", "auto-aof-rewrite-percentage", "1"}), "+OK\r\n");
  ASSERT_EQ(Call(c, {"CONFIG", "SET", "auto-aof-rewrite-min-size", "1kb"}), "+OK\r\n");
  ASSERT_EQ(Call(c, {"SET", "x", std::string(2048, 'x')}), "+OK\r\n");
  for (int i = 0; i < 100 && Count(ReadFile(dir.path() + "/log.txt"), "triggered the limit") == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(Count(ReadFile(dir.path() + "/log.txt"),
                  "Background AOF rewrite has repeatedly failed and triggered the limit, will retry in 1 minutes"),
            1u);
  EXPECT_EQ(Info(c, "aof_rewrite_in_progress", "persistence"), "0");
  ASSERT_EQ(Call(c, {"CONFIG", "SET", "auto-aof-rewrite-percentage", "0"}), "+OK\r\n");
  ASSERT_EQ(Call(c, {"CONFIG", "SET", "rdb-key-save-delay", "0"}), "+OK\r\n");
  ASSERT_EQ(Call(c, {"BGREWRITEAOF"}), "+Background append only file rewriting started\r\n");
  ASSERT_TRUE(WaitInfo(c, "aof_rewrite_in_progress", "0", 5000, "persistence"));
  EXPECT_EQ(Manifest(dir), "file appendonly.aof.2.base.rdb seq 2 type b\nfile appendonly.aof.5.incr.aof seq 5 type i\n");
}

// aof-timestamp-enabled: "#TS:<seconds>" before the first command of a
// second, and at the top of an AOF-format base; loading skips them.
TEST(AofManifestE2E, TimestampAnnotations) {
  TempDir dir;
  TestServer s(InDirLogged(dir, {"--appendonly", "yes", "--aof-use-rdb-preamble", "no"}));
  ASSERT_TRUE(s.ready());
  RawConn c(s.port());
  ASSERT_EQ(Call(c, {"CONFIG", "SET", "aof-timestamp-enabled", "yes"}), "+OK\r\n");
  ASSERT_EQ(Call(c, {"SET", "foo", "bar"}), "+OK\r\n");
  ASSERT_EQ(Call(c, {"SET", "foo", "baz"}), "+OK\r\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const std::string incr = ReadFile(dir.path() + "/appendonlydir/appendonly.aof.1.incr.aof");
  EXPECT_EQ(incr.rfind("#TS:", 0), 0u) << incr;
  EXPECT_LE(Count(incr, "#TS:"), 2u);  // one a second at most (the two SETs may straddle one)
  ASSERT_EQ(Call(c, {"BGREWRITEAOF"}), "+Background append only file rewriting started\r\n");
  ASSERT_TRUE(WaitInfo(c, "aof_rewrite_in_progress", "0", 5000, "persistence"));
  EXPECT_EQ(ReadFile(dir.path() + "/appendonlydir/appendonly.aof.2.base.aof").rfind("#TS:", 0), 0u);
  const std::string digest = Call(c, {"DEBUG", "DIGEST"});
  ASSERT_EQ(Call(c, {"DEBUG", "LOADAOF"}), "+OK\r\n");
  EXPECT_EQ(Call(c, {"DEBUG", "DIGEST"}), digest);
}

TEST(AofManifestE2E, DebugAofFlushSleep) {
  TestServer s({"--save", "", "--enable-debug-command", "yes", "--appendonly", "yes", "--appendfsync", "always"});
  RawConn c(s.port());
  ASSERT_EQ(Call(c, {"DEBUG", "AOF-FLUSH-SLEEP", "300000"}), "+OK\r\n");
  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(Call(c, {"INCR", "n"}), ":1\r\n");  // its reply waits for the (slowed) write
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(250));
  ASSERT_EQ(Call(c, {"DEBUG", "AOF-FLUSH-SLEEP", "0"}), "+OK\r\n");
}

// A script of the AOF that runs past busy-reply-threshold serves other
// clients meanwhile: they are told the server is loading, as by Redis.
TEST(AofManifestE2E, AScriptRunningFromTheAofAnswersLoading) {
  TempDir dir;
  TestServer s(InDirLogged(dir, {"--appendonly", "yes", "--busy-reply-threshold", "1"}));
  ASSERT_TRUE(s.ready());
  WriteFile(dir.path() + "/appendonlydir/appendonly.aof.1.incr.aof",
            Resp({"EVAL", "redis.call('set',KEYS[1],'y'); for i=1,1000000 do redis.call('ping') end return 'ok'", "1",
                  "x"}));
  RawConn loader(s.port()), c(s.port());
  ASSERT_TRUE(loader.Send(Resp({"DEBUG", "LOADAOF"})));
  std::string reply;
  for (int i = 0; i < 200; ++i) {
    reply = Call(c, {"PING"});
    if (reply != "+PONG\r\n") break;
  }
  EXPECT_EQ(reply, "-LOADING Redis is loading the dataset in memory\r\n");
  // The script may outlast a read timeout (5 s) on a loaded machine.
  std::string loaded = "<eof>";
  for (int i = 0; i < 12 && loaded == "<eof>"; ++i) loaded = loader.ReadReply();
  EXPECT_EQ(loaded, "+OK\r\n");
  EXPECT_EQ(Call(c, {"GET", "x"}), "$1\r\ny\r\n");
  EXPECT_NE(ReadFile(dir.path() + "/log.txt").find("Slow script detected"), std::string::npos);
}

}  // namespace
}  // namespace ringkv::testing::aof_manifest_e2e_test
