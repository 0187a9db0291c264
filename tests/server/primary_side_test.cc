// PrimarySide (server/primary_side/primary_side.h) driven through a fake
// server: nothing is made before a replica attaches, WAIT / WAITAOF answer
// or block and are released by REPLCONF ACK, the min-replicas gate follows
// the replicas' acknowledgements, replicas are dropped and forgotten, and
// the backlog follows CONFIG SET repl-backlog-size. No socket: replica links
// are bare io::Connection objects, replies land in per-client buffers.
#include "server/primary_side/primary_side.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "server/clock.h"
#include "tests/server/fake_server_parts.h"

namespace ringkv::server::primary_side_test {
namespace {

// The clients, their replies, and a log of what the primary side asked for.
// Its I/O system is never started: the tests stay off the paths that write
// to replicas' sockets, and a call for it is logged ("io").
class FakeServer final : public PrimarySide::Hooks,
                         public BlockedClients::Hooks,
                         public test_fakes::NoPersistenceHooks {
 public:
  Client& AddClient(uint64_t id) { return test_fakes::AddFakeClient(id, conns_, clients_); }
  std::string Replies(uint64_t id) {
    io::OutBuffer& out = replies_[id];
    std::string s = out.ToString();
    out.Clear();
    return s;
  }
  std::vector<std::string> TakeLog() { return std::exchange(log, {}); }

  // ---- PrimarySide::Hooks ----
  io::IoSystem& ReplicationIo() override {
    log.push_back("io");
    return io_;
  }
  Client* ReplicaClient(uint64_t id) override { return Find(id); }
  void CloseReplicaNow(Client& c) override {
    c.closing = true;
    log.push_back("close " + std::to_string(c.id()));
  }
  std::string ReplicaInfoLine(const Client& c, int64_t) override { return "id=" + std::to_string(c.id()); }
  io::OutBuffer& WaiterReplyTarget(Client& c) override { return replies_[c.id()]; }
  bool MayBlockWaiter(const Client&) override { return may_block; }
  bool RelaysPrimaryStream() override {
    log.push_back("relays?");
    return false;
  }
  bool StreamFrozen() override { return false; }
  bool MayRequestAcks() override { return true; }
  void AcksRequested() override { log.push_back("acks-requested"); }
  int CronHz() override {
    log.push_back("hz?");
    return 10;
  }
  int64_t ServingSinceMs() override { return 0; }
  int StreamDbAtSnapshot() override { return 0; }
  std::vector<std::string> SnapshotFunctions() override { return {}; }

  // ---- BlockedClients::Hooks (WAIT's timeouts are not exercised) ----
  Client* BlockedClient(uint64_t id) override { return Find(id); }
  const core::Value* PeekValue(int, std::string_view) override { return nullptr; }
  void WakeTimerInUs(int64_t) override {}
  void ReplyUnblockError(Client&, std::string_view) override {}
  void ReplyBlockTimeout(Client&) override {}
  void ReplyToWaiter(Client& c, const WaitSpec& spec) override { primary->ReplyToWaiter(c, spec); }
  void RerunBlocked(Client&, std::span<const std::string_view>, int64_t, std::string_view) override {}
  void RecordUnblockedLatency(const CommandSpec&, int64_t) override {}
  void ResumeClient(Client& c) override {
    log.push_back("resume " + std::to_string(c.id()));
    if (on_resume) on_resume(c);
  }
  void CloseClient(Client&) override {}
  void KeyWaitersPresent(bool) override {}

  PrimarySide* primary = nullptr;
  bool may_block = true;
  std::function<void(Client&)> on_resume;  // a resumed client's deferred commands
  std::vector<std::string> log;

 private:
  Client* Find(uint64_t id) {
    auto it = clients_.find(id);
    return it == clients_.end() ? nullptr : it->second.get();
  }
  std::vector<std::unique_ptr<io::Connection>> conns_;  // outlive the clients and links
  std::map<uint64_t, std::unique_ptr<Client>> clients_;
  std::map<uint64_t, io::OutBuffer> replies_;
  io::IoSystem io_{nullptr};
};

using test_fakes::Set;

class PrimarySideTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_.primary = &side_;
    side_.BindConfig();
  }
  // A replica link of client `id`, synced (online) and acknowledged at `ack_ms`.
  repl::ReplicaLink& AddOnlineReplica(uint64_t id, int64_t ack_ms) {
    Client& c = server_.AddClient(id);
    c.is_replica = true;
    repl::ReplicaLink& link = side_.EnsurePrimary().Attach(id, c.conn);
    link.state = repl::ReplicaState::kOnline;
    link.last_ack_ms = ack_ms;
    return link;
  }

  FakeServer server_;
  Config config_;
  repl::ReplicationIds ids_ = repl::ReplicationIds::Fresh();
  core::Keyspace keyspace_{16};
  uint64_t dirty_ = 0;
  LatencyMonitor latency_;
  Persistence persistence_{server_, config_, keyspace_, dirty_, latency_};
  BlockedClients blocking_{server_};
  ServerStats stats_;
  OutputLimits limits_{config_};
  PrimarySide side_{server_, config_, ids_, persistence_, blocking_, stats_, keyspace_, limits_};
};

