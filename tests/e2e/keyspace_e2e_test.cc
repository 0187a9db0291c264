// End-to-end keyspace behaviour against the real binary: expiry (lazy and
// active), SCAN completeness while the table grows, eviction under maxmemory.
#include <gtest/gtest.h>

#include <set>
#include <vector>
#include <string>
#include <thread>

#include "tests/e2e/test_server.h"

namespace ringkv::testing::keyspace_e2e_test {
namespace {


// Value of `field` in an INFO reply ("" if absent).
std::string InfoField(RawConn& c, const std::string& section, const std::string& field) {
  c.Send(Resp({"INFO", section}));
  std::string info = c.ReadReply();
  size_t p = info.find("\r\n" + field + ":");
  if (p == std::string::npos) return "";
  p += field.size() + 3;
  return info.substr(p, info.find("\r\n", p) - p);
}

TEST(KeyspaceE2E, LazyExpiryHidesAndDeletesOnAccess) {
  TestServer s({"--enable-debug-command", "yes"});
  ASSERT_TRUE(s.ready());
  RawConn c(s.port());
  c.Send(Resp({"DEBUG", "SET-ACTIVE-EXPIRE", "0"}));
  EXPECT_EQ(c.ReadReply(), "+OK\r\n");
  c.Send(Resp({"SET", "k", "v", "PX", "50"}));
  EXPECT_EQ(c.ReadReply(), "+OK\r\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  c.Send(Resp({"DBSIZE"}));
  EXPECT_EQ(c.ReadReply(), ":1\r\n");  // not deleted yet: nothing touched it
  c.Send(Resp({"GET", "k"}));
  EXPECT_EQ(c.ReadReply(), "$-1\r\n");  // but never visible
  c.Send(Resp({"DBSIZE"}));
  EXPECT_EQ(c.ReadReply(), ":0\r\n");
  EXPECT_EQ(InfoField(c, "stats", "expired_keys"), "1");
}

TEST(KeyspaceE2E, ActiveExpiryDeletesWithoutAccess) {
  TestServer s({"--hz", "50", "--enable-debug-command", "yes"});
  ASSERT_TRUE(s.ready());
  RawConn c(s.port());
  // Active expiry stays off until every key is stored and counted, so the
  // count does not depend on how fast this machine (or ASan) writes them.
  c.Send(Resp({"DEBUG", "SET-ACTIVE-EXPIRE", "0"}));
  ASSERT_EQ(c.ReadReply(), "+OK\r\n");
  std::string batch;
  for (int i = 0; i < 2000; ++i) batch += Resp({"SET", "tmp:" + std::to_string(i), "v", "PX", "100"});
  for (int i = 0; i < 100; ++i) batch += Resp({"SET", "keep:" + std::to_string(i), "v"});
  c.Send(batch);
  for (int i = 0; i < 2100; ++i) ASSERT_EQ(c.ReadReply(), "+OK\r\n");
  c.Send(Resp({"INFO", "keyspace"}));
  EXPECT_NE(c.ReadReply().find("db0:keys=2100,expires=2000,"), std::string::npos);
  std::this_thread::sleep_for(std::chrono::milliseconds(150));  // all 2,000 are past their time
  c.Send(Resp({"DBSIZE"}));
  EXPECT_EQ(c.ReadReply(), ":2100\r\n");  // nothing removes them but active expiry
  c.Send(Resp({"DEBUG", "SET-ACTIVE-EXPIRE", "1"}));
  ASSERT_EQ(c.ReadReply(), "+OK\r\n");
  std::string dbsize;
  for (int i = 0; i < 60 && dbsize != ":100\r\n"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    c.Send(Resp({"DBSIZE"}));
    dbsize = c.ReadReply();
  }
  EXPECT_EQ(dbsize, ":100\r\n");
  EXPECT_EQ(InfoField(c, "stats", "expired_keys"), "2000");
  c.Send(Resp({"INFO", "keyspace"}));
  EXPECT_NE(c.ReadReply().find("db0:keys=100,expires=0,avg_ttl=0"), std::string::npos);
}

// Parses "*2\r\n$N\r\ncursor\r\n*K\r\n$..key.." into the cursor and keys.
std::string ParseScan(const std::string& reply, std::set<std::string>* keys) {
  size_t p = reply.find("\r\n", 4) + 2;  // after "*2\r\n$N\r\n"
  size_t e = reply.find("\r\n", p);
  std::string cursor = reply.substr(p, e - p);
  p = reply.find("\r\n", e + 2) + 2;  // after "*K\r\n"
  while (p < reply.size()) {
    size_t le = reply.find("\r\n", p);
    size_t len = std::stoul(reply.substr(p + 1, le - p - 1));
    keys->insert(reply.substr(le + 2, len));
    p = le + 2 + len + 2;
  }
  return cursor;
}

TEST(KeyspaceE2E, ScanReturnsEveryKeyWhileTheTableGrows) {
  TestServer s;
  ASSERT_TRUE(s.ready());
  RawConn scanner(s.port()), writer(s.port());
  std::string batch;
  const int base = 5000;
  for (int i = 0; i < base; ++i) batch += Resp({"SET", "base:" + std::to_string(i), "v"});
  writer.Send(batch);
  for (int i = 0; i < base; ++i) ASSERT_EQ(writer.ReadReply(), "+OK\r\n");
  std::set<std::string> seen;
  std::string cursor = "0";
  int round = 0, inserted = 0;
  do {
    scanner.Send(Resp({"SCAN", cursor, "COUNT", "50"}));
    cursor = ParseScan(scanner.ReadReply(), &seen);
    if (round++ < 60) {  // grow the table several times over while scanning
      std::string more;
      for (int j = 0; j < 500; ++j) more += Resp({"SET", "new:" + std::to_string(inserted++), "v"});
      writer.Send(more);
      for (int j = 0; j < 500; ++j) ASSERT_EQ(writer.ReadReply(), "+OK\r\n");
    }
  } while (cursor != "0");
  for (int i = 0; i < base; ++i) ASSERT_TRUE(seen.count("base:" + std::to_string(i))) << i;
  scanner.Send(Resp({"DBSIZE"}));
  EXPECT_EQ(scanner.ReadReply(), ":" + std::to_string(base + inserted) + "\r\n");
}

int64_t InfoInt(RawConn& c, const std::string& section, const std::string& field) {
  return std::stoll(InfoField(c, section, field));
}

// Read lookups count as hits or misses, write lookups do not: the same
// sequence gives keyspace_hits:8 keyspace_misses:7 on redis-server 7.0.
TEST(KeyspaceE2E, KeyspaceHitsAndMissesCountReadLookups) {
  TestServer s;
  ASSERT_TRUE(s.ready());
  RawConn c(s.port());
  const std::vector<std::vector<std::string>> cmds = {
      {"SET", "a", "1"}, {"GET", "a"}, {"GET", "b"}, {"EXISTS", "a", "b"}, {"TYPE", "a"}, {"TTL", "b"},
      {"OBJECT", "ENCODING", "a"}, {"STRLEN", "a"}, {"GETRANGE", "b", "0", "1"}, {"MGET", "a", "b", "c"},
      {"LCS", "a", "b"}, {"COPY", "a", "z"}, {"RENAME", "a", "y"}, {"INCR", "q"}, {"SET", "a", "2"}, {"DEL", "y"}};
  for (const auto& cmd : cmds) {
    c.Send(Resp(cmd));
    c.ReadReply();
  }
  EXPECT_EQ(InfoInt(c, "stats", "keyspace_hits"), 8);
  EXPECT_EQ(InfoInt(c, "stats", "keyspace_misses"), 7);
}

// DEBUG HTSTATS and HTSTATS-KEY report the tables in Redis's words: the key
// table (101 keys in 128 buckets, the rehash of so small a table done at
// once), the deadlines' map, and a set's table; the figures that depend on
// how keys hash are only checked for consistency.
TEST(KeyspaceE2E, DebugHtStatsReportsTheTables) {
  TestServer s({"--enable-debug-command", "yes", "--set-max-intset-entries", "0"});
  ASSERT_TRUE(s.ready());
  RawConn c(s.port());
  auto q = [&](const std::vector<std::string>& cmd) {
    c.Send(Resp(cmd));
    return c.ReadReply();
  };
  ASSERT_EQ(q({"DEBUG", "POPULATE", "100"}), "+OK\r\n");
  ASSERT_EQ(q({"SET", "t", "1", "EX", "100"}), "+OK\r\n");
  const std::string db = q({"DEBUG", "HTSTATS", "0"});
  EXPECT_NE(db.find("[Dictionary HT]\nHash table 0 stats (main hash table):\n table size: 128\n"
                    " number of elements: 101\n"),
            std::string::npos)
      << db;
  const size_t expires = db.find("[Expires HT]\nHash table 0 stats (main hash table):\n");
  ASSERT_NE(expires, std::string::npos) << db;
  EXPECT_NE(db.find(" number of elements: 1\n different slots: 1\n max chain length: 1\n", expires),
            std::string::npos)
      << db;
  EXPECT_EQ(db.find("rehashing target"), std::string::npos) << db;
  std::vector<std::string> sadd = {"SADD", "set"};
  for (int i = 0; i < 200; ++i) sadd.push_back(std::to_string(i));
  ASSERT_EQ(q(sadd), ":200\r\n");
  const std::string set = q({"DEBUG", "HTSTATS-KEY", "set"});
  EXPECT_EQ(set.rfind("$", 0), 0u) << set;  // a bulk string in RESP2
  EXPECT_NE(set.find("Hash table 0 stats (main hash table):\n"), std::string::npos) << set;
  EXPECT_NE(set.find(" number of elements: 200\n"), std::string::npos) << set;
  EXPECT_EQ(q({"DEBUG", "HTSTATS-KEY", "key:1"}),
            "-ERR The value stored at the specified key is not represented using an hash table\r\n");
  EXPECT_EQ(q({"DEBUG", "HTSTATS", "16"}), "-ERR Out of range database\r\n");
}

// Strings of 17-72 bytes live inside their key's node (core/keyspace_node.h):
// every way a value moves between keys, databases and files keeps its bytes,
// its TTL and its encoding, and MEMORY USAGE counts the node it is in.
TEST(KeyspaceE2E, ShortValuesKeptInTheirNodesSurviveEveryMove) {
  TestServer s({"--enable-debug-command", "yes"});
  ASSERT_TRUE(s.ready());
  RawConn c(s.port());
  auto q = [&](const std::vector<std::string>& cmd) {
    c.Send(Resp(cmd));
    return c.ReadReply();
  };
  auto bulk = [](const std::string& v) { return "$" + std::to_string(v.size()) + "\r\n" + v + "\r\n"; };
  const std::string v32(32, 'a'), v72(72, 'b'), v73(73, 'c'), v20 = "abcdefghij0123456789";
  ASSERT_EQ(q({"SET", "key:000000000001", v32}), "+OK\r\n");
  // The node (64 bytes: 32 of entry and link, 16 of key, 16 of the value's
  // room) and its bucket slot; the value allocates nothing.
  EXPECT_EQ(q({"MEMORY", "USAGE", "key:000000000001"}), ":72\r\n");
  EXPECT_EQ(q({"OBJECT", "ENCODING", "key:000000000001"}), "$6\r\nembstr\r\n");
  ASSERT_EQ(q({"SET", "k72", v72, "EX", "1000"}), "+OK\r\n");
  ASSERT_EQ(q({"SET", "k73", v73}), "+OK\r\n");
  ASSERT_EQ(q({"SET", "k20", v20}), "+OK\r\n");
  EXPECT_EQ(q({"OBJECT", "ENCODING", "k72"}), "$3\r\nraw\r\n");
  EXPECT_EQ(q({"GETRANGE", "k72", "70", "-1"}), "$2\r\nbb\r\n");
  // Moves between keys and databases.
  EXPECT_EQ(q({"RENAME", "k72", "r72"}), "+OK\r\n");
  EXPECT_EQ(q({"GET", "r72"}), bulk(v72));
  EXPECT_NE(q({"TTL", "r72"}), ":-1\r\n");
  EXPECT_EQ(q({"COPY", "key:000000000001", "c32"}), ":1\r\n");
  EXPECT_EQ(q({"MOVE", "k20", "1"}), ":1\r\n");
  EXPECT_EQ(q({"SELECT", "1"}), "+OK\r\n");
  EXPECT_EQ(q({"GET", "k20"}), bulk(v20));
  EXPECT_EQ(q({"SELECT", "0"}), "+OK\r\n");
  // Edits in place, and overwrites growing past the room and back.
  EXPECT_EQ(q({"APPEND", "c32", "xyz"}), ":35\r\n");
  EXPECT_EQ(q({"GET", "c32"}), bulk(v32 + "xyz"));
  EXPECT_EQ(q({"SETRANGE", "key:000000000001", "30", "ZZZZ"}), ":34\r\n");
  EXPECT_EQ(q({"GET", "key:000000000001"}), bulk(std::string(30, 'a') + "ZZZZ"));
  EXPECT_EQ(q({"SET", "key:000000000001", v73}), "+OK\r\n");
  EXPECT_EQ(q({"GETSET", "key:000000000001", v20}), bulk(v73));
  EXPECT_EQ(q({"GET", "key:000000000001"}), bulk(v20));
  EXPECT_EQ(q({"SET", "key:000000000001", "12345"}), "+OK\r\n");
  EXPECT_EQ(q({"OBJECT", "ENCODING", "key:000000000001"}), "$3\r\nint\r\n");
  EXPECT_EQ(q({"SET", "key:000000000001", v32}), "+OK\r\n");
  // An integer written over a string in the room, then renamed.
  EXPECT_EQ(q({"SET", "n", v20}), "+OK\r\n");
  EXPECT_EQ(q({"SET", "n", "7"}), "+OK\r\n");
  EXPECT_EQ(q({"RENAME", "n", "n2"}), "+OK\r\n");
  EXPECT_EQ(q({"GET", "n2"}), "$1\r\n7\r\n");
  EXPECT_EQ(q({"INCR", "n2"}), ":8\r\n");
  EXPECT_EQ(q({"DEL", "n2"}), ":1\r\n");
  // A trip through an RDB file, and through DUMP / RESTORE.
  const std::string dump = q({"DUMP", "r72"});
  EXPECT_EQ(q({"DEBUG", "RELOAD"}), "+OK\r\n");
  EXPECT_EQ(q({"GET", "key:000000000001"}), bulk(v32));
  EXPECT_EQ(q({"MEMORY", "USAGE", "key:000000000001"}), ":72\r\n");  // loaded into a node sized for it
  EXPECT_EQ(q({"GET", "r72"}), bulk(v72));
  EXPECT_NE(q({"TTL", "r72"}), ":-1\r\n");
  EXPECT_EQ(q({"GET", "k73"}), bulk(v73));
  EXPECT_EQ(q({"GET", "c32"}), bulk(v32 + "xyz"));
  ASSERT_EQ(dump.substr(0, 1), "$");
  const size_t header = dump.find("\r\n") + 2;
  const std::string payload = dump.substr(header, dump.size() - header - 2);
  EXPECT_EQ(q({"RESTORE", "restored", "0", payload}), "+OK\r\n");
  EXPECT_EQ(q({"GET", "restored"}), bulk(v72));
  // Restored into a node sized for it: 32 + 56 of room + 8 of key, and the slot.
  EXPECT_EQ(q({"MEMORY", "USAGE", "restored"}), ":104\r\n");
  EXPECT_EQ(q({"DBSIZE"}), ":5\r\n");
}

// Fills the server past maxmemory under `policy` and checks what Redis
// promises for it. Keys "persist:*" have no TTL; "vol:*" have one.
class EvictionE2E : public ::testing::TestWithParam<const char*> {};

TEST_P(EvictionE2E, HonoursTheLimitAndThePolicy) {
  const std::string policy = GetParam();
  TestServer s({"--maxmemory-samples", "10"});
  ASSERT_TRUE(s.ready());
  RawConn c(s.port());
  const int64_t base = InfoInt(c, "memory", "used_memory");
  const int64_t limit = base + 4 * 1024 * 1024;
  c.Send(Resp({"CONFIG", "SET", "maxmemory", std::to_string(limit), "maxmemory-policy", policy}));
  ASSERT_EQ(c.ReadReply(), "+OK\r\n");
  const std::string value(1000, 'x');
  const bool is_volatile = policy.rfind("volatile", 0) == 0;
  // A few keys without a TTL, and a hot set read between the write batches.
  for (int i = 0; i < 50; ++i) {
    c.Send(Resp({"SET", "persist:" + std::to_string(i), value}));
    ASSERT_EQ(c.ReadReply(), "+OK\r\n");
  }
  // Phase 1 fills most of the limit; after a pause longer than the LRU
  // clock's one-second resolution the hot keys are read (several times, for
  // LFU); phase 2 then overflows the limit and forces evictions.
  std::string oom;
  int next = 0;
  auto write = [&](int count) {
    for (int done = 0; done < count && oom.empty(); done += 500) {
      std::string cmds;
      for (int j = 0; j < 500; ++j, ++next) {
        // TTLs grow with the key number: volatile-ttl must evict the oldest writes first.
        cmds += Resp({"SET", "vol:" + std::to_string(next), value, "EX", std::to_string(100000 + next)});
      }
      c.Send(cmds);
      for (int j = 0; j < 500; ++j) {
        std::string r = c.ReadReply();
        if (r != "+OK\r\n" && oom.empty()) oom = r;
      }
    }
  };
  write(2500);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  std::string reads;
  for (int round = 0; round < 5; ++round) {
    for (int h = 0; h < 20; ++h) reads += Resp({"GET", "persist:" + std::to_string(h)});
  }
  c.Send(reads);
  for (int h = 0; h < 100; ++h) c.ReadReply();
  write(3000);  // over the limit by less than the aged keys can free
  const int64_t used = InfoInt(c, "memory", "used_memory");
  const int64_t evicted = InfoInt(c, "stats", "evicted_keys");
  if (policy == "noeviction") {
    EXPECT_EQ(oom, "-OOM command not allowed when used memory > 'maxmemory'.\r\n");
    EXPECT_EQ(evicted, 0);
    c.Send(Resp({"GET", "persist:0"}));  // reads still work
    EXPECT_EQ(c.ReadReply(), "$1000\r\n" + value + "\r\n");
    return;
  }
  EXPECT_EQ(oom, "") << policy;
  EXPECT_GT(evicted, 1000) << policy;
  EXPECT_LE(used, limit + 64 * 1024) << policy;  // at most a command's worth over
  int persist_left = 0, hot_left = 0;
  for (int i = 0; i < 50; ++i) {
    c.Send(Resp({"EXISTS", "persist:" + std::to_string(i)}));
    bool present = c.ReadReply() == ":1\r\n";
    persist_left += present;
    if (i < 20) hot_left += present;
  }
  if (is_volatile) {
    EXPECT_EQ(persist_left, 50) << "volatile policies never evict keys without a TTL";
  }
  if (policy == "allkeys-lru" || policy == "allkeys-lfu") {
    EXPECT_GE(hot_left, 16) << "hot keys should survive";
  }
  if (policy == "volatile-ttl") {
    // Sampled, so approximate (as in Redis): the earliest deadlines go first.
    auto present = [&](int from, int to) {
      int n = 0;
      for (int i = from; i < to; ++i) {
        c.Send(Resp({"EXISTS", "vol:" + std::to_string(i)}));
        n += c.ReadReply() == ":1\r\n";
      }
      return n;
    };
    EXPECT_LE(present(0, 500), 200) << "most of the earliest deadlines should be evicted";
    EXPECT_GE(present(next - 500, next), 450) << "the latest deadlines should stay";
  }
}

INSTANTIATE_TEST_SUITE_P(Policies, EvictionE2E,
                         ::testing::Values("noeviction", "allkeys-lru", "allkeys-lfu", "allkeys-random", "volatile-lru",
                                           "volatile-lfu", "volatile-random", "volatile-ttl"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string n = info.param;
                           for (char& ch : n) if (ch == '-') ch = '_';
                           return n;
                         });

}  // namespace
}  // namespace ringkv::testing::keyspace_e2e_test
