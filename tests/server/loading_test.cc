// Loading (server/loading.h) driven through a fake server: the start-up
// load of an RDB file as a primary and as a replica (the replication history
// it carries, the keys found expired), a load a shutdown stops, DEBUG
// RELOAD's all-or-nothing, and the AOF replayed file by file on fresh fake
// clients. Each test runs in its own temporary directory (the RDB and AOF
// files are relative to the working directory).
#include "server/loading.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/string_value.h"
#include "core/strings.h"
#include "server/clock.h"
#include "tests/server/fake_server_parts.h"

namespace ringkv::server::loading_test {
namespace {

using test_fakes::Resp;

std::string Join(std::span<const std::string_view> argv) {
  std::string out;
  for (std::string_view a : argv) out += (out.empty() ? "" : " ") + std::string(a);
  return out;
}

// A fake server: a log of what the load asked of it. The AOF commands are
// logged with the fake client they ran on (numbered in order of first use)
// and whether that client was the load's AOF client at the time.
class FakeHooks final : public Loading::Hooks {
 public:
  absl::Status ReplayAofCommand(Client& fake_client, Argv argv, bool in_transaction) override {
    auto [it, added] = clients_.emplace(&fake_client, clients_.size() + 1);
    log.push_back(StrCat("aof client", it->second, loading->IsAofClient(fake_client) ? "" : " (not the AOF's)",
                         " db", fake_client.db, in_transaction ? " in-tx " : " ", Join(argv)));
    if (argv[0] == "NOSUCH") return absl::DataLossError("Unknown command 'NOSUCH'");
    return absl::OkStatus();
  }
  bool ServeWhileLoading() override {
    ++served;
    if (!loading->active()) log.push_back("served while not loading");
    return !shutdown_asked;
  }
  void RestoreReplicationHistory(const RdbLoadStats& loaded, bool as_replica) override {
    log.push_back(StrCat("history ", loaded.repl_id, " ", loaded.repl_offset, " db", loaded.repl_stream_db,
                         as_replica ? " as replica" : " as primary"));
  }
  void FeedExpiredAtLoad(int db, Argv argv) override { log.push_back(StrCat("feed db", db, " ", Join(argv))); }
  absl::Status LoadFunctionLibraries(const std::vector<std::string>& codes, Loading::FunctionLoadMode) override {
    log.push_back(StrCat("functions ", codes.size()));
    return absl::OkStatus();
  }

  void DatasetReplacing() override { log.push_back("replacing"); }

  std::vector<std::string> TakeLog() { return std::exchange(log, {}); }

  Loading* loading = nullptr;
  bool shutdown_asked = false;
  int served = 0;
  std::vector<std::string> log;

 private:
  std::map<const Client*, size_t> clients_;
};

class LoadingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(dir_.Enter("ringkv-loading-test-"));
    hooks_.loading = &loading_;
  }

  void AddKey(int db, const std::string& key, const std::string& value, int64_t expire_ms = -1) {
    bool created = false;
    core::Entry* e = keyspace_.db(db).FindOrInsert(key, UnixMs(), &created);
    e->value = core::StringValue(value);
    if (expire_ms >= 0) keyspace_.db(db).SetExpire(key, e, expire_ms);
  }
  std::string Get(int db, const std::string& key) {
    core::Entry* e = keyspace_.db(db).Peek(key);
    return e == nullptr ? "(nil)" : e->value.str().ToString();
  }
  // Saves the keyspace as dbfilename (with a replication history when
  // `repl_id` is set), then empties it, as a restart would find it.
  void SaveAndEmpty(const std::string& repl_id = "", int64_t repl_offset = 0, int stream_db = 0) {
    persistence_.rdb().set_repl_info([=] {
      RdbSaveOptions o;
      o.repl_id = repl_id;
      o.repl_offset = repl_offset;
      o.repl_stream_db = stream_db;
      return o;
    });
    ASSERT_TRUE(persistence_.Save(UnixMs()).ok());
    for (int i = 0; i < keyspace_.count(); ++i) keyspace_.db(i).Clear();
  }
  void WriteAofFiles(const std::vector<std::string>& bodies) {
    std::filesystem::create_directory("appendonlydir");
    std::ofstream manifest("appendonlydir/appendonly.aof.manifest");
    for (size_t i = 0; i < bodies.size(); ++i) {
      const std::string name = StrCat("appendonly.aof.", i + 1, ".incr.aof");
      manifest << "file " << name << " seq " << i + 1 << " type i\n";
      std::ofstream("appendonlydir/" + name, std::ios::binary) << bodies[i];
    }
  }

