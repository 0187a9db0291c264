// ReplicaSide (server/replica_side/replica_side.h) driven through a fake
// server: nothing is made before REPLICAOF, REPLICAOF's transitions (a new
// link, the same primary again, another primary, NO ONE and the history it
// keeps), the READONLY / MASTERDOWN gate answers as the settings change,
// the primary's commands run with expired keys visible or are held while a
// script is busy, and FAILOVER's refusals, pause and abort. No socket and
// no sync thread: the server is never "serving" (ServingSinceMs 0), so a
// link stays in `connect` and nothing dials out.
#include "server/replica_side/replica_side.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "server/clock.h"
#include "server/output_limits.h"
#include "tests/server/fake_server_parts.h"

namespace ringkv::server::replica_side_test {
namespace {

// The clients and a log of what the replica side asked of the server. Its
// I/O system is never started; a call for it is logged ("io").
class FakeServer final : public ReplicaSide::Hooks,
                         public PrimarySide::Hooks,
                         public BlockedClients::Hooks,
                         public test_fakes::NoPersistenceHooks {
 public:
  explicit FakeServer(core::Keyspace& keyspace) : keyspace_(keyspace) {}

  Client& AddClient(uint64_t id) { return test_fakes::AddFakeClient(id, conns_, clients_); }
  std::vector<std::string> TakeLog() { return std::exchange(log, {}); }

  // ---- ReplicaSide::Hooks (and the ones shared with PrimarySide::Hooks) ----
  io::IoSystem& ReplicationIo() override {
    log.push_back("io");
    return io_;
  }
  Client* ReplicaClient(uint64_t id) override {
    auto it = clients_.find(id);
    return it == clients_.end() ? nullptr : it->second.get();
  }
  int64_t ServingSinceMs() override { return 0; }  // not serving: no sync starts
  void ExecuteMasterCommand(Client& c, ReplicaSide::Argv argv) override {
    // What the gate would see: the primary's commands see expired keys.
    const char* mode = keyspace_.expiry_mode() == core::ExpiryMode::kKeep ? "keep" : "other";
    log.push_back("exec " + std::string(argv[0]) + " on " + std::to_string(c.id()) + " " + mode);
  }
  bool ScriptBusy() override { return script_busy; }
  absl::StatusOr<RdbLoadStats> LoadSyncFile(const std::string& path, int64_t) override {
    log.push_back("load " + path);
    return RdbLoadStats{};
  }
  absl::Status ReplaceFunctions(const std::vector<std::string>&) override { return absl::OkStatus(); }
  void PauseWritesForFailover() override { log.push_back("pause"); }
  void ResumeWritesAfterFailover() override { log.push_back("resume"); }
  void PropagateOwnExpiry(int db, std::string_view key) override {
    log.push_back("expired " + std::to_string(db) + " " + std::string(key));
  }
  // With the old data still in place (its key count), and what replaces it.
  void DatasetReplacing(core::Keyspace* incoming) override {
    log.push_back("replacing " + std::to_string(keyspace_.db(0).size()) +
                  (incoming != nullptr ? " with " + std::to_string(incoming->db(0).size()) : ""));
  }

  // ---- PrimarySide::Hooks (the primary side is only a backlog here) ----
  void CloseReplicaNow(Client& c) override { log.push_back("close " + std::to_string(c.id())); }
  std::string ReplicaInfoLine(const Client& c, int64_t) override { return "id=" + std::to_string(c.id()); }
  io::OutBuffer& WaiterReplyTarget(Client&) override { return out_; }
  bool MayBlockWaiter(const Client&) override { return true; }
  bool RelaysPrimaryStream() override { return false; }
  bool StreamFrozen() override { return false; }
  bool MayRequestAcks() override { return true; }
  void AcksRequested() override {}
  int CronHz() override { return 10; }
  int StreamDbAtSnapshot() override { return 0; }
  std::vector<std::string> SnapshotFunctions() override { return {}; }

  // ---- BlockedClients::Hooks (nobody blocks here) ----
  Client* BlockedClient(uint64_t id) override { return ReplicaClient(id); }
  const core::Value* PeekValue(int, std::string_view) override { return nullptr; }
  void WakeTimerInUs(int64_t) override {}
  void ReplyUnblockError(Client&, std::string_view) override {}
  void ReplyBlockTimeout(Client&) override {}
  void ReplyToWaiter(Client&, const WaitSpec&) override {}
  void RerunBlocked(Client&, std::span<const std::string_view>, int64_t, std::string_view) override {}
  void RecordUnblockedLatency(const CommandSpec&, int64_t) override {}
  void ResumeClient(Client&) override {}
  void CloseClient(Client&) override {}
  void KeyWaitersPresent(bool) override {}

  bool script_busy = false;
  std::vector<std::string> log;

 private:
  core::Keyspace& keyspace_;
  std::vector<std::unique_ptr<io::Connection>> conns_;  // outlive the clients
  std::map<uint64_t, std::unique_ptr<Client>> clients_;
  io::OutBuffer out_;
  io::IoSystem io_{nullptr};
};

using test_fakes::Set;

class ReplicaSideTest : public ::testing::Test {
 protected:
  void SetUp() override {
    primary_.BindConfig();
    side_.BindConfig();
  }

