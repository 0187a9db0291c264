// ReplicaSide against a fake host: the link's states, the partial resync
// with a scripted primary on loopback, the stream's accounting in the
// backlog (transactions counted at EXEC), held commands, ACK and FACK.
#include "replication/replica_side.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "core/keyspace.h"
#include "core/resp_command.h"
#include "core/string_value.h"

namespace ringkv::repl::replica_side_test {
namespace {

using Argv = ReplicaHost::Argv;

std::string Resp(std::initializer_list<std::string_view> args) {
  std::vector<std::string_view> v(args);
  std::string out;
  core::AppendRespCommand(v, &out);
  return out;
}

class FakeHost final : public ReplicaHost {
 public:
  int64_t NowMs() override { return now_ms; }
  int64_t StartTimeMs() override { return start_ms; }
  void WakeMainThread() override { woken = true; }
  SyncRequest NewSyncRequest() override {
    SyncRequest req;
    req.timeout_s = 5;
    req.listening_port = 7000;
    return req;
  }
  void DropStagedLoad() override { ++staging_drops; }
  ReplicationIds& History() override { return ids; }
  Primary* Backlog() override { return primary.get(); }
  uint64_t ReplOffset() override { return primary ? primary->offset() : static_cast<uint64_t>(ids.offset); }
  void DropReplicas() override { ++replica_drops; }
  bool LoadFullSync(SyncResult&, int64_t) override { return false; }
  uint64_t AdoptMasterSocket(SyncResult& r, int db) override {
    ::close(r.fd);
    adopted_db = db;
    return kClientId;
  }
  void CloseMasterClient(uint64_t id) override { closed.push_back(id); }
  bool MasterClientOpen(uint64_t id) override { return id == kClientId && client_open; }
  std::optional<int> MasterClientDb(uint64_t id) override {
    return id == kClientId && client_open ? std::optional<int>(client_db) : std::nullopt;
  }
  bool WriteToMaster(uint64_t id, std::string_view bytes) override {
    if (id != kClientId) return false;
    to_master.append(bytes);
    return true;
  }
  bool ApplyMasterCommand(uint64_t, Argv argv) override {
    applied.emplace_back(argv[0]);
    return argv[0] != "REPLICAOF";  // as if it stopped the replication
  }
  bool ScriptBusy() override { return script_busy; }
  bool AofSynced() override { return aof_synced; }
  void SupervisorStatus(std::string_view s) override { status = s; }
  bool FailoverInProgress() override { return false; }
  void EndFailover(bool, std::string_view) override {}

  static constexpr uint64_t kClientId = 42;
  int64_t now_ms = 10'500;
  int64_t start_ms = 1'000;
  std::atomic<bool> woken{false};
  int staging_drops = 0, replica_drops = 0, adopted_db = -1, client_db = 0;
  ReplicationIds ids = ReplicationIds::Fresh();
  std::unique_ptr<Primary> primary;
  std::vector<uint64_t> closed;
  bool client_open = true, script_busy = false, aof_synced = false;
  std::string to_master, status;
  std::vector<std::string> applied;
};

// A primary that answers the handshake on one connection and then accepts
// PSYNC with +CONTINUE <replid>.
class ScriptedPrimary {
 public:
  explicit ScriptedPrimary(std::string replid) : replid_(std::move(replid)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    socklen_t len = sizeof(a);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    ::listen(fd_, 1);
    thread_ = std::thread([this] { Serve(); });
  }
  ~ScriptedPrimary() {
    thread_.join();
    ::close(fd_);
  }
  int port() const { return port_; }
  // What the replica sent, once the handshake is over.
  const std::string& received() const { return in_; }

 private:
  void ReadUntil(int c, std::string_view what, int crlfs_after) {
    char buf[512];
    for (;;) {
      size_t at = in_.find(what);
      if (at != std::string::npos) {
        int n = 0;
        for (size_t p = in_.find("\r\n", at); p != std::string::npos; p = in_.find("\r\n", p + 2)) ++n;
        if (n >= crlfs_after) return;
      }
      const ssize_t r = ::read(c, buf, sizeof(buf));
      if (r <= 0) return;
      in_.append(buf, static_cast<size_t>(r));
    }
  }
  void Serve() {
    const int c = ::accept(fd_, nullptr, nullptr);
    if (c < 0) return;
    ReadUntil(c, "PING", 1);
    (void)!::write(c, "+PONG\r\n", 7);
    ReadUntil(c, "psync2", 1);
    (void)!::write(c, "+OK\r\n+OK\r\n", 10);
    ReadUntil(c, "PSYNC", 5);
    const std::string reply = "+CONTINUE " + replid_ + "\r\n";
    (void)!::write(c, reply.data(), reply.size());
    ::close(c);  // the replica's end stays open: the test's host closes it
  }

