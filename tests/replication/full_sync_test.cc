// FullSync against a fake host: PSYNC answered from the backlog, full syncs
// through a snapshot file (shared by replicas that ask while it is written,
// sent when it is done, dropped when it failed, stopped when nobody waits),
// rdb-del-sync-files, and the diskless transfer (the $EOF: payload, replicas
// that must wait for the next one, the end of the pipe and of the child in
// either order, an ACK before the child is reaped, an abort).
#include "replication/full_sync.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "io/connection.h"
#include "replication/primary.h"
#include "tests/replication/fake_primary_host.h"

namespace ringkv::repl {
namespace {

using Progress = DisklessTransfer::Progress;

class FullSyncTest : public ::testing::Test {
 protected:
  void SetUp() override { host_.full_sync = &sync_; }

  // A replica's connection after its handshake (REPLCONF capa eof psync2).
  io::Connection* Conn(uint64_t id, bool capa_eof = true) {
    conns_.push_back(std::make_unique<io::Connection>());
    ReplicaLink& link = host_.EnsurePrimary().Attach(id, conns_.back().get());
    link.capa_eof = capa_eof;
    link.capa_psync2 = true;
    return conns_.back().get();
  }
  ReplicaLink& Link(uint64_t id) { return *primary_->Find(id); }
  std::string Sent(uint64_t id) const {
    std::string all;
    for (const auto& [to, bytes] : host_.sent) {
      if (to == id) all += bytes;
    }
    return all;
  }
  void Psync(uint64_t id, std::string_view replid, int64_t offset) {
    sync_.OnSyncRequest(id, Link(id).conn, replid, offset, /*old_sync=*/false);
  }
  void Diskless(int64_t delay_s = 0) {
    host_.config.plan.diskless_sync = true;
    host_.config.plan.delay_s = delay_s;
  }