TEST_F(PrimarySideTest, NothingIsMadeBeforeAReplicaAttaches) {
  Client& c = server_.AddClient(1);
  WaitSpec wait0;  // WAIT 0: answered at once, with no replica
  side_.WaitFor(c, wait0, 0);
  EXPECT_EQ(server_.Replies(1), ":0\r\n");
  WaitSpec waitaof;  // WAITAOF 0 0
  waitaof.aof = true;
  side_.WaitFor(c, waitaof, 0);
  EXPECT_EQ(server_.Replies(1), "*2\r\n:0\r\n:0\r\n");
  // The loop's and the cron's calls, an ACK or a close from a non-replica:
  // none reaches the server or makes the backlog.
  side_.BeforeFlush();
  side_.AfterChildReaped();
  side_.Cron(UnixMs());
  side_.OnReplicaAck(c, 100, 0, UnixMs());
  side_.ForgetReplica(1);
  side_.DisconnectReplicas();
  side_.OnReadable(0);
  EXPECT_EQ(side_.primary(), nullptr);
  EXPECT_FALSE(side_.DisklessTransferRunning());
  EXPECT_TRUE(side_.ReplicasCaughtUp());
  EXPECT_FALSE(side_.min_replicas_set());
  EXPECT_EQ(side_.GoodReplicas(UnixMs()), 0);
  EXPECT_TRUE(server_.TakeLog().empty());
}

TEST_F(PrimarySideTest, WaitBlocksWithoutReplicasAndWithoutMakingTheBacklog) {
  Client& c = server_.AddClient(1);
  WaitSpec spec;
  spec.numreplicas = 1;
  side_.WaitFor(c, spec, 0);
  EXPECT_TRUE(blocking_.IsBlocked(1));
  EXPECT_FALSE(blocking_.waits().empty());
  EXPECT_EQ(side_.primary(), nullptr);
  EXPECT_EQ(server_.Replies(1), "");
  // Inside EXEC (a client that may not block) the answer is the count now.
  Client& in_exec = server_.AddClient(2);
  server_.may_block = false;
  side_.WaitFor(in_exec, spec, 0);
  EXPECT_FALSE(blocking_.IsBlocked(2));
  EXPECT_EQ(server_.Replies(2), ":0\r\n");
}

TEST_F(PrimarySideTest, AcksReleaseWaitersOnceTheirOffsetIsReached) {
  const int64_t now = UnixMs();
  repl::ReplicaLink& link = AddOnlineReplica(7, now);
  Client& replica = *server_.ReplicaClient(7);
  Client& c = server_.AddClient(1);
  WaitSpec spec;
  spec.numreplicas = 1;
  spec.repl_target = 120;
  side_.WaitFor(c, spec, 0);
  ASSERT_TRUE(blocking_.IsBlocked(1));

  side_.OnReplicaAck(replica, 50, 0, now + 1);  // not far enough yet
  EXPECT_TRUE(blocking_.IsBlocked(1));
  EXPECT_EQ(link.ack_offset, 50u);
  EXPECT_EQ(link.last_ack_ms, now + 1);
  EXPECT_TRUE(link.acked);

  side_.OnReplicaAck(replica, 130, 40, now + 2);
  EXPECT_FALSE(blocking_.IsBlocked(1));
  EXPECT_EQ(server_.Replies(1), ":1\r\n");
  EXPECT_TRUE(blocking_.waits().empty());
  EXPECT_EQ(link.ack_offset, 130u);
  EXPECT_EQ(link.fack_offset, 40u);
  // Offsets never go back (a late ACK of an older offset).
  side_.OnReplicaAck(replica, 10, 0, now + 3);
  EXPECT_EQ(link.ack_offset, 130u);
}

// One ACK releases three waiters. The first one's deferred commands end the
// other two's waits (CLIENT UNBLOCK: each answers its count then), and the
// third one's own deferred command is a WAIT for a later offset. The
// release answers each once, and the new WAIT keeps waiting.
TEST_F(PrimarySideTest, AWaitEndedByAnEarlierReleasedClientIsNotAnsweredAgain) {
  const int64_t now = UnixMs();
  AddOnlineReplica(7, now);
  Client& replica = *server_.ReplicaClient(7);
  Client& a = server_.AddClient(1);
  Client& b = server_.AddClient(2);
  Client& c = server_.AddClient(3);
  WaitSpec spec;
  spec.numreplicas = 1;
  spec.repl_target = 100;
  side_.WaitFor(a, spec, 0);
  side_.WaitFor(b, spec, 0);
  side_.WaitFor(c, spec, 0);
  WaitSpec later = spec;
  later.repl_target = 500;
  bool waited_again = false;
  server_.on_resume = [&](Client& resumed) {
    if (resumed.id() == 1) {
      EXPECT_TRUE(blocking_.UnblockByRequest(2, false));
      EXPECT_TRUE(blocking_.UnblockByRequest(3, false));
    } else if (resumed.id() == 3 && !waited_again) {
      waited_again = true;
      side_.WaitFor(c, later, 0);
    }
  };
  side_.OnReplicaAck(replica, 130, 0, now + 1);
  EXPECT_EQ(server_.Replies(1), ":1\r\n");
  EXPECT_EQ(server_.Replies(2), ":1\r\n");
  EXPECT_EQ(server_.Replies(3), ":1\r\n");
  EXPECT_FALSE(blocking_.IsBlocked(1));
  EXPECT_FALSE(blocking_.IsBlocked(2));
  EXPECT_TRUE(blocking_.IsBlocked(3));  // in its second WAIT
  server_.on_resume = nullptr;
  side_.OnReplicaAck(replica, 600, 0, now + 2);
  EXPECT_EQ(server_.Replies(3), ":1\r\n");
  EXPECT_TRUE(blocking_.waits().empty());
}