  test_fakes::TempWorkingDir dir_;
  FakeHooks hooks_;
  test_fakes::NoPersistenceHooks persistence_hooks_;
  Config config_;
  core::Keyspace keyspace_{16};
  uint64_t dirty_ = 0;
  LatencyMonitor latency_;
  Persistence persistence_{persistence_hooks_, config_, keyspace_, dirty_, latency_};
  Loading loading_{hooks_, config_, keyspace_, persistence_, dirty_};
};

TEST_F(LoadingTest, NoFileIsAnEmptyDatasetAndTheLoadEnds) {
  dirty_ = 5;
  ASSERT_TRUE(loading_.LoadAtStartup().ok());
  EXPECT_FALSE(loading_.active());
  EXPECT_EQ(keyspace_.db(0).size(), 0u);
  EXPECT_EQ(dirty_, 0u);
  EXPECT_EQ(keyspace_.expiry_mode(), core::ExpiryMode::kDelete);
  EXPECT_TRUE(hooks_.TakeLog().empty());
}

TEST_F(LoadingTest, APrimaryContinuesTheFilesHistoryAndDeletesWhatExpiredThroughItsStream) {
  AddKey(0, "live", "1");
  AddKey(3, "gone", "2", UnixMs() - 1000);
  SaveAndEmpty("0123456789012345678901234567890123456789", 1234, 3);
  ASSERT_TRUE(loading_.LoadAtStartup().ok());
  EXPECT_FALSE(loading_.active());
  EXPECT_EQ(Get(0, "live"), "1");
  EXPECT_EQ(keyspace_.db(3).Peek("gone"), nullptr);
  EXPECT_EQ(hooks_.TakeLog(), (std::vector<std::string>{
                                  "functions 0",
                                  "history 0123456789012345678901234567890123456789 1234 db3 as primary",
                                  "feed db3 DEL gone",
                              }));
}

TEST_F(LoadingTest, AReplicasOwnFileKeepsItsExpiredKeysForItsPrimarysDels) {
  AddKey(0, "gone", "2", UnixMs() - 1000);
  SaveAndEmpty("0123456789012345678901234567890123456789", 77, 5);
  ASSERT_TRUE(config_.SetValue("replicaof", {"127.0.0.1", "6379"}).ok());
  ASSERT_TRUE(loading_.LoadAtStartup().ok());
  EXPECT_NE(keyspace_.db(0).Peek("gone"), nullptr);
  EXPECT_EQ(hooks_.TakeLog(), (std::vector<std::string>{
                                  "functions 0",
                                  "history 0123456789012345678901234567890123456789 77 db5 as replica",
                              }));
}

TEST_F(LoadingTest, AShutdownDuringTheLoadStopsItAndTheStateStaysLoading) {
  for (int i = 0; i < 2000; ++i) AddKey(0, StrCat("key:", i), std::string(100, 'x'));
  SaveAndEmpty();
  ASSERT_TRUE(config_.SetValue("loading-process-events-interval-bytes", {"1024"}).ok());
  hooks_.shutdown_asked = true;
  EXPECT_TRUE(absl::IsCancelled(loading_.LoadAtStartup()));
  EXPECT_EQ(hooks_.served, 1);
  EXPECT_TRUE(loading_.active());  // nothing half-loaded is saved
  EXPECT_GT(loading_.progress().loaded_bytes(), 0u);
}