  std::vector<std::unique_ptr<io::Connection>> conns_;  // outlive primary_ (declared first)
  std::unique_ptr<Primary> primary_;
  FakePrimaryHost host_{primary_};
  FullSync sync_{host_};
};

TEST_F(FullSyncTest, PartialResyncFromTheBacklog) {
  host_.ids.offset = 1000;
  Conn(1);
  const std::string_view ping[] = {"PING"};
  primary_->FeedRaw(ping);  // offsets 1001..1014
  Psync(1, host_.ids.replid, 1001);
  EXPECT_EQ(Sent(1), "+CONTINUE " + host_.ids.replid + "\r\n");
  EXPECT_EQ(Link(1).state, ReplicaState::kOnline);
  EXPECT_EQ(Link(1).next_offset, 1001u);
  EXPECT_EQ(host_.counts, std::vector<SyncCount>{SyncCount::kPartialOk});
  EXPECT_TRUE(host_.saves.empty());
  // Past what the backlog holds: a full sync, counted as a refused partial one.
  Conn(2);
  Psync(2, host_.ids.replid, 2000);
  EXPECT_EQ(host_.counts, (std::vector<SyncCount>{SyncCount::kPartialOk, SyncCount::kPartialErr, SyncCount::kFull}));
  EXPECT_EQ(Sent(2), "+FULLRESYNC " + host_.ids.replid + " 1014\r\n");
}

TEST_F(FullSyncTest, DiskSnapshotSharedByReplicasAskingMeanwhile) {
  Conn(1);
  Psync(1, "?", -1);
  EXPECT_EQ(host_.counts, std::vector<SyncCount>{SyncCount::kFull});  // "?": no partial attempt
  ASSERT_EQ(host_.saves.size(), 1u);
  EXPECT_EQ(host_.saves[0].replid, host_.ids.replid);
  EXPECT_EQ(host_.saves[0].offset, 0u);
  EXPECT_TRUE(sync_.save_in_progress());
  EXPECT_EQ(Sent(1), "+FULLRESYNC " + host_.ids.replid + " 0\r\n");
  EXPECT_EQ(Link(1).state, ReplicaState::kWaitBgsaveEnd);
  EXPECT_EQ(Link(1).next_offset, 1u);
  // An old SYNC replica joins the same save: no +FULLRESYNC line for it.
  Conn(2);
  sync_.OnSyncRequest(2, Link(2).conn, "?", -1, /*old_sync=*/true);
  EXPECT_EQ(host_.saves.size(), 1u);
  EXPECT_EQ(Link(2).state, ReplicaState::kWaitBgsaveEnd);
  EXPECT_EQ(Sent(2), "");
  // The child failed: both are dropped.
  host_.child_running = false;
  sync_.OnSaveDone(false);
  EXPECT_FALSE(sync_.save_in_progress());
  EXPECT_EQ(host_.dropped, (std::vector<uint64_t>{1, 2}));
  EXPECT_FALSE(sync_.has_sync_rdb_file());
}

TEST_F(FullSyncTest, FileSentWhenWrittenThenRemovedWhenUseless) {
  char path[] = "/tmp/full_sync_test_XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "REDIS0010", 9), 9);
  ::close(fd);
  host_.config.rdb_path = path;
  Conn(1);
  Psync(1, "?", -1);
  Conn(2);
  Psync(2, "?", -1);  // shares the save
  host_.child_running = false;
  sync_.OnSaveDone(true);
  EXPECT_EQ(host_.bulk_sizes, (std::vector<uint64_t>{9, 9}));
  EXPECT_EQ(Link(1).snapshot, Link(2).snapshot);  // one file, read once for both
  EXPECT_TRUE(host_.dropped.empty());
  ASSERT_TRUE(sync_.has_sync_rdb_file());
  // rdb-del-sync-files: kept while the file is being sent, then deleted.
  host_.config.remove_sync_rdb = true;
  sync_.RemoveRdbIfUseless();
  EXPECT_EQ(::access(path, F_OK), 0);
  Link(1).state = Link(2).state = ReplicaState::kOnline;
  sync_.RemoveRdbIfUseless();
  EXPECT_NE(::access(path, F_OK), 0);
  EXPECT_FALSE(sync_.has_sync_rdb_file());
}

TEST_F(FullSyncTest, MissingFileDropsTheReplicas) {
  host_.config.rdb_path = "/nonexistent/dump.rdb";
  Conn(1);
  Psync(1, "?", -1);
  host_.child_running = false;
  sync_.OnSaveDone(true);
  EXPECT_EQ(host_.dropped, std::vector<uint64_t>{1});
  EXPECT_TRUE(host_.bulk_sizes.empty());
}

TEST_F(FullSyncTest, SaveStoppedWhenNoReplicaWaitsUnlessSavePointsKeepIt) {
  Conn(1);
  Psync(1, "?", -1);
  Conn(2);
  Psync(2, "?", -1);
  host_.DropReplica(1);  // one still waits
  EXPECT_TRUE(host_.kills.empty());
  host_.config.has_save_points = true;
  host_.DropReplica(2);  // the file is worth having anyway
  EXPECT_TRUE(host_.kills.empty());
  EXPECT_TRUE(sync_.save_in_progress());

  Conn(3);
  host_.child_running = false;
  sync_.OnSaveDone(false);
  host_.config.has_save_points = false;
  Psync(3, "?", -1);
  ASSERT_EQ(host_.saves.size(), 2u);
  host_.DropReplica(3);
  EXPECT_EQ(host_.kills, std::vector<bool>{true});  // its temp file removed too
  EXPECT_FALSE(sync_.save_in_progress());
  EXPECT_FALSE(host_.child_running);
}

TEST_F(FullSyncTest, SaveThatCannotStartDropsItsReplicas) {
  host_.fork_error = absl::InternalError("fork: no memory");
  Conn(1);
  Psync(1, "?", -1);
  EXPECT_EQ(host_.dropped, std::vector<uint64_t>{1});
  EXPECT_FALSE(sync_.save_in_progress());
  EXPECT_EQ(Sent(1), "");
}

TEST_F(FullSyncTest, DisklessTransferStreamsTheEofPayload) {
  Diskless();
  Conn(1);
  Link(1).exclude_functions = true;  // REPLCONF rdb-filter-only "": no keys filtered, functions left out
  Psync(1, "?", -1);
  ASSERT_EQ(host_.forks.size(), 1u);
  EXPECT_TRUE(host_.saves.empty());
  EXPECT_TRUE(host_.forks[0].exclude_functions);
  EXPECT_FALSE(host_.forks[0].exclude_data);
  const std::string mark = host_.suffixes[0];
  ASSERT_EQ(mark.size(), 40u);
  EXPECT_EQ(host_.prefixes[0], "$EOF:" + mark + "\r\n");
  EXPECT_TRUE(sync_.transfer_running());
  EXPECT_FALSE(sync_.save_in_progress());
  EXPECT_EQ(Sent(1), "+FULLRESYNC " + host_.ids.replid + " 0\r\n");
  EXPECT_EQ(Link(1).state, ReplicaState::kWaitBgsaveEnd);
  ASSERT_EQ(host_.watched.size(), 1u);
  // The pipe the host forked into is the one watched: it holds the payload.
  std::string got(128, '\0');
  const ssize_t n = ::read(host_.watched[0].first, got.data(), got.size());
  ASSERT_GT(n, 0);
  got.resize(static_cast<size_t>(n));
  EXPECT_EQ(got, "$EOF:" + mark + "\r\nRDB" + mark);
}

TEST_F(FullSyncTest, DisklessReplicasArrivingLateWaitForTheNextTransfer) {
  Diskless();
  Conn(1);
  Psync(1, "?", -1);
  Conn(2);
  Psync(2, "?", -1);
  EXPECT_EQ(host_.forks.size(), 1u);
  EXPECT_EQ(Link(2).state, ReplicaState::kWaitBgsaveStart);
  EXPECT_EQ(Sent(2), "");
  // A poll of an older pipe is ignored; this one's is pumped.
  sync_.OnReadable(host_.watched.back().second + 7);
  EXPECT_EQ(host_.pumps, 0);
  host_.pump_results = {Progress::kWaiting, Progress::kThrottled};
  sync_.OnReadable(host_.watched.back().second);
  EXPECT_EQ(host_.watched.size(), 2u);  // watched again
  sync_.OnReadable(host_.watched.back().second);
  EXPECT_EQ(host_.wakes, 1);
  sync_.BeforeFlush();  // the throttled transfer reads on
  EXPECT_EQ(host_.pumps, 3);
  sync_.BeforeFlush();  // once
  EXPECT_EQ(host_.pumps, 3);
  // The pipe ends; the child is reaped then, having exited cleanly.
  host_.pump_results = {Progress::kEof};
  host_.child_exit_on_reap = true;
  sync_.BeforeFlush();
  sync_.OnReadable(host_.watched.back().second);
  EXPECT_EQ(host_.reaps, 1);
  EXPECT_EQ(Link(1).state, ReplicaState::kOnline);
  EXPECT_TRUE(Link(1).stream_on_ack);  // it has not ACKed yet
  // The next transfer starts at once, for the replica that waited.
  ASSERT_EQ(host_.forks.size(), 2u);
  EXPECT_TRUE(sync_.transfer_running());
  EXPECT_EQ(Link(2).state, ReplicaState::kWaitBgsaveEnd);
  EXPECT_EQ(Sent(2), "+FULLRESYNC " + host_.ids.replid + " 0\r\n");
}

TEST_F(FullSyncTest, DisklessReplicaOnlineOnAckBeforeTheChildIsReaped) {
  Diskless();
  Conn(1);
  Psync(1, "?", -1);
  Conn(2);
  Link(2).rdb_only = true;  // redis-cli --rdb
  Psync(2, "?", -1);        // (no delay: it waits for the next transfer)
  host_.pump_results = {Progress::kEof};
  sync_.OnReadable(host_.watched.back().second);
  EXPECT_EQ(host_.reaps, 1);  // the child has not exited yet
  EXPECT_TRUE(sync_.transfer_running());
  EXPECT_EQ(Link(1).state, ReplicaState::kWaitBgsaveEnd);
  Link(1).acked = true;
  sync_.OnReplicaAck(Link(1));
  EXPECT_EQ(Link(1).state, ReplicaState::kOnline);
  EXPECT_EQ(Link(1).last_ack_ms, host_.now_ms);
  // The cron reaps it later.
  host_.child_running = false;
  sync_.OnTransferChildExited(true);
  EXPECT_FALSE(Link(1).stream_on_ack);  // it ACKed: streaming already
  sync_.MaybeFinishTransfer();          // the cron's check: nothing left to do
  // The rdb-only replica's own transfer, then: closed once its payload is sent.
  ASSERT_EQ(host_.forks.size(), 2u);
  host_.pump_results = {Progress::kEof};
  host_.child_exit_on_reap = true;
  sync_.OnReadable(host_.watched.back().second);
  EXPECT_EQ(host_.closed_after_reply, std::vector<uint64_t>{2});
  EXPECT_FALSE(sync_.transfer_running());
}

TEST_F(FullSyncTest, DisklessAbortKillsTheChildAndDropsItsReplicas) {
  Diskless();
  Conn(1);
  Psync(1, "?", -1);
  Conn(2);
  Psync(2, "?", -1);  // waits for the next one
  sync_.AbortTransfer("FLUSHALL: stopping the diskless transfer to replicas");
  EXPECT_EQ(host_.kills, std::vector<bool>{false});  // no temp file to remove
  EXPECT_EQ(host_.dropped, std::vector<uint64_t>{1});
  // The next one starts for the replica that waited -- from the cron, as
  // Redis's, not at once (a FLUSHALL would have it snapshot the data it is
  // about to empty).
  EXPECT_EQ(host_.forks.size(), 1u);
  sync_.StartIfNeeded(host_.now_ms);
  EXPECT_EQ(host_.forks.size(), 2u);
  EXPECT_EQ(Link(2).state, ReplicaState::kWaitBgsaveEnd);
  // The child failed after the pipe ended: its replicas are dropped.
  host_.pump_results = {Progress::kEof};
  sync_.OnReadable(host_.watched.back().second);
  host_.child_running = false;
  sync_.OnTransferChildExited(false);
  EXPECT_EQ(host_.dropped, (std::vector<uint64_t>{1, 2}));
  EXPECT_FALSE(sync_.transfer_running());
}

TEST_F(FullSyncTest, DisklessDelayLeavesTheStartToTheCron) {
  Diskless(/*delay_s=*/5);
  Conn(1);
  Psync(1, "?", -1);
  EXPECT_TRUE(host_.forks.empty());
  EXPECT_EQ(Link(1).state, ReplicaState::kWaitBgsaveStart);
  sync_.StartIfNeeded(host_.now_ms + 4'000);
  EXPECT_TRUE(host_.forks.empty());
  sync_.StartIfNeeded(host_.now_ms + 5'000);
  EXPECT_EQ(host_.forks.size(), 1u);
}

TEST_F(FullSyncTest, NothingStartsWhileAChildRuns) {
  host_.child_running = true;  // an AOF rewrite, say
  Conn(1);
  Psync(1, "?", -1);
  EXPECT_TRUE(host_.saves.empty());
  EXPECT_EQ(Link(1).state, ReplicaState::kWaitBgsaveStart);
  host_.child_running = false;
  sync_.StartIfNeeded(host_.now_ms);
  EXPECT_EQ(host_.saves.size(), 1u);
}

}  // namespace
}  // namespace ringkv::repl
