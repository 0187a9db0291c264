// Streams end to end, with Debian's redis-server 7.0: RDB files move both
// ways (consumer groups, pending entries, deleted entries, several nodes,
// trimmed and emptied streams) with identical XINFO STREAM [FULL], XRANGE,
// XPENDING, XINFO GROUPS / CONSUMERS and DEBUG DIGEST; and the stream
// commands replicate -- ringkv to a ringkv and a redis-server replica, and
// redis-server to a ringkv replica -- to the same state.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/persistence_test_util.h"

namespace ringkv::testing::streams_e2e_test {
namespace {

const char* kRedis = "/usr/bin/redis-server";

// Replies that carry a time relative to now (idle) or the moment a replica
// applied a command (a consumer's seen-time) are compared without it.
std::string WithoutClockFields(const std::string& reply) {
  static const std::regex idle("(idle\r\n):[0-9]+\r\n");
  static const std::regex seen("(seen-time\r\n):[0-9]+\r\n");
  // XPENDING's extended form: id, consumer, idle, deliveries.
  static const std::regex pending_idle("(\\*4\r\n\\$[0-9]+\r\n[0-9]+-[0-9]+\r\n\\$[0-9]+\r\n[^\r]*\r\n):[0-9]+\r\n");
  std::string out = std::regex_replace(reply, idle, "$1:T\r\n");
  out = std::regex_replace(out, seen, "$1:T\r\n");
  return std::regex_replace(out, pending_idle, "$1:T\r\n");
}

// What a stream looks like from outside: every reply that describes it.
std::string StreamState(RawConn& c, const std::string& key, const std::vector<std::string>& groups,
                        bool with_seen_time = true) {
  std::string out;
  auto add = [&](const std::vector<std::string>& argv) {
    std::string r = Call(c, argv);
    if (!with_seen_time) r = WithoutClockFields(r);
    out += argv[0] + " " + argv[1] + ": " + r;
  };
  add({"XINFO", "STREAM", key});
  add({"XINFO", "STREAM", key, "FULL"});
  add({"XINFO", "STREAM", key, "FULL", "COUNT", "0"});
  add({"XRANGE", key, "-", "+"});
  add({"XREVRANGE", key, "+", "-", "COUNT", "3"});
  add({"XLEN", key});
  add({"XINFO", "GROUPS", key});
  for (const std::string& g : groups) {
    add({"XPENDING", key, g});
    out += WithoutClockFields(Call(c, {"XPENDING", key, g, "-", "+", "1000"}));
    out += WithoutClockFields(Call(c, {"XINFO", "CONSUMERS", key, g}));
  }
  out += Call(c, {"DEBUG", "DIGEST-VALUE", key});
  return out;
}

std::string AllStreams(RawConn& c, bool with_seen_time = true) {
  std::string out = StreamState(c, "jobs", {"workers", "audit"}, with_seen_time);
  out += StreamState(c, "trimmed", {"g"}, with_seen_time);
  out += StreamState(c, "emptied", {"g"}, with_seen_time);
  out += StreamState(c, "fresh", {"g"}, with_seen_time);
  return out;
}


// Streams in every state the RDB format has to carry: several nodes (five
// entries each), entries with the master entry's fields and with others,
// deleted entries (a whole node's too), two groups with pending entries
// spread over consumers, a consumer without any, a NOACK reader, a trimmed
// stream, an emptied stream with a group and XSETID counters, a stream
// made by MKSTREAM. Explicit IDs, so both servers hold the same data.
void BuildStreams(RawConn& c, const std::string& tag) {
  ASSERT_EQ(Call(c, {"CONFIG", "SET", "stream-node-max-entries", "5"}), "+OK\r\n");
  for (int i = 1; i <= 40; ++i) {
    std::vector<std::string> xadd = {"XADD", "jobs", std::to_string(i) + "-" + std::to_string(i % 3)};
    if (i % 4 == 0) {
      xadd.insert(xadd.end(), {"other", tag + std::to_string(i)});
    } else {
      xadd.insert(xadd.end(), {"job", std::to_string(i), "queue", "default", "payload", std::string(i, 'p')});
    }
    ASSERT_EQ(Call(c, xadd).substr(0, 1), "$");
  }
  EXPECT_EQ(Call(c, {"XDEL", "jobs", "2-2", "7-1", "11-2", "12-0", "13-1", "14-2", "15-0"}), ":7\r\n");
  EXPECT_EQ(Call(c, {"XGROUP", "CREATE", "jobs", "workers", "0"}), "+OK\r\n");
  EXPECT_EQ(Call(c, {"XGROUP", "CREATE", "jobs", "audit", "20-2", "ENTRIESREAD", "18"}), "+OK\r\n");
  EXPECT_EQ(Call(c, {"XREADGROUP", "GROUP", "workers", "alice", "COUNT", "6", "STREAMS", "jobs", ">"}).substr(0, 4),
            "*1\r\n");
  EXPECT_EQ(Call(c, {"XREADGROUP", "GROUP", "workers", "bob", "COUNT", "4", "STREAMS", "jobs", ">"}).substr(0, 4),
            "*1\r\n");
  EXPECT_EQ(Call(c, {"XACK", "jobs", "workers", "1-1", "4-1", "99-0"}), ":2\r\n");  // 99-0 is not pending
  EXPECT_EQ(Call(c, {"XCLAIM", "jobs", "workers", "carol", "0", "3-0", "5-2", "JUSTID"}),
            "*2\r\n$3\r\n3-0\r\n$3\r\n5-2\r\n");
  EXPECT_EQ(Call(c, {"XGROUP", "CREATECONSUMER", "jobs", "workers", "idle-one"}), ":1\r\n");
  EXPECT_EQ(Call(c, {"XREADGROUP", "GROUP", "audit", "auditor", "NOACK", "COUNT", "3", "STREAMS", "jobs", ">"})
                .substr(0, 4),
            "*1\r\n");
  EXPECT_EQ(Call(c, {"XREADGROUP", "GROUP", "audit", "auditor", "COUNT", "2", "STREAMS", "jobs", ">"}).substr(0, 4),
            "*1\r\n");
  EXPECT_EQ(Call(c, {"XDEL", "jobs", "3-0"}), ":1\r\n");  // pending, then deleted

  for (int i = 1; i <= 100; ++i) {
    ASSERT_EQ(Call(c, {"XADD", "trimmed", "1000-" + std::to_string(i), "n", std::to_string(i)}).substr(0, 1), "$");
  }
  EXPECT_EQ(Call(c, {"XTRIM", "trimmed", "MAXLEN", "33"}), ":67\r\n");
  EXPECT_EQ(Call(c, {"XGROUP", "CREATE", "trimmed", "g", "1000-50"}), "+OK\r\n");
  EXPECT_EQ(Call(c, {"XREADGROUP", "GROUP", "g", "c", "COUNT", "5", "STREAMS", "trimmed", ">"}).substr(0, 4),
            "*1\r\n");

  ASSERT_EQ(Call(c, {"XADD", "emptied", "5-1", "a", "1"}), "$3\r\n5-1\r\n");
  ASSERT_EQ(Call(c, {"XADD", "emptied", "6-1", "a", "2"}), "$3\r\n6-1\r\n");
  EXPECT_EQ(Call(c, {"XGROUP", "CREATE", "emptied", "g", "0"}), "+OK\r\n");
  EXPECT_EQ(Call(c, {"XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "emptied", ">"}).substr(0, 4),
            "*1\r\n");
  EXPECT_EQ(Call(c, {"XDEL", "emptied", "5-1", "6-1"}), ":2\r\n");
  EXPECT_EQ(Call(c, {"XSETID", "emptied", "90-9", "ENTRIESADDED", "70", "MAXDELETEDID", "80-0"}), "+OK\r\n");

  EXPECT_EQ(Call(c, {"XGROUP", "CREATE", "fresh", "g", "$", "MKSTREAM"}), "+OK\r\n");
}

// Changes made on the other side before the file goes back.
void ChangeStreams(RawConn& c) {
  EXPECT_EQ(Call(c, {"XADD", "jobs", "41-0", "job", "41", "queue", "default", "payload", "x"}), "$4\r\n41-0\r\n");
  EXPECT_EQ(Call(c, {"XREADGROUP", "GROUP", "workers", "dave", "COUNT", "3", "STREAMS", "jobs", ">"}).substr(0, 4),
            "*1\r\n");
  EXPECT_EQ(Call(c, {"XACK", "jobs", "workers", "5-2"}), ":1\r\n");
  EXPECT_EQ(Call(c, {"XAUTOCLAIM", "jobs", "workers", "erin", "0", "0-0", "COUNT", "4", "JUSTID"}).substr(0, 4),
            "*3\r\n");
  EXPECT_EQ(Call(c, {"XGROUP", "DELCONSUMER", "jobs", "workers", "idle-one"}), ":0\r\n");
  EXPECT_EQ(Call(c, {"XTRIM", "trimmed", "MINID", "1000-80"}), ":12\r\n");
  EXPECT_EQ(Call(c, {"XADD", "fresh", "7-7", "k", "v"}), "$3\r\n7-7\r\n");
}


TEST(StreamsE2E, RdbFilesMoveBothWaysWithRedisServer) {
  if (!HaveTool("redis-server")) GTEST_SKIP() << "redis-server not installed";
  TempDir dir;
  std::string state, digest;
  {
    TestServer redis(InDir(dir), kRedis);
    ASSERT_TRUE(redis.ready());
    RawConn c(redis.port());
    BuildStreams(c, "r");
    state = AllStreams(c);
    digest = Digest(c);
    ASSERT_EQ(Call(c, {"SAVE"}), "+OK\r\n");
  }
  {
    TestServer s(InDir(dir));
    ASSERT_TRUE(s.ready());
    RawConn c(s.port());
    EXPECT_EQ(Call(c, {"DBSIZE"}), ":4\r\n");
    EXPECT_EQ(AllStreams(c), state);  // redis-server's file, read by ringkv
    EXPECT_EQ(Digest(c), digest);
    ChangeStreams(c);
    state = AllStreams(c);
    digest = Digest(c);
    ASSERT_EQ(Call(c, {"SAVE"}), "+OK\r\n");
  }
  std::string out;
  if (HaveTool("redis-check-rdb")) {
    EXPECT_EQ(RunShell("redis-check-rdb " + (dir / "dump.rdb"), &out), 0) << out;
  }
  TestServer redis(InDir(dir), kRedis);
  ASSERT_TRUE(redis.ready());
  RawConn c(redis.port());
  EXPECT_EQ(AllStreams(c), state);  // ringkv's file, read by redis-server
  EXPECT_EQ(Digest(c), digest);
}

// XSETID may set a stream's last ID below the entries XDEL removed (Redis
// 7.0 checks the top entry only). A rewrite without the RDB preamble must
// bring that back -- redis-server 7.0's own refuses its XSETID on load --
// for ringkv and for redis-server reading ringkv's file.
TEST(StreamsE2E, AofRewriteKeepsALastIdBelowTheDeletedEntries) {
  TempDir dir;
  const std::vector<std::string> args = InDir(dir, {"--appendonly", "yes", "--aof-use-rdb-preamble", "no"});
  std::string state;
  auto states = [](RawConn& c) { return StreamState(c, "emptied", {}) + StreamState(c, "lowered", {"g"}); };
  {
    TestServer s(args);
    ASSERT_TRUE(s.ready());
    RawConn c(s.port());
    ASSERT_EQ(Call(c, {"XADD", "emptied", "5-1", "a", "1"}), "$3\r\n5-1\r\n");
    ASSERT_EQ(Call(c, {"XADD", "emptied", "6-1", "a", "2"}), "$3\r\n6-1\r\n");
    ASSERT_EQ(Call(c, {"XDEL", "emptied", "5-1", "6-1"}), ":2\r\n");
    EXPECT_EQ(Call(c, {"XSETID", "emptied", "0-0"}), "+OK\r\n");  // below max_deleted_entry_id 6-1
    ASSERT_EQ(Call(c, {"XADD", "lowered", "1-1", "a", "1"}), "$3\r\n1-1\r\n");
    ASSERT_EQ(Call(c, {"XADD", "lowered", "9-1", "a", "2"}), "$3\r\n9-1\r\n");
    ASSERT_EQ(Call(c, {"XGROUP", "CREATE", "lowered", "g", "0"}), "+OK\r\n");
    ASSERT_EQ(Call(c, {"XDEL", "lowered", "9-1"}), ":1\r\n");
    EXPECT_EQ(Call(c, {"XSETID", "lowered", "2-0"}), "+OK\r\n");
    EXPECT_EQ(Call(c, {"XSETID", "lowered", "0-5"}),
              "-ERR The ID specified in XSETID is smaller than the target stream top item\r\n");
    state = states(c);
    EXPECT_NE(state.find("max-deleted-entry-id\r\n$3\r\n6-1"), std::string::npos) << state;
    EXPECT_EQ(Call(c, {"BGREWRITEAOF"}), "+Background append only file rewriting started\r\n");
    ASSERT_TRUE(WaitInfo(c, "aof_rewrites", "1"));  // done: the next start reads the rewrite
  }
  {
    TestServer s(args);
    ASSERT_TRUE(s.ready());
    RawConn c(s.port());
    EXPECT_EQ(states(c), state);
  }
  if (!HaveTool("redis-server")) return;
  TestServer redis(args, kRedis);
  ASSERT_TRUE(redis.ready());
  RawConn c(redis.port());
  EXPECT_EQ(states(c), state);
}

// The same states made on each server independently: the replies agree
// before any file moves (what the interop test above relies on).
TEST(StreamsE2E, SameCommandsGiveTheSameStateAsRedisServer) {
  if (!HaveTool("redis-server")) GTEST_SKIP() << "redis-server not installed";
  TestServer s({"--enable-debug-command", "yes"});
  TestServer redis({"--enable-debug-command", "yes"}, kRedis);
  ASSERT_TRUE(s.ready() && redis.ready());
  RawConn ck(s.port()), cr(redis.port());
  BuildStreams(ck, "r");
  BuildStreams(cr, "r");
  // Delivery and seen times differ between two servers run side by side:
  // everything else is compared.
  for (const char* key : {"jobs", "trimmed", "emptied", "fresh"}) {
    for (const std::vector<std::string>& argv : std::vector<std::vector<std::string>>{
             {"XINFO", "STREAM", key},
             {"XRANGE", key, "-", "+"},
             {"XINFO", "GROUPS", key},
             {"XPENDING", key, "workers"},
             {"XPENDING", key, "g"}}) {
      EXPECT_EQ(Call(ck, argv), Call(cr, argv)) << argv[0] << " " << argv[1] << " " << key;
    }
    EXPECT_EQ(Call(ck, {"DEBUG", "DIGEST-VALUE", key}), Call(cr, {"DEBUG", "DIGEST-VALUE", key})) << key;
  }
  EXPECT_EQ(Digest(ck), Digest(cr));
}

bool WaitSameDigest(RawConn& a, RawConn& b, int timeout_ms = 10000) {
  for (int i = 0; i < timeout_ms / 50; ++i) {
    if (Digest(a) == Digest(b)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// Node limits are configuration, not replicated: every server gets these.
std::vector<std::string> StreamArgs(std::vector<std::string> extra = {}) {
  std::vector<std::string> a = {"--enable-debug-command", "yes", "--stream-node-max-entries", "10"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

// Every stream command a primary propagates, with `*` IDs, approximate
// trimming and a blocked XREADGROUP woken by an XADD.
void StreamTraffic(TestServer& primary) {
  RawConn c(primary.port());
  RawConn blocked(primary.port());
  for (int i = 0; i < 120; ++i) {
    ASSERT_EQ(Call(c, {"XADD", "jobs", "MAXLEN", "~", "50", "*", "job", std::to_string(i)}).substr(0, 1), "$");
  }
  ASSERT_EQ(Call(c, {"XADD", "fresh", "NOMKSTREAM", "*", "a", "1"}), "$-1\r\n");
  EXPECT_EQ(Call(c, {"XGROUP", "CREATE", "jobs", "workers", "0"}), "+OK\r\n");
  EXPECT_EQ(Call(c, {"XGROUP", "CREATE", "jobs", "audit", "$"}), "+OK\r\n");
  EXPECT_EQ(Call(c, {"XGROUP", "CREATE", "fresh", "g", "$", "MKSTREAM"}), "+OK\r\n");
  ASSERT_TRUE(blocked.Send(Resp({"XREADGROUP", "GROUP", "g", "waiter", "BLOCK", "0", "STREAMS", "fresh", ">"})));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_EQ(Call(c, {"XADD", "fresh", "*", "woken", "1"}).substr(0, 1), "$");
  EXPECT_EQ(blocked.ReadReply().substr(0, 4), "*1\r\n");  // delivered: an XCLAIM on the replicas
  EXPECT_EQ(Call(c, {"XREADGROUP", "GROUP", "workers", "alice", "COUNT", "10", "STREAMS", "jobs", ">"}).substr(0, 4),
            "*1\r\n");
  EXPECT_EQ(Call(c, {"XREADGROUP", "GROUP", "workers", "bob", "COUNT", "5", "STREAMS", "jobs", ">"}).substr(0, 4),
            "*1\r\n");
  ASSERT_EQ(Call(c, {"XADD", "jobs", "*", "job", "audit-me"}).substr(0, 1), "$");
  EXPECT_EQ(Call(c, {"XREADGROUP", "GROUP", "audit", "auditor", "NOACK", "STREAMS", "jobs", ">"}).substr(0, 4),
            "*1\r\n");
  std::string first = Call(c, {"XRANGE", "jobs", "-", "+", "COUNT", "1"});
  // "*1\r\n*2\r\n$<n>\r\n<id>\r\n...": the first entry's ID.
  const size_t at = first.find("\r\n", first.find('$')) + 2;
  const std::string first_id = first.substr(at, first.find("\r\n", at) - at);
  EXPECT_EQ(Call(c, {"XACK", "jobs", "workers", first_id}), ":1\r\n");
  EXPECT_EQ(Call(c, {"XCLAIM", "jobs", "workers", "carol", "0", first_id}), "*0\r\n");  // acked: nothing
  EXPECT_EQ(Call(c, {"XAUTOCLAIM", "jobs", "workers", "carol", "0", "0-0", "COUNT", "3"}).substr(0, 4), "*3\r\n");
  EXPECT_EQ(Call(c, {"XGROUP", "CREATECONSUMER", "jobs", "workers", "dave"}), ":1\r\n");
  EXPECT_EQ(Call(c, {"XGROUP", "DELCONSUMER", "jobs", "workers", "bob"}).substr(0, 1), ":");
  EXPECT_EQ(Call(c, {"XTRIM", "jobs", "MAXLEN", "~", "30"}).substr(0, 1), ":");
  EXPECT_EQ(Call(c, {"XTRIM", "jobs", "MAXLEN", "=", "25"}).substr(0, 1), ":");
  std::string last = Call(c, {"XREVRANGE", "jobs", "+", "-", "COUNT", "1"});
  const size_t lat = last.find("\r\n", last.find('$')) + 2;
  const std::string last_id = last.substr(lat, last.find("\r\n", lat) - lat);
  EXPECT_EQ(Call(c, {"XDEL", "jobs", last_id}), ":1\r\n");
  EXPECT_EQ(Call(c, {"XSETID", "jobs", last_id, "ENTRIESADDED", "500", "MAXDELETEDID", last_id}), "+OK\r\n");
  EXPECT_EQ(Call(c, {"XGROUP", "SETID", "jobs", "audit", "0", "ENTRIESREAD", "3"}), "+OK\r\n");
  EXPECT_EQ(Call(c, {"XADD", "trimmed", "MINID", "~", "0", "*", "x", "1"}).substr(0, 1), "$");
  EXPECT_EQ(Call(c, {"XGROUP", "CREATE", "trimmed", "g", "0"}), "+OK\r\n");
  EXPECT_EQ(Call(c, {"XADD", "emptied", "1-1", "a", "1"}), "$3\r\n1-1\r\n");
  EXPECT_EQ(Call(c, {"XGROUP", "CREATE", "emptied", "g", "0"}), "+OK\r\n");
  EXPECT_EQ(Call(c, {"XDEL", "emptied", "1-1"}), ":1\r\n");
  EXPECT_EQ(Call(c, {"XGROUP", "CREATE", "gone", "g", "$", "MKSTREAM"}), "+OK\r\n");
  EXPECT_EQ(Call(c, {"XGROUP", "DESTROY", "gone", "g"}), ":1\r\n");
}

// A group's entries-read after a plain XREADGROUP is not propagated by
// Redis 7.0 (XCLAIM ... LASTID carries the ID only; 7.2 added it), so a
// replica may show it unknown where its primary counts it: replicas are
// compared with each other reply by reply, and with the primary by DEBUG
// DIGEST, and a replica that syncs afterwards (the RDB carries the counter)
// with the primary reply by reply.
TEST(StreamsE2E, StreamCommandsReplicateToRingkvAndRedisServerReplicas) {
  TestServer primary(StreamArgs({"--repl-diskless-sync-delay", "0"}));
  TestServer replica(StreamArgs());
  ASSERT_TRUE(primary.ready() && replica.ready());
  RawConn cp(primary.port()), ck(replica.port());
  ASSERT_EQ(Call(cp, {"XADD", "jobs", "1-1", "before", "sync"}), "$3\r\n1-1\r\n");  // by full sync
  ASSERT_EQ(Call(ck, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
  ASSERT_TRUE(WaitInfo(ck, "master_link_status", "up", 10000, "replication"));
  std::unique_ptr<TestServer> redis;
  std::unique_ptr<RawConn> cr;
  if (HaveTool("redis-server")) {
    redis = std::make_unique<TestServer>(StreamArgs(), kRedis);
    ASSERT_TRUE(redis->ready());
    cr = std::make_unique<RawConn>(redis->port());
    ASSERT_EQ(Call(*cr, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
    ASSERT_TRUE(WaitInfo(*cr, "master_link_status", "up", 10000, "replication"));
  }
  StreamTraffic(primary);
  EXPECT_EQ(Call(cp, {"WAIT", cr ? "2" : "1", "5000"}), cr ? ":2\r\n" : ":1\r\n");
  EXPECT_TRUE(WaitSameDigest(cp, ck));
  if (cr) {
    EXPECT_TRUE(WaitSameDigest(cp, *cr));
    const std::string of_redis = AllStreams(*cr, false);
    EXPECT_EQ(AllStreams(ck, false), of_redis);
    EXPECT_NE(of_redis.find("waiter"), std::string::npos);  // the blocked read's delivery reached it
  }
  // A replica that syncs now gets it all through the RDB payload.
  TestServer late(StreamArgs());
  ASSERT_TRUE(late.ready());
  RawConn cl(late.port());
  ASSERT_EQ(Call(cl, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
  ASSERT_TRUE(WaitInfo(cl, "master_link_status", "up", 10000, "replication"));
  EXPECT_TRUE(WaitSameDigest(cp, cl));
  EXPECT_EQ(AllStreams(cl, false), AllStreams(cp, false));
}

TEST(StreamsE2E, RingkvReplicaOfRedisServerFollowsStreamCommands) {
  if (!HaveTool("redis-server")) GTEST_SKIP() << "redis-server not installed";
  TestServer primary(StreamArgs({"--repl-diskless-sync-delay", "0"}), kRedis);
  TestServer replica(StreamArgs());
  TestServer redis_replica(StreamArgs(), kRedis);
  ASSERT_TRUE(primary.ready() && replica.ready() && redis_replica.ready());
  RawConn cp(primary.port()), ck(replica.port()), cr(redis_replica.port());
  ASSERT_EQ(Call(cp, {"XADD", "jobs", "1-1", "before", "sync"}), "$3\r\n1-1\r\n");
  for (RawConn* c : {&ck, &cr}) {
    ASSERT_EQ(Call(*c, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
    ASSERT_TRUE(WaitInfo(*c, "master_link_status", "up", 10000, "replication"));
  }
  StreamTraffic(primary);
  EXPECT_EQ(Call(cp, {"WAIT", "2", "5000"}), ":2\r\n");
  EXPECT_TRUE(WaitSameDigest(cp, ck));
  EXPECT_TRUE(WaitSameDigest(cp, cr));
  EXPECT_EQ(AllStreams(ck, false), AllStreams(cr, false));  // as redis-server's own replica
}

}  // namespace
}  // namespace ringkv::testing::streams_e2e_test