  std::string replid_;
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
  std::string in_;
};

bool WaitFor(const std::atomic<bool>& flag) {
  for (int i = 0; i < 500 && !flag; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return flag;
}

// Syncs `side` with a scripted primary answering +CONTINUE `new_replid`.
void Connect(FakeHost& host, ReplicaSide& side, const std::string& new_replid, std::string* sent = nullptr) {
  ScriptedPrimary primary(new_replid);
  side.Retarget("127.0.0.1", primary.port());
  side.StartSync();
  EXPECT_TRUE(side.syncing());
  ASSERT_TRUE(WaitFor(host.woken));
  host.woken = false;
  side.PollSync();
  if (sent != nullptr) *sent = primary.received();
}

TEST(ReplicaSideTest, StartsInConnectAndNamesTheLinkAsRole) {
  FakeHost host;
  ReplicaSide side(host, "10.0.0.1", 6380, 3);
  EXPECT_EQ(side.link().host, "10.0.0.1");
  EXPECT_EQ(side.link().port, 6380);
  EXPECT_EQ(side.StreamDb(), 3);
  EXPECT_FALSE(side.link_up());
  EXPECT_STREQ(side.LinkStateName(), "connect");
}

TEST(ReplicaSideTest, FailedSyncRetriesAtTheNextCronSecond) {
  FakeHost host;
  // A port nothing listens on: bound, then closed.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  ReplicaSide side(host, "127.0.0.1", ntohs(a.sin_port), 0);
  side.StartSync();
  ASSERT_TRUE(WaitFor(host.woken));
  side.PollSync();
  EXPECT_STREQ(side.LinkStateName(), "connect");
  EXPECT_EQ(host.staging_drops, 1);
  // Started at 1000, now 10500: the cron's next second is 11000.
  EXPECT_EQ(side.link().retry_at_ms, 11'000);
  host.now_ms = 10'999;
  side.Cron(host.now_ms);
  EXPECT_FALSE(side.syncing());
}

TEST(ReplicaSideTest, PartialResyncUnderANewIdAdoptsTheSocketRotatesHistoryAndAcks) {
  FakeHost host;
  host.primary = std::make_unique<Primary>(1 << 20, 100);
  const std::string old_id = host.ids.replid;
  const std::string new_id(40, 'b');
  ReplicaSide side(host, "unused", 1, 4);
  std::string sent;
  Connect(host, side, new_id, &sent);
  // It asked to continue our history after offset 100.
  EXPECT_NE(sent.find(Resp({"PSYNC", old_id, "101"})), std::string::npos) << sent;
  EXPECT_NE(sent.find(Resp({"REPLCONF", "listening-port", "7000"})), std::string::npos) << sent;
  EXPECT_TRUE(side.link_up());
  EXPECT_STREQ(side.LinkStateName(), "connected");
  EXPECT_EQ(side.link().client_id, FakeHost::kClientId);
  EXPECT_EQ(host.adopted_db, 4);  // the link kept its database
  EXPECT_EQ(host.ids.replid, new_id);
  EXPECT_EQ(host.ids.replid2, old_id);
  EXPECT_EQ(host.ids.second_offset, 101);
  EXPECT_EQ(host.replica_drops, 1);  // our replicas learn the new id by reconnecting
  EXPECT_EQ(host.status,
            "MASTER <-> REPLICA sync: Partial Resynchronization accepted. Ready to accept connections in read-write "
            "mode.");
  EXPECT_EQ(host.to_master, Resp({"REPLCONF", "ACK", "100", "FACK", "0"}));
}

TEST(ReplicaSideTest, TheStreamReachesTheBacklogVerbatimATransactionAtItsExec) {
  FakeHost host;
  host.primary = std::make_unique<Primary>(1 << 20, 0);
  ReplicaSide side(host, "h", 1, 0);
  const std::string_view set[] = {"SET", "k", "v"};
  side.Applied(set, false);
  const uint64_t one = Resp({"SET", "k", "v"}).size();
  EXPECT_EQ(host.primary->offset(), one);
  EXPECT_EQ(host.ids.offset, static_cast<int64_t>(one));
  const std::string_view multi[] = {"MULTI"};
  const std::string_view incr[] = {"INCR", "n"};
  const std::string_view exec[] = {"EXEC"};
  side.Applied(multi, true);
  side.Applied(incr, true);
  EXPECT_EQ(host.primary->offset(), one);  // not counted inside MULTI
  side.Applied(exec, false);
  const uint64_t tx = Resp({"MULTI"}).size() + Resp({"INCR", "n"}).size() + Resp({"EXEC"}).size();
  EXPECT_EQ(host.primary->offset(), one + tx);
  EXPECT_EQ(host.ids.offset, static_cast<int64_t>(one + tx));
  EXPECT_EQ(side.link().last_io_ms, host.now_ms);
}

TEST(ReplicaSideTest, HeldCommandsRunInOrderOnceNoScriptIsBusy) {
  FakeHost host;
  ReplicaSide side(host, "h", 1, 0);
  Connect(host, side, std::string(40, 'c'));
  const std::string_view a[] = {"A"};
  const std::string_view b[] = {"B"};
  side.Hold(a);
  side.Hold(b);
  EXPECT_TRUE(side.holding());
  host.script_busy = true;
  side.ApplyHeld();
  EXPECT_TRUE(host.applied.empty());
  host.script_busy = false;
  side.ApplyHeld();
  EXPECT_EQ(host.applied, (std::vector<std::string>{"A", "B"}));
  EXPECT_FALSE(side.holding());
  // Held commands of a client that is gone are dropped, not run.
  side.Hold(a);
  host.client_open = false;
  side.ApplyHeld();
  EXPECT_FALSE(side.holding());
  EXPECT_EQ(host.applied.size(), 2u);
}

TEST(ReplicaSideTest, FackFollowsTheAofFsyncsAndIsSentWhenItAdvances) {
  FakeHost host;
  host.primary = std::make_unique<Primary>(1 << 20, 0);
  ReplicaSide side(host, "h", 1, 0);
  Connect(host, side, host.ids.replid);  // same history: nothing rotates
  EXPECT_EQ(host.replica_drops, 0);
  host.to_master.clear();
  const std::string_view set[] = {"SET", "k", "v"};
  side.Applied(set, false);
  const std::string off = std::to_string(host.primary->offset());
  side.NoteAofFed(/*aof_offset=*/500);
  side.NoteAofFed(500);  // the same replication offset: one mark
  side.OnAofSynced(499);
  EXPECT_EQ(host.to_master, "");
  side.OnAofSynced(500);
  EXPECT_EQ(host.to_master, Resp({"REPLCONF", "ACK", off, "FACK", off}));
  EXPECT_EQ(side.link().fsynced_offset, host.primary->offset());
}

TEST(ReplicaSideTest, ClosingTheLinkKeepsTheDatabaseTheClientHadSelected) {
  FakeHost host;
  ReplicaSide side(host, "h", 1, 0);
  Connect(host, side, std::string(40, 'd'));
  host.client_db = 5;
  const std::string_view multi[] = {"MULTI"};
  host.primary = std::make_unique<Primary>(1 << 20, 0);
  side.Applied(multi, true);  // an open transaction: dropped with the link
  side.CloseLink();
  EXPECT_EQ(host.closed, (std::vector<uint64_t>{FakeHost::kClientId}));
  EXPECT_EQ(side.link().client_id, 0u);
  EXPECT_EQ(side.link().db, 5);
  EXPECT_TRUE(side.link().open_transaction.empty());
  // Another primary: the database stays, the state starts over.
  side.Retarget("other", 2);
  EXPECT_EQ(side.StreamDb(), 5);
  EXPECT_STREQ(side.LinkStateName(), "connect");
}

TEST(ReplicaSideTest, OwnKeysWithADeadlineAreRememberedOnlyOnceWrittenAndForgottenOnAFullSync) {
  FakeHost host;
  ReplicaSide side(host, "h", 1, 0);
  EXPECT_EQ(side.own_expiry_if_any(), nullptr);  // nothing until a client of ours sets a TTL
  EXPECT_EQ(side.own_expiry_count(), 0u);
  core::Keyspace ks(1);
  core::Database& db = ks.db(0);
  bool created;
  core::Entry* e = db.FindOrInsert("k", 0, &created);
  e->value = core::Value(core::StringValue("v"));
  db.SetExpire("k", e, 5000);
  side.own_expiry().RememberIfVolatile(db, "k");
  EXPECT_EQ(side.own_expiry_count(), 1u);
  side.ForgetOwnExpiry();
  EXPECT_EQ(side.own_expiry_if_any(), nullptr);
}

TEST(ReplicaSideTest, AHeldReplicaofNoOneStopsTheLoop) {
  FakeHost host;
  auto side = std::make_unique<ReplicaSide>(host, "h", 1, 0);
  Connect(host, *side, std::string(40, 'e'));
  const std::string_view stop[] = {"REPLICAOF"};
  const std::string_view after[] = {"AFTER"};
  side->Hold(stop);
  side->Hold(after);
  side->ApplyHeld();  // the host reports it stopped replicating: nothing after it runs
  EXPECT_EQ(host.applied, (std::vector<std::string>{"REPLICAOF"}));
}

}  // namespace
}  // namespace ringkv::repl::replica_side_test
