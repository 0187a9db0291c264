// Replication regressions: each test pins one way a replica used to end
// different from its primary after a reconnect, a promotion or a chained
// full sync (issue 16). Some drive the replica from a scripted primary (this
// test speaks the primary's side of PSYNC), so the cut falls exactly where it
// must: inside a transaction, or after a deadline passed on the replica only.
#include <gtest/gtest.h>
#include <poll.h>

#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/persistence_test_util.h"

namespace ringkv::testing::replication_resync_e2e_test {
namespace {

const char* kRedis = "/usr/bin/redis-server";
const std::string kReplId = "0123456789abcdef0123456789abcdef01234567";

std::vector<std::string> Args(std::vector<std::string> extra = {}) {
  std::vector<std::string> a = {"--save", "", "--enable-debug-command", "yes", "--repl-diskless-sync-delay", "0"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

bool WaitLinkUp(RawConn& replica) { return WaitInfo(replica, "master_link_status", "up", 10000, "replication"); }

// Polls until `probe` returns `want` (10 s).
template <typename Fn, typename T>
bool WaitFor(Fn probe, const T& want) {
  for (int i = 0; i < 500; ++i) {
    if (probe() == want) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// The replica has applied everything its primary sent.
// (Both read each round: the primary's PINGs and GETACKs move its offset.)
bool WaitSameOffset(RawConn& primary, RawConn& replica) {
  for (int i = 0; i < 500; ++i) {
    if (Info(replica, "master_repl_offset", "replication") == Info(primary, "master_repl_offset", "replication")) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

bool WaitSameDigest(RawConn& a, RawConn& b) {
  for (int i = 0; i < 500; ++i) {
    if (Call(a, {"DEBUG", "DIGEST"}) == Call(b, {"DEBUG", "DIGEST"})) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

std::string DbSize(RawConn& c, int db) {
  Call(c, {"SELECT", std::to_string(db)});
  std::string n = Call(c, {"DBSIZE"});
  Call(c, {"SELECT", "0"});
  return n;
}

// The primary's side of the replication protocol, scripted by the test: it
// accepts the replica's connection, answers its handshake and sends stream
// bytes the test chooses.
class ScriptedPrimary {
 public:
  ScriptedPrimary() {
    listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    listen(listen_fd_, 4);
    socklen_t len = sizeof(a);
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
  }
  ~ScriptedPrimary() {
    Drop();
    close(listen_fd_);
  }
  int port() const { return port_; }

  // Accepts the replica's next connection and answers its handshake up to
  // PSYNC, whose two arguments (replication id, offset) it returns.
  bool AcceptUntilPsync(std::string* replid, std::string* offset) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 10000) != 1) return false;
    fd_ = accept(listen_fd_, nullptr, nullptr);
    timeval tv{10, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    buffered_.clear();
    for (std::vector<std::string> cmd; ReadCommand(&cmd);) {
      if (cmd.empty()) return false;
      if (EqualsUpper(cmd[0], "PSYNC") && cmd.size() == 3) {
        *replid = cmd[1];
        *offset = cmd[2];
        return true;
      }
      Send(EqualsUpper(cmd[0], "PING") ? "+PONG\r\n" : "+OK\r\n");
    }
    return false;
  }
  // Accepts the replica's next connection and reads nothing from it (a
  // primary that hangs in the handshake).
  bool AcceptSilently() {
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 10000) != 1) return false;
    fd_ = accept(listen_fd_, nullptr, nullptr);
    return fd_ >= 0;
  }
  // +FULLRESYNC at `offset` with the given RDB payload (disk form, "$<len>").
  void FullResync(int64_t offset, const std::string& rdb) {
    Send("+FULLRESYNC " + kReplId + " " + std::to_string(offset) + "\r\n");
    Send("$" + std::to_string(rdb.size()) + "\r\n" + rdb);
  }
  void Continue() { Send("+CONTINUE " + kReplId + "\r\n"); }
  // Sends commands of the stream; returns how many bytes they took.
  size_t Stream(const std::vector<std::vector<std::string>>& commands) {
    std::string bytes;
    for (const auto& c : commands) bytes += Resp(c);
    Send(bytes);
    return bytes.size();
  }
  // Closes the replica's connection (the link is cut).
  void Drop() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  static bool EqualsUpper(std::string s, const char* want) {
    for (char& ch : s) ch = static_cast<char>(toupper(static_cast<unsigned char>(ch)));
    return s == want;
  }
  void Send(const std::string& s) { (void)send(fd_, s.data(), s.size(), MSG_NOSIGNAL); }
  bool Fill() {
    char buf[4096];
    ssize_t n = recv(fd_, buf, sizeof(buf), 0);
    if (n <= 0) return false;
    buffered_.append(buf, static_cast<size_t>(n));
    return true;
  }
  bool Line(std::string* line) {
    size_t end;
    while ((end = buffered_.find("\r\n")) == std::string::npos) {
      if (!Fill()) return false;
    }
    *line = buffered_.substr(0, end);
    buffered_.erase(0, end + 2);
    return true;
  }
  // One RESP multibulk command from the replica.
  bool ReadCommand(std::vector<std::string>* cmd) {
    cmd->clear();
    std::string line;
    if (!Line(&line) || line.empty() || line[0] != '*') return false;
    const int n = std::stoi(line.substr(1));
    for (int i = 0; i < n; ++i) {
      if (!Line(&line) || line.empty() || line[0] != '$') return false;
      const size_t len = std::stoul(line.substr(1));
      while (buffered_.size() < len + 2) {
        if (!Fill()) return false;
      }
      cmd->push_back(buffered_.substr(0, len));
      buffered_.erase(0, len + 2);
    }
    return true;
  }

  int listen_fd_ = -1;
  int fd_ = -1;
  int port_ = 0;
  std::string buffered_;
};

// An empty RDB file, as ringkv writes it.
std::string EmptyRdb() {
  TestServer s(Args());
  RawConn c(s.port());
  if (Call(c, {"SAVE"}) != "+OK\r\n") return "";
  return ReadFile(s.dir() + "/dump.rdb");
}

// A replica connected to a scripted primary after a full sync of an empty
// dataset at offset 0.
struct ScriptedPair {
  ScriptedPrimary primary;
  TestServer replica{Args()};
  RawConn r{replica.port()};
  bool Start() {
    const std::string rdb = EmptyRdb();
    std::string replid, offset;
    if (rdb.empty() || !replica.ready()) return false;
    if (Call(r, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}) != "+OK\r\n") return false;
    if (!primary.AcceptUntilPsync(&replid, &offset)) return false;
    primary.FullResync(0, rdb);
    return WaitLinkUp(r);
  }
  std::string ReplicaOffset() { return Info(r, "master_repl_offset", "replication"); }
};

// The minimal case: the primary's stream resumes after a partial
// resync without a SELECT, so the replica must keep its link's database.
TEST(ReplicationResyncE2E, PartialResyncKeepsTheSelectedDatabase) {
  for (const bool redis_primary : {false, true}) {
    if (redis_primary && !HaveTool("redis-server")) continue;
    SCOPED_TRACE(redis_primary ? "redis-server primary" : "ringkv primary");
    TestServer primary = redis_primary
                             ? TestServer({"--enable-debug-command", "yes", "--repl-diskless-sync-delay", "0"}, kRedis)
                             : TestServer(Args());
    TestServer replica(Args());
    ASSERT_TRUE(primary.ready() && replica.ready());
    RawConn p(primary.port()), r(replica.port());
    ASSERT_EQ(Call(r, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
    ASSERT_TRUE(WaitLinkUp(r));
    ASSERT_EQ(Call(p, {"SELECT", "3"}), "+OK\r\n");
    ASSERT_EQ(Call(p, {"SET", "a", "1"}), "+OK\r\n");
    ASSERT_TRUE(WaitSameOffset(p, r));
    EXPECT_EQ(Call(r, {"CLIENT", "KILL", "TYPE", "master"}), ":1\r\n");
    ASSERT_EQ(Call(p, {"SET", "b", "2"}), "+OK\r\n");
    ASSERT_TRUE(WaitInfo(p, "sync_partial_ok", "1", 10000, "stats"));
    ASSERT_TRUE(WaitLinkUp(r));
    ASSERT_TRUE(WaitSameOffset(p, r));
    EXPECT_EQ(DbSize(r, 3), ":2\r\n");
    EXPECT_EQ(DbSize(r, 0), ":0\r\n");
    EXPECT_TRUE(WaitSameDigest(p, r));
  }
}

// A link cut between MULTI and EXEC: the replica has applied nothing of the
// transaction, so it must not count its bytes; PSYNC asks for it again and
// it is applied once, whole, in the database the stream had selected.
TEST(ReplicationResyncE2E, TransactionCutBeforeExecIsResentWhole) {
  ScriptedPair pair;
  ASSERT_TRUE(pair.Start());
  const size_t before_multi = pair.primary.Stream({{"SELECT", "5"}, {"RPUSH", "list", "a"}});
  ASSERT_TRUE(WaitFor([&] { return pair.ReplicaOffset(); }, std::to_string(before_multi)));
  pair.primary.Stream({{"MULTI"}, {"RPUSH", "list", "b"}});
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // applied up to the cut
  EXPECT_EQ(pair.ReplicaOffset(), std::to_string(before_multi));  // nothing of the transaction counted
  pair.primary.Drop();
  std::string replid, offset;
  ASSERT_TRUE(pair.primary.AcceptUntilPsync(&replid, &offset));
  EXPECT_EQ(replid, kReplId);
  EXPECT_EQ(offset, std::to_string(before_multi + 1));
  pair.primary.Continue();
  const size_t rest = pair.primary.Stream({{"MULTI"}, {"RPUSH", "list", "b"}, {"RPUSH", "list", "c"}, {"EXEC"}});
  ASSERT_TRUE(WaitFor([&] { return pair.ReplicaOffset(); }, std::to_string(before_multi + rest)));
  ASSERT_EQ(Call(pair.r, {"SELECT", "5"}), "+OK\r\n");
  EXPECT_EQ(Call(pair.r, {"LRANGE", "list", "0", "-1"}), "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n");
  EXPECT_EQ(DbSize(pair.r, 0), ":0\r\n");
}

// The primary decides which keys are live: a deadline that passed on the
// replica's clock first neither hides a key from the primary's commands nor
// deletes it (the primary's DEL does); reads on the replica see it expired.
TEST(ReplicationResyncE2E, ReplicaKeepsExpiredKeysUntilThePrimarysDel) {
  ScriptedPair pair;
  ASSERT_TRUE(pair.Start());
  const int64_t now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  const std::string soon = std::to_string(now_ms + 100), past = std::to_string(now_ms - 1000);
  size_t sent = pair.primary.Stream({{"SELECT", "0"},
                                     {"SET", "k", "v", "PXAT", soon},
                                     {"RPUSH", "l", "a"},
                                     {"PEXPIREAT", "l", past},
                                     {"RPUSH", "l", "b"}});
  ASSERT_TRUE(WaitFor([&] { return pair.ReplicaOffset(); }, std::to_string(sent)));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // k's deadline passes here
  EXPECT_EQ(Call(pair.r, {"GET", "k"}), "$-1\r\n");       // expired for the replica's clients
  EXPECT_EQ(Call(pair.r, {"EXISTS", "l"}), ":0\r\n");
  EXPECT_EQ(Call(pair.r, {"DBSIZE"}), ":2\r\n");          // but still stored
  sent += pair.primary.Stream({{"PERSIST", "k"}, {"PERSIST", "l"}});
  ASSERT_TRUE(WaitFor([&] { return pair.ReplicaOffset(); }, std::to_string(sent)));
  EXPECT_EQ(Call(pair.r, {"GET", "k"}), "$1\r\nv\r\n");
  EXPECT_EQ(Call(pair.r, {"PTTL", "k"}), ":-1\r\n");
  EXPECT_EQ(Call(pair.r, {"LRANGE", "l", "0", "-1"}), "*2\r\n$1\r\na\r\n$1\r\nb\r\n");
  sent += pair.primary.Stream({{"SET", "gone", "x", "PXAT", past}, {"DEL", "k"}});
  ASSERT_TRUE(WaitFor([&] { return pair.ReplicaOffset(); }, std::to_string(sent)));
  EXPECT_EQ(Call(pair.r, {"DBSIZE"}), ":2\r\n");  // l, and "gone" until its DEL
}

// With replica-ignore-maxmemory (the default) a replica evicts nothing of its
// own and never refuses its primary's writes.
TEST(ReplicationResyncE2E, ReplicaDoesNotEvictOnItsOwn) {
  TestServer primary(Args()), replica(Args({"--maxmemory", "2mb", "--maxmemory-policy", "allkeys-random"}));
  ASSERT_TRUE(primary.ready() && replica.ready());
  RawConn p(primary.port()), r(replica.port());
  ASSERT_EQ(Call(r, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
  ASSERT_TRUE(WaitLinkUp(r));
  const std::string value(1000, 'x');
  for (int i = 0; i < 4000; ++i) p.Send(Resp({"SET", "key:" + std::to_string(i), value}));
  for (int i = 0; i < 4000; ++i) ASSERT_EQ(p.ReadReply(), "+OK\r\n");
  ASSERT_EQ(Call(p, {"RPUSH", "list", "x"}), ":1\r\n");  // a deny-oom command
  ASSERT_TRUE(WaitSameOffset(p, r));
  EXPECT_EQ(Call(r, {"DBSIZE"}), ":4001\r\n");
  EXPECT_EQ(Info(r, "evicted_keys", "stats"), "0");
  EXPECT_TRUE(WaitSameDigest(p, r));
}

// A full sync replaces the replica's data as Redis's emptyData does: a
// watched key that existed makes its watcher's EXEC abort, and with
// repl-diskless-load swapdb one that only the new data has does too
// (swapMainDbWithTempDb); a key in neither leaves EXEC be; every tracking
// client is told to drop everything. (ringkv had told nobody.)
TEST(ReplicationResyncE2E, AFullSyncTouchesWatchedKeysAndFlushesTracking) {
  for (const std::string mode : {"disabled", "swapdb"}) {
    SCOPED_TRACE(mode);
    TestServer primary(Args()), replica(Args({"--repl-diskless-load", mode}));
    ASSERT_TRUE(primary.ready() && replica.ready());
    RawConn p(primary.port()), r(replica.port()), old_key(replica.port()), new_key(replica.port()),
        no_key(replica.port()), tracker(replica.port());
    ASSERT_EQ(Call(p, {"SET", "pk", "1"}), "+OK\r\n");
    ASSERT_EQ(Call(r, {"SET", "k", "old"}), "+OK\r\n");
    ASSERT_EQ(Call(old_key, {"WATCH", "k"}), "+OK\r\n");
    ASSERT_EQ(Call(new_key, {"WATCH", "pk"}), "+OK\r\n");
    ASSERT_EQ(Call(no_key, {"WATCH", "zz"}), "+OK\r\n");
    ASSERT_EQ(Call(tracker, {"HELLO", "3"}).substr(0, 1), "%");
    ASSERT_EQ(Call(tracker, {"CLIENT", "TRACKING", "on"}), "+OK\r\n");
    ASSERT_EQ(Call(tracker, {"GET", "k"}), "$3\r\nold\r\n");
    ASSERT_EQ(Call(r, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
    ASSERT_TRUE(WaitLinkUp(r));
    auto exec = [](RawConn& c) {
      EXPECT_EQ(Call(c, {"MULTI"}), "+OK\r\n");
      EXPECT_EQ(Call(c, {"GET", "zz"}), "+QUEUED\r\n");
      return Call(c, {"EXEC"});
    };
    EXPECT_EQ(exec(old_key), "*-1\r\n");
    EXPECT_EQ(exec(new_key), mode == "swapdb" ? "*-1\r\n" : "*1\r\n$-1\r\n");
    EXPECT_EQ(exec(no_key), "*1\r\n$-1\r\n");
    EXPECT_EQ(tracker.ReadReply(), ">2\r\n$10\r\ninvalidate\r\n_\r\n");
  }
}

// Redis 7.0 propagates FLUSHDB even on an empty database.
TEST(ReplicationResyncE2E, FlushdbOnAnEmptyDatabaseIsPropagated) {
  TestServer primary(Args()), replica(Args());
  ASSERT_TRUE(primary.ready() && replica.ready());
  RawConn p(primary.port()), r(replica.port());
  ASSERT_EQ(Call(r, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
  ASSERT_TRUE(WaitLinkUp(r));
  ASSERT_TRUE(WaitSameOffset(p, r));
  const int64_t before = std::stoll(Info(p, "master_repl_offset", "replication"));
  ASSERT_EQ(Call(p, {"FLUSHDB"}), "+OK\r\n");
  ASSERT_EQ(Call(p, {"FLUSHALL"}), "+OK\r\n");
  const int64_t after = std::stoll(Info(p, "master_repl_offset", "replication"));
  // SELECT 0 + FLUSHDB + FLUSHALL
  EXPECT_EQ(after - before, static_cast<int64_t>(Resp({"SELECT", "0"}).size() + Resp({"FLUSHDB"}).size() +
                                                 Resp({"FLUSHALL"}).size()));
  EXPECT_TRUE(WaitSameOffset(p, r));
  EXPECT_EQ(Call(r, {"INFO", "commandstats"}).find("cmdstat_flushdb:calls=1,") != std::string::npos, true);
}

// A replica's stream is its primary's, verbatim: a sub-replica's full sync
// must continue in the database that stream has selected (AUX
// repl-stream-db), with ringkv and redis-server as the sub-replica.
TEST(ReplicationResyncE2E, ChainedFullSyncContinuesInTheStreamsDatabase) {
  for (const bool redis_leaf : {false, true}) {
    if (redis_leaf && !HaveTool("redis-server")) continue;
    SCOPED_TRACE(redis_leaf ? "redis-server sub-replica" : "ringkv sub-replica");
    TestServer a(Args()), b(Args());
    TestServer c = redis_leaf ? TestServer({"--enable-debug-command", "yes"}, kRedis) : TestServer(Args());
    ASSERT_TRUE(a.ready() && b.ready() && c.ready());
    RawConn ca(a.port()), cb(b.port()), cc(c.port());
    ASSERT_EQ(Call(cb, {"REPLICAOF", "127.0.0.1", std::to_string(a.port())}), "+OK\r\n");
    ASSERT_TRUE(WaitLinkUp(cb));
    ASSERT_EQ(Call(ca, {"SELECT", "4"}), "+OK\r\n");
    ASSERT_EQ(Call(ca, {"SET", "x", "1"}), "+OK\r\n");
    ASSERT_TRUE(WaitSameOffset(ca, cb));
    ASSERT_EQ(Call(cc, {"REPLICAOF", "127.0.0.1", std::to_string(b.port())}), "+OK\r\n");
    ASSERT_TRUE(WaitLinkUp(cc));
    ASSERT_EQ(Call(ca, {"SET", "y", "2"}), "+OK\r\n");  // no SELECT in a's stream: still db 4
    ASSERT_TRUE(WaitSameOffset(ca, cc));
    EXPECT_EQ(DbSize(cc, 4), ":2\r\n");
    EXPECT_EQ(DbSize(cc, 0), ":0\r\n");
    EXPECT_TRUE(WaitSameDigest(ca, cc));
  }
}

// A replica relays its primary's stream and adds nothing of its own (no
// PING, no writes of a writable replica, no PUBLISH): offsets name the same
// bytes on every node of a chain, or a later PSYNC continues from the wrong place.
TEST(ReplicationResyncE2E, ReplicaRelaysOnlyItsPrimarysStream) {
  TestServer a(Args()), b(Args({"--replica-read-only", "no", "--repl-ping-replica-period", "1"})), c(Args());
  ASSERT_TRUE(a.ready() && b.ready() && c.ready());
  RawConn ca(a.port()), cb(b.port()), cc(c.port());
  ASSERT_EQ(Call(cb, {"REPLICAOF", "127.0.0.1", std::to_string(a.port())}), "+OK\r\n");
  ASSERT_EQ(Call(cc, {"REPLICAOF", "127.0.0.1", std::to_string(b.port())}), "+OK\r\n");
  ASSERT_TRUE(WaitLinkUp(cb) && WaitLinkUp(cc));
  ASSERT_EQ(Call(cb, {"SET", "local", "1"}), "+OK\r\n");
  ASSERT_EQ(Call(cb, {"PUBLISH", "channel", "x"}), ":0\r\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // past b's ping period
  ASSERT_EQ(Call(ca, {"SET", "k", "v"}), "+OK\r\n");
  ASSERT_TRUE(WaitSameOffset(ca, cb));
  ASSERT_TRUE(WaitSameOffset(ca, cc));
  EXPECT_EQ(Call(cc, {"EXISTS", "local"}), ":0\r\n");
  EXPECT_EQ(Call(cc, {"GET", "k"}), "$1\r\nv\r\n");
}

// A primary that turned replica and back must select its database before
// its own first write: the stream's last SELECT was its primary's.
TEST(ReplicationResyncE2E, PromotedReplicaSelectsBeforeItsOwnWrites) {
  TestServer a(Args()), b(Args()), c(Args());
  ASSERT_TRUE(a.ready() && b.ready() && c.ready());
  RawConn ca(a.port()), cb(b.port()), cc(c.port());
  // b is the primary of a and c and writes in db 3.
  ASSERT_EQ(Call(ca, {"REPLICAOF", "127.0.0.1", std::to_string(b.port())}), "+OK\r\n");
  ASSERT_EQ(Call(cc, {"REPLICAOF", "127.0.0.1", std::to_string(b.port())}), "+OK\r\n");
  ASSERT_TRUE(WaitLinkUp(ca) && WaitLinkUp(cc));
  ASSERT_EQ(Call(cb, {"SELECT", "3"}), "+OK\r\n");
  ASSERT_EQ(Call(cb, {"SET", "one", "1"}), "+OK\r\n");
  ASSERT_EQ(Call(cb, {"WAIT", "2", "5000"}), ":2\r\n");
  // b hands over to a (continuing its history) and c stays below b: a -> b -> c.
  ASSERT_EQ(Call(cb, {"FAILOVER", "TO", "127.0.0.1", std::to_string(a.port()), "TIMEOUT", "5000"}), "+OK\r\n");
  ASSERT_TRUE(WaitInfo(ca, "role", "master", 10000, "replication"));
  ASSERT_TRUE(WaitLinkUp(cb));
  ASSERT_EQ(Call(ca, {"SELECT", "5"}), "+OK\r\n");
  ASSERT_EQ(Call(ca, {"SET", "two", "2"}), "+OK\r\n");
  ASSERT_TRUE(WaitSameOffset(ca, cc));
  // b takes over again; its client is still in db 3.
  ASSERT_EQ(Call(cb, {"REPLICAOF", "NO", "ONE"}), "+OK\r\n");
  ASSERT_EQ(Call(cb, {"SET", "three", "3"}), "+OK\r\n");
  ASSERT_TRUE(WaitSameOffset(cb, cc));
  EXPECT_EQ(DbSize(cc, 3), ":2\r\n");
  EXPECT_EQ(DbSize(cc, 5), ":1\r\n");
  EXPECT_TRUE(WaitSameDigest(cb, cc));
}

// Clients blocked on a server that turns replica would be served by its new
// primary's writes: Redis tells them and closes them.
TEST(ReplicationResyncE2E, BlockedClientsAreReleasedWhenTurningReplica) {
  TestServer primary(Args()), replica(Args());
  ASSERT_TRUE(primary.ready() && replica.ready());
  RawConn blocked(replica.port()), r(replica.port());
  ASSERT_TRUE(blocked.Send(Resp({"BLPOP", "q", "0"})));
  ASSERT_TRUE(WaitInfo(r, "blocked_clients", "1", 10000, "clients"));
  ASSERT_EQ(Call(r, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
  EXPECT_EQ(blocked.ReadReply(),
            "-UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)\r\n");
  EXPECT_TRUE(blocked.ReadEof());
}

// ROLE names the handshake step, and a primary silent for repl-timeout in
// it is logged as Redis logs it (operators and Redis's tests grep the line).
TEST(ReplicationResyncE2E, HandshakeStateAndTimeoutAreReported) {
  ScriptedPrimary primary;
  const ScopedTempDir log_dir;
  const std::string log = log_dir.path() + "/replica.log";
  TestServer replica(Args({"--repl-timeout", "1", "--logfile", log}));
  ASSERT_TRUE(replica.ready());
  RawConn r(replica.port());
  ASSERT_EQ(Call(r, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
  ASSERT_TRUE(primary.AcceptSilently());
  // "connecting" until the worker has its connection, then "handshake".
  auto in_handshake = [&] { return Call(r, {"ROLE"}).find("$9\r\nhandshake\r\n") != std::string::npos; };
  EXPECT_TRUE(WaitFor(in_handshake, true)) << Call(r, {"ROLE"});
  auto logged_timeout = [&] {
    return ReadFile(log).find("Timeout connecting to the MASTER...") != std::string::npos;
  };
  EXPECT_TRUE(WaitFor(logged_timeout, true));
}

}  // namespace
}  // namespace ringkv::testing::replication_resync_e2e_test

namespace ringkv::testing::replication_resync_e2e_test {
namespace {

// CONFIG REWRITE records the primary REPLICAOF set at run time, so a replica
// restarted from its file and its RDB continues by partial resync (PSYNC2
// from the RDB's replication info); a promoted server's file loses the line.
TEST(ReplicationResyncE2E, RewrittenReplicaRestartsWithAPartialResync) {
  const ScopedTempDir scoped_dir;
  const std::string& dir = scoped_dir.path();
  const std::string conf = dir + "/replica.conf";
  WriteFile(conf, "save 900 1\n");
  TestServer primary(Args());
  ASSERT_TRUE(primary.ready());
  RawConn p(primary.port());
  const std::string replicaof = "replicaof 127.0.0.1 " + std::to_string(primary.port());
  {
    TestServer replica({"--dir", dir, "--repl-diskless-sync-delay", "0"}, RINGKV_SERVER_PATH, conf);
    ASSERT_TRUE(replica.ready());
    RawConn r(replica.port());
    ASSERT_EQ(Call(r, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
    ASSERT_TRUE(WaitLinkUp(r));
    ASSERT_EQ(Call(p, {"SET", "k", "v"}), "+OK\r\n");
    ASSERT_TRUE(WaitSameOffset(p, r));
    ASSERT_EQ(Call(r, {"CONFIG", "REWRITE"}), "+OK\r\n");
    EXPECT_NE(ReadFile(conf).find(replicaof + "\n"), std::string::npos) << ReadFile(conf);
  }  // SIGTERM: the replica saves its RDB with the replication info
  ASSERT_EQ(Call(p, {"SET", "while-down", "1"}), "+OK\r\n");
  TestServer replica({"--dir", dir}, RINGKV_SERVER_PATH, conf);
  ASSERT_TRUE(replica.ready());
  RawConn r(replica.port());
  ASSERT_TRUE(WaitInfo(p, "sync_partial_ok", "1", 10000, "stats"));
  EXPECT_EQ(Info(p, "sync_full", "stats"), "1");
  ASSERT_TRUE(WaitSameOffset(p, r));
  EXPECT_EQ(Call(r, {"GET", "while-down"}), "$1\r\n1\r\n");
  ASSERT_EQ(Call(r, {"REPLICAOF", "NO", "ONE"}), "+OK\r\n");
  ASSERT_EQ(Call(r, {"CONFIG", "REWRITE"}), "+OK\r\n");
  EXPECT_EQ(ReadFile(conf).find("replicaof"), std::string::npos) << ReadFile(conf);
  replica.Stop();
}

}  // namespace
}  // namespace ringkv::testing::replication_resync_e2e_test

namespace ringkv::testing::replication_resync_e2e_test {
namespace {

std::string CommandStat(RawConn& c, const std::string& name) {
  const std::string all = Call(c, {"INFO", "commandstats"});
  const size_t at = all.find("cmdstat_" + name + ":");
  return at == std::string::npos ? "" : all.substr(at, all.find(",", at) - at);
}

// Commands propagate in the form Redis 7.0 gives them, so a replica's
// commandstats read as Redis's: GETSET as SET, BRPOPLPUSH as RPOPLPUSH
// (served at once or after blocking), BLMOVE as LMOVE.
TEST(ReplicationResyncE2E, BlockingAndLegacyCommandsPropagateInRedisForm) {
  TestServer primary(Args()), replica(Args());
  ASSERT_TRUE(primary.ready() && replica.ready());
  RawConn p(primary.port()), r(replica.port()), blocked(primary.port());
  ASSERT_EQ(Call(r, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
  ASSERT_TRUE(WaitLinkUp(r));
  ASSERT_EQ(Call(p, {"GETSET", "s", "1"}), "$-1\r\n");
  ASSERT_EQ(Call(p, {"RPUSH", "l", "a"}), ":1\r\n");
  ASSERT_EQ(Call(p, {"BRPOPLPUSH", "l", "m", "0"}), "$1\r\na\r\n");
  ASSERT_TRUE(blocked.Send(Resp({"BRPOPLPUSH", "empty", "m", "0"})));
  ASSERT_TRUE(WaitInfo(p, "blocked_clients", "1", 10000, "clients"));
  ASSERT_EQ(Call(p, {"RPUSH", "empty", "b"}), ":1\r\n");
  EXPECT_EQ(blocked.ReadReply(), "$1\r\nb\r\n");
  ASSERT_EQ(Call(p, {"BLMOVE", "m", "n", "LEFT", "RIGHT", "0"}), "$1\r\nb\r\n");
  ASSERT_TRUE(WaitSameOffset(p, r));
  EXPECT_EQ(CommandStat(r, "set"), "cmdstat_set:calls=1");
  EXPECT_EQ(CommandStat(r, "getset"), "");
  EXPECT_EQ(CommandStat(r, "rpoplpush"), "cmdstat_rpoplpush:calls=2");
  EXPECT_EQ(CommandStat(r, "brpoplpush"), "");
  EXPECT_EQ(CommandStat(r, "lmove"), "cmdstat_lmove:calls=1");
  EXPECT_TRUE(WaitSameDigest(p, r));
}

}  // namespace
}  // namespace ringkv::testing::replication_resync_e2e_test

namespace ringkv::testing::replication_resync_e2e_test {
namespace {

// A writable replica expires the keys its own clients gave a deadline (no
// primary will send their DEL); its primary's expired keys stay hidden until
// the primary's DEL, and a write to one replaces it (Redis 7.0).
TEST(ReplicationResyncE2E, WritableReplicaExpiresOnlyItsOwnKeys) {
  TestServer primary(Args()), replica(Args({"--replica-read-only", "no"}));
  ASSERT_TRUE(primary.ready() && replica.ready());
  RawConn p(primary.port()), r(replica.port());
  ASSERT_EQ(Call(r, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
  ASSERT_TRUE(WaitLinkUp(r));
  ASSERT_EQ(Call(p, {"DEBUG", "SET-ACTIVE-EXPIRE", "0"}), "+OK\r\n");
  ASSERT_EQ(Call(p, {"SET", "primarys1", "5", "PX", "10"}), "+OK\r\n");
  ASSERT_EQ(Call(p, {"SET", "primarys2", "5", "PX", "10"}), "+OK\r\n");
  ASSERT_EQ(Call(r, {"SET", "own", "1", "PX", "100"}), "+OK\r\n");
  ASSERT_TRUE(WaitSameOffset(p, r));
  // The replica's cron deletes its own key; the primary's two stay stored.
  EXPECT_TRUE(WaitFor([&] { return Call(r, {"DBSIZE"}); }, std::string(":2\r\n")));
  EXPECT_EQ(Call(r, {"EXISTS", "primarys1", "primarys2"}), ":0\r\n");
  EXPECT_EQ(Call(r, {"INCR", "primarys1"}), ":1\r\n");  // expired: replaced
  EXPECT_EQ(Call(r, {"TTL", "primarys1"}), ":-1\r\n");
  EXPECT_EQ(Call(r, {"GET", "primarys2"}), "$-1\r\n");
  EXPECT_EQ(Call(r, {"DBSIZE"}), ":2\r\n");
}

}  // namespace
}  // namespace ringkv::testing::replication_resync_e2e_test

namespace ringkv::testing::replication_resync_e2e_test {
namespace {

// A primary restarted from its own RDB continues its replication history
// (Redis 7.0): the old id becomes its secondary one, its replicas continue
// by partial resync, and keys that expired while it was down reach them as
// DELs through the stream.
TEST(ReplicationResyncE2E, RestartedPrimaryContinuesItsHistory) {
  const ScopedTempDir scoped_dir;
  const std::string& dir = scoped_dir.path();
  const std::vector<std::string> primary_args = {"--dir", dir, "--save", "3600 1", "--enable-debug-command", "yes",
                                                 "--repl-diskless-sync-delay", "0"};
  TestServer replica(Args());
  ASSERT_TRUE(replica.ready());
  RawConn r(replica.port());
  std::string replid, offset;
  int port = 0;
  {
    TestServer primary(primary_args);
    ASSERT_TRUE(primary.ready());
    port = primary.port();
    RawConn p(primary.port());
    ASSERT_EQ(Call(r, {"REPLICAOF", "127.0.0.1", std::to_string(port)}), "+OK\r\n");
    ASSERT_TRUE(WaitLinkUp(r));
    ASSERT_EQ(Call(p, {"SET", "kept", "1"}), "+OK\r\n");
    ASSERT_EQ(Call(p, {"DEBUG", "SET-ACTIVE-EXPIRE", "0"}), "+OK\r\n");
    ASSERT_EQ(Call(p, {"SELECT", "2"}), "+OK\r\n");
    ASSERT_EQ(Call(p, {"SET", "short", "1", "PX", "50"}), "+OK\r\n");
    ASSERT_TRUE(WaitSameOffset(p, r));
    replid = Info(p, "master_replid", "replication");
    offset = Info(p, "master_repl_offset", "replication");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // "short" expires, still stored
    // The replica has acknowledged everything: SHUTDOWN does not wait for it
    // (its REPLCONF GETACK would move the offset).
    for (int i = 0; i < 250 && Call(p, {"INFO", "replication"}).find(",offset=" + offset + ",") == std::string::npos;
         ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    p.Send(Resp({"SHUTDOWN"}));  // saves: save points are set
    int status;
    ASSERT_TRUE(primary.WaitExit(&status));
  }
  TestServer primary(std::vector<std::string>(primary_args.begin(), primary_args.end()));
  // The restarted primary takes a port of its own: the replica follows it.
  ASSERT_TRUE(primary.ready());
  RawConn p(primary.port());
  EXPECT_EQ(Info(p, "master_replid2", "replication"), replid);
  EXPECT_EQ(Info(p, "second_repl_offset", "replication"), std::to_string(std::stoll(offset) + 1));
  EXPECT_NE(Info(p, "master_repl_offset", "replication"), offset);  // the DEL of "short" is in the stream
  ASSERT_EQ(Call(r, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
  ASSERT_TRUE(WaitInfo(p, "sync_partial_ok", "1", 10000, "stats"));
  EXPECT_EQ(Info(p, "sync_full", "stats"), "0");
  ASSERT_TRUE(WaitSameOffset(p, r));
  EXPECT_EQ(DbSize(r, 2), ":0\r\n");
  EXPECT_TRUE(WaitSameDigest(p, r));
  primary.Stop();
}

}  // namespace
}  // namespace ringkv::testing::replication_resync_e2e_test
