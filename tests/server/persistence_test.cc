// Persistence (server/persistence/persistence.h) driven through a fake
// server: saves, the fork child and its reaping, FLUSHALL's stop of a
// diskless transfer, SHUTDOWN's persistence work, and replies held for
// an fsync with appendfsync always. Each test runs in its own temporary
// directory (the RDB and AOF files are relative to the working directory).
#include "server/persistence/persistence.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/string_value.h"
#include "server/clock.h"
#include "server/persistence/rdb_snapshot.h"
#include "tests/server/fake_server_parts.h"

namespace ringkv::server::persistence_test {
namespace {

// A fake server: a log of what persistence asked for, the fsyncs it
// submitted, and the held replies it delivered.
class FakeHooks final : public Persistence::Hooks {
 public:
  void SubmitFsync(int fd, uint32_t token) override {
    (void)fd;
    fsyncs.push_back(token);
  }
  void DeliverHeldReplies(uint64_t id, io::OutBuffer& out) override {
    log.push_back("deliver " + std::to_string(id) + " " + out.ToString());
  }
  void HeldRepliesReleased(uint64_t id) override { log.push_back("released " + std::to_string(id)); }
  void WakeInUs(int64_t us) override { wakes.push_back(us); }
  void OnAofDurable() override { log.push_back("aof-durable"); }
  bool DisklessTransferRunning() override { return transfer_running; }
  void OnDisklessTransferExited(bool ok) override {
    log.push_back(std::string("transfer-exited ") + (ok ? "ok" : "err"));
  }
  void AbortDisklessTransfer(std::string_view why) override { log.push_back("abort-transfer " + std::string(why)); }
  void OnRdbFileDone(bool ok) override { log.push_back(std::string("rdb-file-done ") + (ok ? "ok" : "err")); }
  void UnlinkInBackground(std::vector<std::string> paths) override {
    for (const std::string& p : paths) std::remove(p.c_str());
  }

  std::vector<std::string> TakeLog() { return std::exchange(log, {}); }