TEST_F(LoadingTest, ALongLoadServesTheOthersWhileActive) {
  for (int i = 0; i < 2000; ++i) AddKey(0, StrCat("key:", i), std::string(100, 'x'));
  SaveAndEmpty();
  ASSERT_TRUE(config_.SetValue("loading-process-events-interval-bytes", {"1024"}).ok());
  ASSERT_TRUE(loading_.LoadAtStartup().ok());
  // A turn per KB of the file: about 40 KB once the values are compressed.
  EXPECT_GT(hooks_.served, 20);
  EXPECT_EQ(keyspace_.db(0).size(), 2000u);
  EXPECT_EQ(hooks_.TakeLog(), (std::vector<std::string>{"functions 0"}));  // served only while loading
}

TEST_F(LoadingTest, DebugReloadOfACorruptFileKeepsTheDataset) {
  AddKey(0, "k", "v");
  std::ofstream("dump.rdb", std::ios::binary) << "REDIS0010garbage";
  EXPECT_FALSE(loading_.DebugReload(/*save=*/false, /*flush=*/true, /*merge=*/false).ok());
  EXPECT_FALSE(loading_.active());
  EXPECT_EQ(Get(0, "k"), "v");
  EXPECT_TRUE(hooks_.TakeLog().empty());  // the libraries are not touched either
}

TEST_F(LoadingTest, DebugReloadWithoutFlushRefusesADuplicateKeyUnlessMerging) {
  AddKey(0, "both", "file");
  AddKey(0, "only-file", "f");
  SaveAndEmpty();
  AddKey(0, "both", "memory");
  AddKey(0, "only-memory", "m");
  EXPECT_FALSE(loading_.DebugReload(/*save=*/false, /*flush=*/false, /*merge=*/false).ok());
  EXPECT_EQ(Get(0, "both"), "memory");
  EXPECT_EQ(Get(0, "only-file"), "(nil)");
  ASSERT_TRUE(loading_.DebugReload(/*save=*/false, /*flush=*/false, /*merge=*/true).ok());
  // NOFLUSH replaces nothing (the refused reload and this one loaded the libraries).
  EXPECT_EQ(hooks_.TakeLog(), (std::vector<std::string>{"functions 0", "functions 0"}));
  EXPECT_EQ(Get(0, "both"), "file");
  EXPECT_EQ(Get(0, "only-file"), "f");
  EXPECT_EQ(Get(0, "only-memory"), "m");
}

TEST_F(LoadingTest, EachAofFileReplaysOnAFreshFakeClientInDatabaseZero) {
  WriteAofFiles({Resp({"SET", "a", "1"}) + Resp({"MULTI"}) + Resp({"SET", "b", "2"}) + Resp({"EXEC"}),
                 Resp({"SET", "c", "3"})});
  AddKey(0, "before", "x");
  dirty_ = 3;
  ASSERT_TRUE(loading_.DebugLoadAof().ok());
  EXPECT_FALSE(loading_.active());
  EXPECT_EQ(Get(0, "before"), "(nil)");  // the AOF replaces the dataset
  EXPECT_EQ(dirty_, 0u);
  std::vector<std::string> log = hooks_.TakeLog();
  ASSERT_GE(log.size(), 2u);
  EXPECT_EQ(log[0], "replacing");  // WATCH, blocked clients and tracking told first
  EXPECT_EQ(log[1], "aof client1 db0 SET a 1");
  EXPECT_EQ(log.back(), "aof client2 db0 SET c 3");
  EXPECT_NE(std::find(log.begin(), log.end(), "aof client1 db0 in-tx SET b 2"), log.end());
  // Between loads there is no AOF client.
  EXPECT_FALSE(loading_.has_aof_client());
}

TEST_F(LoadingTest, AnUnreadableAofPutsThePreviousDatasetBack) {
  WriteAofFiles({Resp({"SET", "a", "1"}) + Resp({"NOSUCH"})});
  AddKey(0, "before", "x");
  EXPECT_FALSE(loading_.DebugLoadAof().ok());
  EXPECT_FALSE(loading_.active());
  EXPECT_EQ(Get(0, "before"), "x");
}

}  // namespace
}  // namespace ringkv::server::loading_test