TEST_F(PrimarySideTest, MinReplicasGateCountsReplicasAckedWithinTheLag) {
  const int64_t now = UnixMs();
  Set(config_, "min-replicas-to-write", "1");
  Set(config_, "min-replicas-max-lag", "10");
  EXPECT_TRUE(side_.min_replicas_set());
  EXPECT_TRUE(side_.TooFewGoodReplicas(now));  // no replica at all
  AddOnlineReplica(7, now);
  EXPECT_EQ(side_.GoodReplicas(now), 1);
  EXPECT_FALSE(side_.TooFewGoodReplicas(now));
  EXPECT_FALSE(side_.TooFewGoodReplicas(now + 10'000));
  EXPECT_TRUE(side_.TooFewGoodReplicas(now + 10'001));  // its last ACK is too old
  Set(config_, "min-replicas-max-lag", "0");            // 0: the gate is off
  EXPECT_FALSE(side_.TooFewGoodReplicas(now + 10'001));
  Set(config_, "min-replicas-to-write", "0");
  EXPECT_FALSE(side_.min_replicas_set());
}

TEST_F(PrimarySideTest, DisconnectDropsSyncedReplicasAndKeepsHandshakes) {
  const int64_t now = UnixMs();
  AddOnlineReplica(7, now);
  Client& handshaking = server_.AddClient(8);
  side_.EnsurePrimary().Attach(8, handshaking.conn);  // REPLCONF before PSYNC: kHandshake
  side_.DisconnectReplicas();
  EXPECT_EQ(server_.TakeLog(), std::vector<std::string>{"close 7"});
  EXPECT_EQ(side_.primary()->Find(7), nullptr);
  ASSERT_NE(side_.primary()->Find(8), nullptr);
  EXPECT_TRUE(side_.ReplicasCaughtUp());  // a handshake is not waited for
  side_.ForgetReplica(8);  // its connection closed
  EXPECT_EQ(side_.primary()->Find(8), nullptr);
  EXPECT_TRUE(server_.TakeLog().empty());
}

TEST_F(PrimarySideTest, ReplicasCaughtUpWhenEveryAckReachedTheOffset) {
  side_.EnsurePrimary();
  const std::string_view set[] = {"SET", "k", "v"};
  side_.primary()->Feed(0, set);
  repl::ReplicaLink& link = AddOnlineReplica(7, UnixMs());
  EXPECT_FALSE(side_.ReplicasCaughtUp());
  link.ack_offset = side_.primary()->offset();
  EXPECT_TRUE(side_.ReplicasCaughtUp());
}

TEST_F(PrimarySideTest, TheBacklogStartsANewHistoryOrContinuesARestoredOne) {
  ids_.offset = 500;
  const std::string old_id = ids_.replid;
  repl::Primary& p = side_.EnsurePrimary();
  EXPECT_EQ(p.offset(), 500u);
  EXPECT_NE(ids_.replid, old_id);
  EXPECT_EQ(&side_.EnsurePrimary(), &p);  // made once

  side_.RestoreHistoryAsPrimary(old_id, 900);
  EXPECT_EQ(ids_.replid2, old_id);
  EXPECT_EQ(ids_.second_offset, 901);
  EXPECT_EQ(side_.primary()->offset(), 900u);

  side_.DropBacklog();
  EXPECT_EQ(side_.primary(), nullptr);
}

TEST_F(PrimarySideTest, ConfigSetResizesTheBacklogWithA16kFloor) {
  side_.EnsurePrimary();
  Set(config_, "repl-backlog-size", "1000");
  EXPECT_EQ(config_.Int("repl-backlog-size"), 16 * 1024);
  EXPECT_EQ(side_.primary()->backlog().capacity(), 16u * 1024);
  Set(config_, "repl-backlog-size", "1mb");
  EXPECT_EQ(side_.primary()->backlog().capacity(), 1024u * 1024);
}

}  // namespace
}  // namespace ringkv::server::primary_side_test
