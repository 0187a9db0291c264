// End-to-end tests of what happens around a start-up load and snapshots
// taken by tools: clients served while the dataset loads (INFO loading_*,
// -LOADING, a shutdown that stops the load), and redis-cli --rdb /
// --functions-rdb (REPLCONF rdb-only / rdb-filter-only).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/persistence_test_util.h"
namespace ringkv::testing::startup_load_e2e_test {
namespace {

// Leaves dir/dump.rdb with `keys` keys of 1000 bytes and returns its digest.
std::string SaveBigRdb(const TempDir& dir, int keys) {
  TestServer s(InDir(dir, {"--rdbcompression", "no"}));
  EXPECT_TRUE(s.ready());
  RawConn c(s.port());
  EXPECT_EQ(Call(c, {"DEBUG", "POPULATE", std::to_string(keys), "key", "1000"}), "+OK\r\n");
  EXPECT_EQ(Call(c, {"SAVE"}), "+OK\r\n");
  return Digest(c);
}

// A start-up load serves clients between keys, as Redis's does: INFO says
// loading:1 with the loading_* progress fields, a command that needs the
// data answers -LOADING, a client that leaves is freed at once, and the
// loaded dataset is whole.
TEST(StartupLoadE2E, ClientsAreServedWhileTheDatasetLoads) {
  TempDir dir;
  const std::string digest = SaveBigRdb(dir, 20000);
  // 20,000 keys at 100 us each: about 2 s of loading.
  TestServer s(InDir(dir, {"--key-load-delay", "100", "--loading-process-events-interval-bytes", "1024"}),
               RINGKV_SERVER_PATH, "", TestServer::WaitFor::kAnswer);
  ASSERT_TRUE(s.ready());
  RawConn c(s.port());
  EXPECT_EQ(Info(c, "loading"), "1");
  EXPECT_NE(Info(c, "loading_total_bytes"), "");
  EXPECT_NE(Info(c, "loading_loaded_perc"), "");
  EXPECT_EQ(Call(c, {"GET", "key:1"}), "-LOADING Redis is loading the dataset in memory\r\n");
  EXPECT_EQ(Call(c, {"DEBUG", "LOG", "hello"}), "+OK\r\n");  // flagged `loading`: runs
  // Parameters Redis marks DENY_LOADING answer -LOADING, whatever else
  // their CONFIG SET would say (dir is protected here); others are set.
  EXPECT_EQ(Call(c, {"CONFIG", "SET", "dir", "/tmp"}), "-LOADING Redis is loading the dataset in memory\r\n");
  EXPECT_EQ(Call(c, {"CONFIG", "SET", "appendonly", "yes"}), "-LOADING Redis is loading the dataset in memory\r\n");
  EXPECT_EQ(Call(c, {"CONFIG", "SET", "loglevel", "debug"}), "+OK\r\n");
  {
    std::vector<std::unique_ptr<RawConn>> passing;
    for (int i = 0; i < 5; ++i) {
      passing.push_back(std::make_unique<RawConn>(s.port()));
      EXPECT_EQ(Call(*passing.back(), {"DEBUG", "LOG", "bla"}), "+OK\r\n");
    }
    EXPECT_EQ(Info(c, "connected_clients", "clients"), "6");
  }
  bool freed = false;
  for (int i = 0; i < 100 && !freed; ++i) {
    freed = Info(c, "connected_clients", "clients") == "1";
    if (!freed) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(freed);
  EXPECT_EQ(Info(c, "loading"), "1");  // still loading: the clients were freed during the load
  ASSERT_TRUE(WaitInfo(c, "loading", "0", 60000, "persistence"));
  EXPECT_EQ(Info(c, "loading_total_bytes"), "");  // only while loading
  EXPECT_EQ(Digest(c), digest);
  EXPECT_EQ(Call(c, {"DBSIZE"}), ":20000\r\n");
}

// SIGTERM during the start-up load stops it, saves nothing (the file on
// disk is not replaced by half of it), and exits 0 as Redis does.
TEST(StartupLoadE2E, ShutdownDuringTheLoadSavesNothing) {
  TempDir dir;
  SaveBigRdb(dir, 20000);
  const std::string before = ReadFile(dir / "dump.rdb");
  TestServer s({"--dir", dir.path(), "--enable-debug-command", "yes", "--key-load-delay", "100",
                "--loading-process-events-interval-bytes", "1024"},
               RINGKV_SERVER_PATH, "", TestServer::WaitFor::kAnswer);
  ASSERT_TRUE(s.ready());
  {
    RawConn c(s.port());
    EXPECT_EQ(Info(c, "loading"), "1");
  }
  const int status = s.Stop();  // SIGTERM (the default save points would save)
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(ReadFile(dir / "dump.rdb"), before);
}


// redis-cli --rdb / --functions-rdb (REPLCONF rdb-only, rdb-filter-only):
// the snapshot it receives has every key, or only the functions, from a
// disk-based and a diskless primary alike.
TEST(RdbSnapshotE2E, RedisCliRdbAndFunctionsOnlyRdb) {
  if (!HaveTool("redis-cli")) GTEST_SKIP() << "redis-cli not installed";
  TempDir dir;
  TestServer s(InDir(dir));
  ASSERT_TRUE(s.ready());
  RawConn c(s.port());
  ASSERT_EQ(Call(c, {"DEBUG", "POPULATE", "1000"}), "+OK\r\n");
  ASSERT_EQ(Call(c, {"FUNCTION", "LOAD", "#!lua name=lib1\nredis.register_function('func1', function() return 123 end)"}),
            "$4\r\nlib1\r\n");
  for (const std::string diskless : {"no", "yes"}) {
    ASSERT_EQ(Call(c, {"CONFIG", "SET", "repl-diskless-sync", diskless, "repl-diskless-sync-delay", "0"}), "+OK\r\n");
    for (const bool functions_only : {false, true}) {
      SCOPED_TRACE(diskless + (functions_only ? " functions-only" : " full"));
      const std::string file = dir / "cli.rdb";
      std::filesystem::remove(file);
      std::string out;
      ASSERT_EQ(RunShell("redis-cli -p " + std::to_string(s.port()) + (functions_only ? " --functions-rdb " : " --rdb ") + file,
                         &out),
                0)
          << out;
      EXPECT_NE(out.find("Transfer finished with success"), std::string::npos) << out;
      // The file loads in a fresh server: all the keys, or none; the library either way.
      TempDir load_dir;
      std::filesystem::copy_file(file, load_dir / "dump.rdb");
      TestServer loaded(InDir(load_dir));
      ASSERT_TRUE(loaded.ready());
      RawConn l(loaded.port());
      EXPECT_EQ(Call(l, {"DBSIZE"}), functions_only ? ":0\r\n" : ":1000\r\n");
      EXPECT_EQ(Call(l, {"FCALL", "func1", "0"}), ":123\r\n");
    }
  }
  // Only "functions" is a filter Redis knows.
  RawConn r(s.port());
  EXPECT_EQ(Call(r, {"REPLCONF", "rdb-filter-only", "keys"}), "-ERR Unsupported rdb-filter-only option: keys\r\n");
  EXPECT_EQ(Call(r, {"REPLCONF", "rdb-only", "2"}), "-ERR value is out of range, value must between 0 and 1\r\n");
}

}  // namespace
}  // namespace ringkv::testing::startup_load_e2e_test
