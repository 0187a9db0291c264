// Collections end to end: every type in every encoding survives RDB (SAVE,
// restart), the command-form AOF rewrite and replay, and replication -- and
// interoperates with Debian's redis-server 7.0 both ways (same DEBUG
// DIGEST), with redis-check-rdb and redis-check-aof accepting our files.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/persistence_test_util.h"

namespace ringkv::testing::collections_e2e_test {
namespace {

const char* kRedis = "/usr/bin/redis-server";



// Writes one key of every type in each of its encodings (small and large,
// integers and strings), some with TTLs, through the commands that build
// them. `tag` prefixes the keys.
void PopulateCollections(RawConn& c, const std::string& tag) {
  ASSERT_EQ(Call(c, {"HSET", tag + "h:small", "f1", "v1", "f2", "2"}), ":2\r\n");
  std::vector<std::string> hset = {"HSET", tag + "h:big"};
  for (int i = 0; i < 600; ++i) {
    hset.push_back("field" + std::to_string(i));
    hset.push_back(std::to_string(i * 7));
  }
  ASSERT_EQ(Call(c, hset), ":600\r\n");
  ASSERT_EQ(Call(c, {"HSET", tag + "h:long", "f", std::string(100, 'x')}), ":1\r\n");
  ASSERT_EQ(Call(c, {"HINCRBYFLOAT", tag + "h:small", "float", "1.25"}), "$4\r\n1.25\r\n");
  ASSERT_EQ(Call(c, {"SADD", tag + "s:ints", "1", "-20", "300000", "9223372036854775807"}), ":4\r\n");
  std::vector<std::string> sadd = {"SADD", tag + "s:big"};
  for (int i = 0; i < 600; ++i) sadd.push_back("member" + std::to_string(i));
  ASSERT_EQ(Call(c, sadd), ":600\r\n");
  std::vector<std::string> sadd_ints = {"SADD", tag + "s:manyints"};
  for (int i = 0; i < 700; ++i) sadd_ints.push_back(std::to_string(i));
  ASSERT_EQ(Call(c, sadd_ints), ":700\r\n");  // past set-max-intset-entries
  ASSERT_EQ(Call(c, {"ZADD", tag + "z:small", "1", "a", "2.5", "b", "-inf", "c"}), ":3\r\n");
  std::vector<std::string> zadd = {"ZADD", tag + "z:big"};
  for (int i = 0; i < 300; ++i) {
    zadd.push_back(std::to_string(i * 0.25));
    zadd.push_back("m" + std::to_string(i));
  }
  ASSERT_EQ(Call(c, zadd), ":300\r\n");
  ASSERT_EQ(Call(c, {"ZINCRBY", tag + "z:small", "0.1", "a"}), "$18\r\n1.1000000000000001\r\n");
  std::vector<std::string> rpush = {"RPUSH", tag + "l:big"};
  for (int i = 0; i < 3000; ++i) rpush.push_back(i % 3 ? std::to_string(i) : "element-" + std::to_string(i));
  ASSERT_EQ(Call(c, rpush), ":3000\r\n");
  ASSERT_EQ(Call(c, {"LPUSH", tag + "l:small", "c", "b", "a"}), ":3\r\n");
  ASSERT_EQ(Call(c, {"EXPIRE", tag + "h:small", "10000"}), ":1\r\n");
  ASSERT_EQ(Call(c, {"EXPIRE", tag + "l:small", "10000"}), ":1\r\n");
}

// Commands whose replay must reproduce the same data: random ones (SPOP)
// are propagated as what they did.
void MutateCollections(RawConn& c, const std::string& tag) {
  EXPECT_EQ(Call(c, {"HDEL", tag + "h:big", "field1", "field2"}), ":2\r\n");
  EXPECT_EQ(Call(c, {"HINCRBY", tag + "h:big", "field3", "5"}), ":26\r\n");
  EXPECT_EQ(Call(c, {"SPOP", tag + "s:big", "3"}).rfind("*3\r\n", 0), 0u);
  EXPECT_EQ(Call(c, {"SPOP", tag + "s:ints"}).rfind("$", 0), 0u);
  EXPECT_EQ(Call(c, {"SCARD", tag + "s:big"}), ":597\r\n");
  // The member SPOP may have taken is re-added first, so the move is certain.
  Call(c, {"SADD", tag + "s:big", "member10"});
  EXPECT_EQ(Call(c, {"SMOVE", tag + "s:big", tag + "s:moved", "member10"}), ":1\r\n");
  EXPECT_EQ(Call(c, {"SINTERSTORE", tag + "s:inter", tag + "s:big", tag + "s:big"}),
            Call(c, {"SCARD", tag + "s:big"}));
  EXPECT_EQ(Call(c, {"ZREM", tag + "z:big", "m1"}), ":1\r\n");
  EXPECT_EQ(Call(c, {"ZPOPMIN", tag + "z:big"}), "*2\r\n$2\r\nm0\r\n$1\r\n0\r\n");
  EXPECT_EQ(Call(c, {"ZUNIONSTORE", tag + "z:union", "2", tag + "z:big", tag + "z:small", "WEIGHTS", "2", "3"}),
            ":301\r\n");  // 298 left in z:big, 3 in z:small
  EXPECT_EQ(Call(c, {"ZRANGESTORE", tag + "z:range", tag + "z:big", "10", "20", "BYSCORE"}), ":41\r\n");  // m40..m80
  EXPECT_EQ(Call(c, {"LMOVE", tag + "l:big", tag + "l:small", "LEFT", "RIGHT"}), "$9\r\nelement-0\r\n");
  EXPECT_EQ(Call(c, {"LTRIM", tag + "l:big", "5", "-5"}), "+OK\r\n");
  EXPECT_EQ(Call(c, {"LSET", tag + "l:big", "100", "changed"}), "+OK\r\n");
  EXPECT_EQ(Call(c, {"LINSERT", tag + "l:big", "BEFORE", "changed", "inserted"}), ":2991\r\n");
  const std::string key = tag + "l:big";
  EXPECT_EQ(Call(c, {"LMPOP", "1", key, "RIGHT", "COUNT", "2"}),
            "*2\r\n$" + std::to_string(key.size()) + "\r\n" + key + "\r\n*2\r\n$4\r\n2995\r\n$12\r\nelement-2994\r\n");
}

TEST(CollectionsE2E, SaveAndRestartKeepEveryTypeAndEncoding) {
  TempDir dir;
  std::string digest, encodings;
  const std::vector<std::string> keys = {"h:small", "h:big", "s:ints", "s:big", "s:manyints", "z:small", "z:big",
                                         "l:big"};
  auto encodings_of = [&](RawConn& c) {
    std::string out;
    for (const std::string& k : keys) out += Call(c, {"OBJECT", "ENCODING", k});
    return out;
  };
  {
    TestServer s(InDir(dir, {"--list-compress-depth", "1"}));
    ASSERT_TRUE(s.ready());
    RawConn c(s.port());
    PopulateCollections(c, "");
    digest = Digest(c);
    encodings = encodings_of(c);
    EXPECT_EQ(encodings,
              "$8\r\nlistpack\r\n$9\r\nhashtable\r\n$6\r\nintset\r\n$9\r\nhashtable\r\n$9\r\nhashtable\r\n"
              "$8\r\nlistpack\r\n$8\r\nskiplist\r\n$9\r\nquicklist\r\n");
    ASSERT_EQ(Call(c, {"SAVE"}), "+OK\r\n");
  }
  std::string out;
  if (HaveTool("redis-check-rdb")) {
    EXPECT_EQ(RunShell("redis-check-rdb " + (dir / "dump.rdb"), &out), 0) << out;
  }
  TestServer s(InDir(dir));
  ASSERT_TRUE(s.ready());
  RawConn c(s.port());
  EXPECT_EQ(Digest(c), digest);
  EXPECT_EQ(encodings_of(c), encodings);
  EXPECT_EQ(Call(c, {"HGET", "h:big", "field599"}), "$4\r\n4193\r\n");
  EXPECT_EQ(Call(c, {"LINDEX", "l:big", "1500"}), "$12\r\nelement-1500\r\n");
}

TEST(CollectionsE2E, RdbInteropWithRedisBothWays) {
  if (!HaveTool("redis-server")) GTEST_SKIP() << "redis-server not installed";
  TempDir dir;
  std::string digest;
  {
    TestServer s(InDir(dir));
    ASSERT_TRUE(s.ready());
    RawConn c(s.port());
    PopulateCollections(c, "k:");
    MutateCollections(c, "k:");
    digest = Digest(c);
    ASSERT_EQ(Call(c, {"SAVE"}), "+OK\r\n");
  }
  {
    TestServer redis({"--dir", dir.path(), "--dbfilename", "dump.rdb", "--enable-debug-command", "yes"}, kRedis);
    ASSERT_TRUE(redis.ready());
    RawConn c(redis.port());
    EXPECT_EQ(Digest(c), digest);  // redis-server reads every encoding we wrote
    PopulateCollections(c, "r:");
    MutateCollections(c, "r:");
    digest = Digest(c);
    ASSERT_EQ(Call(c, {"SAVE"}), "+OK\r\n");
  }
  TestServer s(InDir(dir));
  ASSERT_TRUE(s.ready());
  RawConn c(s.port());
  EXPECT_EQ(Digest(c), digest);  // and we read every encoding it wrote
}

TEST(CollectionsE2E, DumpRestoreAcrossServers) {
  if (!HaveTool("redis-server")) GTEST_SKIP() << "redis-server not installed";
  TestServer s({"--save", "", "--enable-debug-command", "yes"});
  TestServer redis({"--save", "", "--enable-debug-command", "yes"}, kRedis);
  ASSERT_TRUE(s.ready() && redis.ready());
  RawConn ck(s.port()), cr(redis.port());
  PopulateCollections(ck, "");
  // DUMP carries no TTL, and a TTL is part of a key's digest.
  ASSERT_EQ(Call(ck, {"PERSIST", "h:small"}), ":1\r\n");
  ASSERT_EQ(Call(ck, {"PERSIST", "l:small"}), ":1\r\n");
  for (const char* key_name : {"h:small", "h:big", "s:ints", "s:big", "z:small", "z:big", "l:big", "l:small"}) {
    const std::string key = key_name;
    const std::string payload = BulkPayload(Call(ck, {"DUMP", key}));
    ASSERT_EQ(Call(cr, {"RESTORE", key, "0", payload}), "+OK\r\n") << key;
    EXPECT_EQ(Call(cr, {"DEBUG", "DIGEST-VALUE", key}), Call(ck, {"DEBUG", "DIGEST-VALUE", key})) << key;
    const std::string back = BulkPayload(Call(cr, {"DUMP", key}));
    ASSERT_EQ(Call(ck, {"RESTORE", key + ":back", "0", back}), "+OK\r\n") << key;
    EXPECT_EQ(Call(ck, {"DEBUG", "DIGEST-VALUE", key + ":back"}), Call(ck, {"DEBUG", "DIGEST-VALUE", key})) << key;
  }
}

TEST(CollectionsE2E, AofRewriteAndReplayWithoutPreambleInteroperate) {
  TempDir dir;
  std::string digest;
  const std::vector<std::string> args = InDir(dir, {"--appendonly", "yes", "--aof-use-rdb-preamble", "no"});
  {
    TestServer s(args);
    ASSERT_TRUE(s.ready());
    RawConn c(s.port());
    PopulateCollections(c, "");
    EXPECT_EQ(Call(c, {"BGREWRITEAOF"}), "+Background append only file rewriting started\r\n");
    ASSERT_TRUE(WaitInfo(c, "aof_rewrite_in_progress", "0"));
    MutateCollections(c, "");  // after the rewrite: in the incremental file
    digest = Digest(c);
  }
  std::string out;
  if (HaveTool("redis-check-aof")) {
    EXPECT_EQ(RunShell("redis-check-aof " + (dir / "appendonlydir/appendonly.aof.manifest"), &out), 0) << out;
  }
  {
    TestServer s(args);
    ASSERT_TRUE(s.ready());
    RawConn c(s.port());
    EXPECT_EQ(Digest(c), digest);
  }
  if (!HaveTool("redis-server")) return;
  TestServer redis({"--dir", dir.path(), "--appendonly", "yes", "--enable-debug-command", "yes"}, kRedis);
  ASSERT_TRUE(redis.ready());
  RawConn c(redis.port());
  EXPECT_EQ(Digest(c), digest);
}

bool WaitSameDigest(RawConn& a, RawConn& b, int timeout_ms = 10000) {
  for (int i = 0; i < timeout_ms / 20; ++i) {
    if (Digest(a) == Digest(b)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

TEST(CollectionsE2E, ReplicasOfEitherKindConverge) {
  TestServer primary({"--save", "", "--enable-debug-command", "yes", "--repl-diskless-sync-delay", "0"});
  TestServer replica({"--save", "", "--enable-debug-command", "yes"});
  ASSERT_TRUE(primary.ready() && replica.ready());
  RawConn cp(primary.port()), ck(replica.port());
  PopulateCollections(cp, "before:");  // reaches the replicas by full sync
  ASSERT_EQ(Call(ck, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
  ASSERT_TRUE(WaitInfo(ck, "master_link_status", "up", 10000, "replication"));
  std::unique_ptr<TestServer> redis;
  std::unique_ptr<RawConn> cr;
  if (HaveTool("redis-server")) {
    redis = std::make_unique<TestServer>(std::vector<std::string>{"--save", "", "--enable-debug-command", "yes"},
                                         kRedis);
    ASSERT_TRUE(redis->ready());
    cr = std::make_unique<RawConn>(redis->port());
    ASSERT_EQ(Call(*cr, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
    ASSERT_TRUE(WaitInfo(*cr, "master_link_status", "up", 10000, "replication"));
  }
  PopulateCollections(cp, "after:");  // and by the command stream
  MutateCollections(cp, "after:");
  MutateCollections(cp, "before:");
  EXPECT_EQ(Call(cp, {"WAIT", cr ? "2" : "1", "5000"}), cr ? ":2\r\n" : ":1\r\n");
  EXPECT_TRUE(WaitSameDigest(cp, ck));
  if (cr) {
    EXPECT_TRUE(WaitSameDigest(cp, *cr));
  }
}

// UNLINK (and DEL with lazyfree-lazy-user-del) hands big values to the
// lazy-free thread: the key is gone at once and INFO counts the object
// freed in the background; a small (packed) value is freed in place.
TEST(CollectionsE2E, UnlinkFreesBigValuesOffTheMainThread) {
  TestServer s({"--save", ""});
  ASSERT_TRUE(s.ready());
  RawConn c(s.port());
  auto fill = [&](const std::string& key, int fields) {
    for (int base = 0; base < fields; base += 1000) {
      std::vector<std::string> hset = {"HSET", key};
      for (int i = base; i < base + 1000; ++i) {
        hset.push_back("f" + std::to_string(i));
        hset.push_back("v");
      }
      ASSERT_EQ(Call(c, hset), ":1000\r\n");
    }
  };
  fill("big1", 100000);
  fill("big2", 100000);
  ASSERT_EQ(Call(c, {"HSET", "small", "f", "v"}), ":1\r\n");
  EXPECT_EQ(Call(c, {"UNLINK", "big1", "small", "nosuch"}), ":2\r\n");
  EXPECT_EQ(Call(c, {"EXISTS", "big1", "small"}), ":0\r\n");
  EXPECT_TRUE(WaitInfo(c, "lazyfreed_objects", "1", 10000, "memory"));
  EXPECT_EQ(Call(c, {"DEL", "big2"}), ":1\r\n");  // lazyfree-lazy-user-del no: freed in place
  EXPECT_EQ(Info(c, "lazyfreed_objects", "memory"), "1");
  fill("big3", 100000);
  EXPECT_EQ(Call(c, {"CONFIG", "SET", "lazyfree-lazy-user-del", "yes"}), "+OK\r\n");
  EXPECT_EQ(Call(c, {"DEL", "big3"}), ":1\r\n");
  EXPECT_TRUE(WaitInfo(c, "lazyfreed_objects", "2", 10000, "memory"));
  // CONFIG RESETSTAT starts the count again, as Redis's lazyfreeResetStats.
  EXPECT_EQ(Call(c, {"CONFIG", "RESETSTAT"}), "+OK\r\n");
  EXPECT_EQ(Info(c, "lazyfreed_objects", "memory"), "0");
}

}  // namespace
}  // namespace ringkv::testing::collections_e2e_test