  bool transfer_running = false;
  std::vector<uint32_t> fsyncs;
  std::vector<int64_t> wakes;  // WakeInUs's arguments
  std::vector<std::string> log;
};

using test_fakes::Set;

bool Exists(const char* path) {
  struct stat st {};
  return ::stat(path, &st) == 0;
}

class PersistenceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(dir_.Enter("ringkv-persistence-test-"));
    persistence_.BindConfig();
  }
  void TearDown() override {
    // A child still running (a failed test) must not outlive the test.
    if (persistence_.child().running()) {
      ChildResult r;
      persistence_.child().Kill(&r);
    }
  }
  // Reaps the fork child, waiting up to ten seconds for it to end (and
  // stepping an in-process one, as the loop's turns do).
  void WaitForChild() {
    for (int i = 0; i < 1000 && persistence_.child().running(); ++i) {
      persistence_.BeforeSleep();
      persistence_.ReapChild(UnixMs());
      if (persistence_.child().running()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_FALSE(persistence_.child().running());
  }
  void AddKey(const std::string& key) {
    bool created = false;
    core::Entry* e = keyspace_.db(0).FindOrInsert(key, UnixMs(), &created);
    e->value = core::StringValue("v");
    ++dirty_;
  }

  test_fakes::TempWorkingDir dir_;
  FakeHooks hooks_;
  Config config_;
  core::Keyspace keyspace_{16};
  uint64_t dirty_ = 0;
  LatencyMonitor latency_;
  Persistence persistence_{hooks_, config_, keyspace_, dirty_, latency_};
};

TEST_F(PersistenceTest, SaveWritesTheFileAndResetsDirty) {
  AddKey("k");
  ASSERT_TRUE(persistence_.Save(UnixMs()).ok());
  EXPECT_TRUE(Exists("dump.rdb"));
  EXPECT_EQ(dirty_, 0u);
  EXPECT_TRUE(persistence_.ok());
  EXPECT_EQ(persistence_.Error(), "");
  EXPECT_TRUE(hooks_.TakeLog().empty());
}

TEST_F(PersistenceTest, SavePointsAndTheAofDecideWhetherPersistenceIsDisabled) {
  EXPECT_TRUE(persistence_.has_save_points());  // Redis's default save points
  EXPECT_FALSE(persistence_.disabled());
  Set(config_, "save", "");
  EXPECT_FALSE(persistence_.has_save_points());
  EXPECT_TRUE(persistence_.disabled());
}

TEST_F(PersistenceTest, AReapedBackgroundSaveTellsTheFullSyncsWaitingForAFile) {
  AddKey("k");
  ASSERT_TRUE(persistence_.BackgroundSave(UnixMs()).ok());
  EXPECT_EQ(persistence_.child().type(), ChildType::kRdb);
  WaitForChild();
  EXPECT_EQ(hooks_.TakeLog(), (std::vector<std::string>{"rdb-file-done ok"}));
  EXPECT_TRUE(Exists("dump.rdb"));
  EXPECT_EQ(dirty_, 0u);
}

TEST_F(PersistenceTest, ADisklessTransfersChildIsHandedBackWithoutSaveStats) {
  AddKey("k");
  ASSERT_TRUE(persistence_.BackgroundSave(UnixMs()).ok());
  hooks_.transfer_running = true;  // the fake says the RDB child is a transfer's
  WaitForChild();
  EXPECT_EQ(hooks_.TakeLog(), (std::vector<std::string>{"transfer-exited ok"}));
  EXPECT_EQ(dirty_, 1u);  // no save was counted
}

TEST_F(PersistenceTest, FlushAllStopsADisklessTransferAndSavesWithSavePoints) {
  hooks_.transfer_running = true;
  persistence_.BeforeFlushAll();
  persistence_.AfterFlushAll(UnixMs());
  EXPECT_EQ(hooks_.TakeLog(),
            (std::vector<std::string>{"abort-transfer FLUSHALL: stopping the diskless transfer to replicas"}));
  EXPECT_TRUE(Exists("dump.rdb"));  // the empty dump
}

TEST_F(PersistenceTest, FlushAllKillsAnRdbChildAndFailsItsFullSyncs) {
  Set(config_, "save", "");
  Set(config_, "rdb-key-save-delay", "1000000");  // the child stays busy
  AddKey("k");
  ASSERT_TRUE(persistence_.BackgroundSave(UnixMs()).ok());
  persistence_.BeforeFlushAll();
  persistence_.AfterFlushAll(UnixMs());
  EXPECT_FALSE(persistence_.child().running());
  EXPECT_EQ(hooks_.TakeLog(), (std::vector<std::string>{"rdb-file-done err"}));
  EXPECT_FALSE(Exists("dump.rdb"));  // no save points: nothing written
}

TEST_F(PersistenceTest, KillChildStopsItAndRemovesTheFileItWasWriting) {
  persistence_.KillChild(/*remove_temp_file=*/true);  // none running: nothing happens
  Set(config_, "rdb-key-save-delay", "1000000");     // the child stays busy
  AddKey("k");
  ASSERT_TRUE(persistence_.BackgroundSave(UnixMs()).ok());
  const std::string temp = "temp-" + std::to_string(persistence_.child().pid()) + ".rdb";
  for (int i = 0; i < 500 && !Exists(temp.c_str()); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(Exists(temp.c_str()));
  persistence_.KillChild(/*remove_temp_file=*/true);
  EXPECT_FALSE(persistence_.child().running());
  EXPECT_FALSE(Exists(temp.c_str()));
  EXPECT_TRUE(hooks_.TakeLog().empty());  // the caller tells whom it concerns
}

TEST_F(PersistenceTest, AnInProcessSaveIsSteppedByTheLoopAndWritesTheKeysOfItsStart) {
  Set(config_, "snapshot-fork", "no");
  for (int i = 0; i < 5000; ++i) AddKey("k" + std::to_string(i));
  ASSERT_TRUE(persistence_.BackgroundSave(UnixMs()).ok());
  EXPECT_TRUE(persistence_.child().in_process());
  EXPECT_EQ(persistence_.child().type(), ChildType::kRdb);
  EXPECT_EQ(persistence_.child().total_forks(), 0u);
  keyspace_.db(0).Erase("k1");  // after the start: still in the file
  AddKey("late");                // after the start: not in the file
  EXPECT_FALSE(persistence_.BackgroundSave(UnixMs()).ok());  // one at a time
  WaitForChild();
  EXPECT_FALSE(hooks_.wakes.empty());  // it asked the loop for its turns
  EXPECT_EQ(hooks_.TakeLog(), (std::vector<std::string>{"rdb-file-done ok"}));
  EXPECT_EQ(dirty_, 1u);  // AddKey("late") came after the start: still to be saved
  core::Keyspace loaded(16);
  absl::StatusOr<RdbLoadStats> stats = LoadRdbFile("dump.rdb", loaded, UnixMs(), /*replace=*/false);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(loaded.db(0).size(), 5000u);
  EXPECT_NE(loaded.db(0).Find("k1", UnixMs()), nullptr);
  EXPECT_EQ(loaded.db(0).Find("late", UnixMs()), nullptr);
  EXPECT_FALSE(Exists(("temp-bg-" + std::to_string(getpid()) + ".rdb").c_str()));
}

TEST_F(PersistenceTest, KillChildAbandonsAnInProcessSaveAndRemovesItsFile) {
  Set(config_, "snapshot-fork", "no");
  Set(config_, "rdb-key-save-delay", "1000000");  // one key a second
  for (int i = 0; i < 10; ++i) AddKey("k" + std::to_string(i));
  ASSERT_TRUE(persistence_.BackgroundSave(UnixMs()).ok());
  persistence_.BeforeSleep();
  const std::string temp = "temp-bg-" + std::to_string(getpid()) + ".rdb";
  EXPECT_TRUE(Exists(temp.c_str()));
  EXPECT_TRUE(keyspace_.db(0).snapshot_attached());
  persistence_.KillChild(/*remove_temp_file=*/true);
  EXPECT_FALSE(persistence_.child().running());
  EXPECT_FALSE(keyspace_.db(0).snapshot_attached());  // the keyspace is let go
  EXPECT_FALSE(Exists(temp.c_str()));
  EXPECT_FALSE(Exists("dump.rdb"));
}

TEST_F(PersistenceTest, ShutdownSavesAsAskedOrAsTheSavePointsSay) {
  AddKey("k");
  ASSERT_TRUE(persistence_.PrepareForShutdown(ShutdownSave::kNoSave, false).ok());
  EXPECT_FALSE(Exists("dump.rdb"));
  Set(config_, "save", "");
  ASSERT_TRUE(persistence_.PrepareForShutdown(ShutdownSave::kDefault, false).ok());
  EXPECT_FALSE(Exists("dump.rdb"));
  ASSERT_TRUE(persistence_.PrepareForShutdown(ShutdownSave::kSave, false).ok());
  EXPECT_TRUE(Exists("dump.rdb"));
}

TEST_F(PersistenceTest, ShutdownRefusesWhileTheInitialAofIsWritten) {
  Set(config_, "appendonly", "yes");  // starts the initial rewrite (a child)
  ASSERT_EQ(persistence_.aof().state(), AofState::kWaitRewrite);
  absl::Status s = persistence_.PrepareForShutdown(ShutdownSave::kNoSave, false);
  EXPECT_EQ(s.message(), "Writing initial AOF, can't exit.");
  EXPECT_TRUE(persistence_.child().running());
}

TEST_F(PersistenceTest, WithAppendfsyncAlwaysRepliesWaitForTheirFsync) {
  Set(config_, "appendfsync", "always");
  Set(config_, "appendonly", "yes");
  WaitForChild();  // the initial rewrite
  ASSERT_EQ(persistence_.aof().state(), AofState::kOn);
  EXPECT_FALSE(persistence_.MustHoldReply(false));
  EXPECT_TRUE(persistence_.MustHoldReply(true));  // a write's reply

  const std::string_view set[] = {"SET", "k", "v"};
  persistence_.aof().Feed(0, set);
  EXPECT_TRUE(persistence_.MustHoldReply(false));  // it may have read unsynced bytes
  persistence_.HeldReplyTarget(7).Append("+OK\r\n");
  persistence_.RequireDurable(7);
  EXPECT_EQ(persistence_.held_bytes(7), 5u);
  hooks_.TakeLog();

  persistence_.BeforeSleep();  // writes the AOF, asks for its fsync
  persistence_.EndTurn();
  EXPECT_TRUE(hooks_.TakeLog().empty());  // still held
  ASSERT_FALSE(hooks_.fsyncs.empty());
  for (size_t i = 0; i < hooks_.fsyncs.size(); ++i) persistence_.OnFsyncDone(hooks_.fsyncs[i], 0);
  const std::vector<std::string> log = hooks_.TakeLog();
  ASSERT_GE(log.size(), 3u);
  EXPECT_EQ(log[0], "deliver 7 +OK\r\n");
  EXPECT_EQ(log[1], "released 7");
  EXPECT_EQ(log[2], "aof-durable");
  EXPECT_EQ(persistence_.held_bytes(7), 0u);
  EXPECT_FALSE(persistence_.MustHoldReply(false));
}

// The fsync window (appendfsync always): a completion that released
// clients holds the next fsync until they have written again or half the
// last fsync's time has passed. The fake's fsyncs take as long as the test
// waits between submitting and completing them.
class FsyncWindowTest : public PersistenceTest {
 protected:
  void SetUp() override {
    PersistenceTest::SetUp();
    Set(config_, "appendfsync", "always");
    Set(config_, "appendonly", "yes");
    WaitForChild();  // the initial rewrite
    ASSERT_EQ(persistence_.aof().state(), AofState::kOn);
    CompleteAll();  // the rewrite's own fsyncs
    hooks_.TakeLog();
    hooks_.wakes.clear();
  }
  // Client `id` runs a SET: fed, its reply held until its fsync.
  void Write(uint64_t id) {
    const std::string_view set[] = {"SET", "k", "v"};
    persistence_.aof().Feed(0, set);
    persistence_.HeldReplyTarget(id).Append(":" + std::to_string(id) + "\r\n");
    persistence_.RequireDurable(id);
  }
  // The end of a loop turn.
  void EndTurn() {
    persistence_.BeforeSleep();
    persistence_.EndTurn();
  }
  // Fsyncs submitted and not completed yet.
  size_t Submitted() const { return hooks_.fsyncs.size() - completed_; }
  // Completes the oldest submitted fsync, `took` after it was submitted;
  // returns the clients it released, sorted.
  std::vector<std::string> Complete(std::chrono::milliseconds took = std::chrono::milliseconds(0)) {
    std::this_thread::sleep_for(took);
    persistence_.OnFsyncDone(hooks_.fsyncs.at(completed_++), 0);
    std::vector<std::string> released;
    for (const std::string& line : hooks_.TakeLog()) {
      if (line.rfind("released ", 0) == 0) released.push_back(line.substr(9));
    }
    std::sort(released.begin(), released.end());
    return released;
  }
  void CompleteAll() {
    while (Submitted() > 0) Complete();
  }

  size_t completed_ = 0;
};

using Ids = std::vector<std::string>;
// The window's cap is half of it: long enough that a slow (sanitized,
// loaded) test machine does not reach it between two steps of a test.
constexpr std::chrono::milliseconds kFsyncTime{500};

TEST_F(FsyncWindowTest, TheNextFsyncWaitsUntilTheReleasedClientsWriteAgain) {
  Write(1);
  Write(2);
  EndTurn();
  ASSERT_EQ(Submitted(), 1u);  // fsync A: clients 1 and 2
  Write(3);                    // arrives during A: joins the next one
  EndTurn();
  EXPECT_EQ(Submitted(), 1u);  // one fsync in flight at a time

  EXPECT_EQ(Complete(kFsyncTime), (Ids{"1", "2"}));
  EXPECT_TRUE(persistence_.fsync_window_open());
  EXPECT_EQ(Submitted(), 0u);  // client 3's write is queued, held
  ASSERT_EQ(hooks_.wakes.size(), 1u);
  EXPECT_GE(hooks_.wakes[0], kFsyncTime.count() * 1000 / 2);  // the loop wakes at the cap
  EndTurn();
  EXPECT_EQ(Submitted(), 0u);

  Write(1);  // back; client 2 is not yet
  EndTurn();
  EXPECT_EQ(Submitted(), 0u);
  Write(2);  // every released client is back: the window closes this turn
  EndTurn();
  EXPECT_FALSE(persistence_.fsync_window_open());
  ASSERT_EQ(Submitted(), 1u);  // fsync B, after this turn's write
  Write(4);                    // arrives during B
  EndTurn();

  // B releases every client whose write came before it was submitted:
  // 3 (during A), 1 and 2 (during the window); 4 waits for the next.
  EXPECT_EQ(Complete(kFsyncTime), (Ids{"1", "2", "3"}));
  EXPECT_GT(persistence_.held_bytes(4), 0u);
  EXPECT_EQ(persistence_.held_bytes(1), 0u);
}

TEST_F(FsyncWindowTest, TheWindowClosesAtItsCapWhenAReleasedClientDoesNotWrite) {
  Write(1);
  EndTurn();
  Write(2);  // during fsync A
  EndTurn();
  EXPECT_EQ(Complete(kFsyncTime), (Ids{"1"}));
  ASSERT_TRUE(persistence_.fsync_window_open());
  EndTurn();
  EXPECT_EQ(Submitted(), 0u);  // client 1 has not written again
  std::this_thread::sleep_for(kFsyncTime / 2 + std::chrono::milliseconds(20));
  EndTurn();  // the turn the cap's wake-up runs
  EXPECT_FALSE(persistence_.fsync_window_open());
  ASSERT_EQ(Submitted(), 1u);
  EXPECT_EQ(Complete(), (Ids{"2"}));
}

TEST_F(FsyncWindowTest, AReleasedClientThatIsGoneDoesNotHoldTheWindow) {
  Write(1);
  Write(2);
  EndTurn();
  Write(3);
  EndTurn();
  EXPECT_EQ(Complete(kFsyncTime), (Ids{"1", "2"}));
  Write(1);
  persistence_.DropHeldReplies(2);  // client 2 disconnected
  EndTurn();
  EXPECT_FALSE(persistence_.fsync_window_open());
  EXPECT_EQ(Submitted(), 1u);
}

TEST_F(FsyncWindowTest, NoWindowWhenTheFsyncReleasedNobody) {
  const std::string_view set[] = {"SET", "k", "v"};
  persistence_.aof().Feed(0, set);  // a write whose client holds nothing (a script's, a replica's)
  EndTurn();
  ASSERT_EQ(Submitted(), 1u);
  Write(1);
  EndTurn();
  EXPECT_TRUE(Complete(kFsyncTime).empty());
  EXPECT_FALSE(persistence_.fsync_window_open());
  EXPECT_TRUE(hooks_.wakes.empty());
  EXPECT_EQ(Submitted(), 1u);  // client 1's fsync started at once
  EXPECT_EQ(Complete(), (Ids{"1"}));
}

TEST_F(FsyncWindowTest, LeavingAppendfsyncAlwaysEndsTheWindow) {
  Write(1);
  EndTurn();
  Write(2);
  EndTurn();
  EXPECT_EQ(Complete(kFsyncTime), (Ids{"1"}));
  ASSERT_TRUE(persistence_.fsync_window_open());
  Set(config_, "appendfsync", "everysec");
  EXPECT_FALSE(persistence_.fsync_window_open());
  EXPECT_EQ(Submitted(), 1u);  // the held fsync went at once
  EXPECT_EQ(Complete(kFsyncTime), (Ids{"2"}));
  EXPECT_FALSE(persistence_.fsync_window_open());  // everysec: never held
}

}  // namespace
}  // namespace ringkv::server::persistence_test