  core::Keyspace keyspace_{16};
  FakeServer server_{keyspace_};
  Config config_;
  repl::ReplicationIds ids_ = repl::ReplicationIds::Fresh();
  uint64_t dirty_ = 0;
  LatencyMonitor latency_;
  Persistence persistence_{server_, config_, keyspace_, dirty_, latency_};
  BlockedClients blocking_{server_};
  ServerStats stats_;
  OutputLimits limits_{config_};
  LazyFreer lazy_freer_;
  PrimarySide primary_{server_, config_, ids_, persistence_, blocking_, stats_, keyspace_, limits_};
  ReplicaSide side_{server_, config_, ids_, primary_, persistence_, blocking_, keyspace_, lazy_freer_};
};

TEST_F(ReplicaSideTest, NothingIsMadeBeforeReplicaOf) {
  EXPECT_FALSE(side_.is_replica());
  EXPECT_EQ(side_.replica(), nullptr);
  EXPECT_EQ(side_.master_link(), nullptr);
  EXPECT_EQ(side_.failover(), nullptr);
  EXPECT_STREQ(side_.failover_state(), "no-failover");
  EXPECT_EQ(side_.StreamDb(), 0);
  EXPECT_EQ(side_.tracked_expires(), 0u);
  EXPECT_FALSE(side_.full_sync_in_progress());
  EXPECT_FALSE(side_.async_loading());
  EXPECT_FALSE(side_.sync_loading());
  // A primary's gate: nothing refused, whatever the settings.
  Set(config_, "replica-serve-stale-data", "no");
  EXPECT_EQ(side_.GateRefusal(cmd::kWrite), nullptr);
  EXPECT_EQ(side_.GateRefusal(0), nullptr);
  EXPECT_FALSE(side_.refuses_writes());
  // The loop's and the cron's calls, a closed client, GETACK: none reaches
  // the server.
  Client& c = server_.AddClient(1);
  c.is_master = true;
  side_.PollSync();
  side_.Cron(UnixMs());
  side_.ApplyHeld();
  side_.NoteAofFed();
  side_.OnAofSynced();
  side_.SendAck();
  side_.OnClientClosed(c);
  // REPLICAOF NO ONE on a primary: +OK, nothing changes.
  EXPECT_EQ(side_.ReplicaOf("", 0), "+OK");
  EXPECT_FALSE(side_.is_replica());
  EXPECT_TRUE(server_.TakeLog().empty());
}

TEST_F(ReplicaSideTest, ReplicaOfMakesRetargetsAndDropsTheLink) {
  EXPECT_EQ(side_.ReplicaOf("127.0.0.1", 7001), "+OK");
  ASSERT_TRUE(side_.is_replica());
  const repl::ReplicaSide* link = side_.replica();
  ASSERT_NE(side_.master_link(), nullptr);
  EXPECT_EQ(side_.master_link()->host, "127.0.0.1");
  EXPECT_EQ(side_.master_link()->port, 7001);
  EXPECT_STREQ(link->LinkStateName(), "connect");  // not serving yet: no sync started
  EXPECT_EQ(keyspace_.expiry_mode(), core::ExpiryMode::kHide);  // the primary's DELs expire keys

  // The same primary again: nothing changes.
  EXPECT_EQ(side_.ReplicaOf("127.0.0.1", 7001), "+OK Already connected to specified master");
  // Another primary: the same link, pointed elsewhere (its database kept).
  side_.replica()->set_stream_db(3);
  EXPECT_EQ(side_.ReplicaOf("127.0.0.1", 7002), "+OK");
  EXPECT_EQ(side_.replica(), link);
  EXPECT_EQ(side_.master_link()->port, 7002);
  EXPECT_EQ(side_.StreamDb(), 3);

  // NO ONE with a backlog: the history continues under a new id, the old
  // one kept as the secondary id (its other replicas can PSYNC here).
  primary_.CreateBacklogAt(100);
  const std::string followed = ids_.replid;
  EXPECT_EQ(side_.ReplicaOf("", 0), "+OK");
  EXPECT_FALSE(side_.is_replica());
  EXPECT_EQ(side_.master_link(), nullptr);
  EXPECT_EQ(keyspace_.expiry_mode(), core::ExpiryMode::kDelete);
  EXPECT_EQ(ids_.replid2, followed);
  EXPECT_NE(ids_.replid, followed);
  EXPECT_EQ(ids_.second_offset, static_cast<int64_t>(primary_.primary()->offset()) + 1);
}

TEST_F(ReplicaSideTest, GateAnswersReadOnlyAndMasterDown) {
  ASSERT_EQ(side_.ReplicaOf("127.0.0.1", 7001), "+OK");
  // replica-read-only yes (the default), stale data served: writes refused.
  EXPECT_STREQ(side_.GateRefusal(cmd::kWrite), "READONLY You can't write against a read only replica.");
  EXPECT_EQ(side_.GateRefusal(0), nullptr);
  EXPECT_TRUE(side_.refuses_writes());
  EXPECT_FALSE(side_.refuses_stale(0));

  // replica-serve-stale-data no and the link down: only stale-ok commands.
  Set(config_, "replica-serve-stale-data", "no");
  EXPECT_STREQ(side_.GateRefusal(0),
               "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.");
  EXPECT_EQ(side_.GateRefusal(cmd::kStale), nullptr);
  // READONLY comes first, as in Redis.
  EXPECT_STREQ(side_.GateRefusal(cmd::kWrite), "READONLY You can't write against a read only replica.");

  // A writable replica: writes pass the READONLY check, MASTERDOWN stays.
  Set(config_, "replica-read-only", "no");
  EXPECT_FALSE(side_.refuses_writes());
  EXPECT_STREQ(side_.GateRefusal(cmd::kWrite),
               "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.");
  EXPECT_EQ(side_.GateRefusal(cmd::kWrite | cmd::kStale), nullptr);

  // Back to a primary: nothing refused.
  ASSERT_EQ(side_.ReplicaOf("", 0), "+OK");
  EXPECT_EQ(side_.GateRefusal(cmd::kWrite), nullptr);
  EXPECT_EQ(side_.GateRefusal(0), nullptr);
}

TEST_F(ReplicaSideTest, PrimaryCommandsSeeExpiredKeysOrWaitForABusyScript) {
  ASSERT_EQ(side_.ReplicaOf("127.0.0.1", 7001), "+OK");
  Client& master = server_.AddClient(5);
  master.is_master = true;
  std::string_view set[] = {"SET", "k", "v"};
  side_.OnMasterCommand(master, set);
  EXPECT_EQ(server_.TakeLog(), std::vector<std::string>{"exec SET on 5 keep"});
  EXPECT_EQ(keyspace_.expiry_mode(), core::ExpiryMode::kHide);  // restored after it

  // A busy script: the primary's commands are held, not run.
  server_.script_busy = true;
  std::string_view del[] = {"DEL", "k"};
  side_.OnMasterCommand(master, del);
  EXPECT_TRUE(side_.replica()->holding());
  side_.ApplyHeld();  // still busy: still held
  EXPECT_TRUE(side_.replica()->holding());
  EXPECT_TRUE(server_.TakeLog().empty());
  // Later ones queue behind the held ones even once the script is done.
  server_.script_busy = false;
  side_.OnMasterCommand(master, set);
  EXPECT_TRUE(server_.TakeLog().empty());
}

TEST_F(ReplicaSideTest, FailoverRefusesPausesAndAborts) {
  EXPECT_EQ(side_.AbortFailover(), "ERR No failover in progress.");
  EXPECT_EQ(side_.StartFailover("", 0, 0, false), "ERR FAILOVER requires connected replicas.");
  // One online replica: FAILOVER starts, writes are paused.
  Client& r = server_.AddClient(9);
  r.is_replica = true;
  repl::ReplicaLink& link = primary_.EnsurePrimary().Attach(9, r.conn);
  link.state = repl::ReplicaState::kOnline;
  EXPECT_EQ(side_.StartFailover("", 0, 0, false), "");
  EXPECT_STREQ(side_.failover_state(), "waiting-for-sync");
  EXPECT_EQ(side_.StartFailover("", 0, 0, false), "ERR FAILOVER already in progress.");
  EXPECT_EQ(side_.AbortFailover(), "");
  EXPECT_STREQ(side_.failover_state(), "no-failover");
  EXPECT_EQ(server_.TakeLog(), (std::vector<std::string>{"pause", "resume"}));
  // A replica may not start one.
  ASSERT_EQ(side_.ReplicaOf("127.0.0.1", 7001), "+OK");
  EXPECT_EQ(side_.StartFailover("", 0, 0, false), "ERR FAILOVER is not valid when server is a replica.");
}

}  // namespace
}  // namespace ringkv::server::replica_side_test
