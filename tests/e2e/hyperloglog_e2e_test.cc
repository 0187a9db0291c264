// HyperLogLogs move between ringkv and Debian's redis-server 7.0 in both
// directions -- through RDB files and DUMP / RESTORE -- sparse and dense,
// with a cached, a stale and no cardinality: the bytes arrive unchanged,
// PFCOUNT (one key and several merged) and PFDEBUG ENCODING agree, and the
// other server extends them with PFADD / PFMERGE to the same bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "tests/e2e/persistence_test_util.h"

namespace ringkv::testing::hyperloglog_e2e_test {
namespace {

const char* kRedis = "/usr/bin/redis-server";

void AddRange(RawConn& c, const std::string& key, const std::string& prefix, int from, int to) {
  for (int base = from; base < to; base += 1000) {
    std::vector<std::string> pfadd = {"PFADD", key};
    for (int i = base; i < std::min(to, base + 1000); ++i) pfadd.push_back(prefix + std::to_string(i));
    ASSERT_EQ(Call(c, pfadd).substr(0, 1), ":");
  }
}

const std::vector<std::string> kKeys = {"sparse", "sparse-cached", "dense", "stale", "merged", "empty"};

// sparse: 60 elements, never counted; sparse-cached: counted once (the
// header caches it); dense: 30,000 elements; stale: dense, counted, then
// added to (the cache marked stale); merged: PFMERGE of sparse and dense;
// empty: PFADD of no element.
void BuildHlls(RawConn& c, const std::string& tag) {
  AddRange(c, "sparse", tag + "s", 0, 60);
  AddRange(c, "sparse-cached", tag + "c", 0, 200);
  ASSERT_EQ(Call(c, {"PFCOUNT", "sparse-cached"}).substr(0, 1), ":");
  AddRange(c, "dense", tag + "d", 0, 30000);
  AddRange(c, "stale", tag + "t", 0, 5000);
  ASSERT_EQ(Call(c, {"PFCOUNT", "stale"}).substr(0, 1), ":");
  AddRange(c, "stale", tag + "u", 0, 100);
  ASSERT_EQ(Call(c, {"PFMERGE", "merged", "sparse", "dense"}), "+OK\r\n");
  ASSERT_EQ(Call(c, {"PFADD", "empty"}), ":1\r\n");
}

using Observations = std::vector<std::pair<std::string, std::string>>;

// Each key's bytes and encoding, read before anything counts (PFCOUNT may
// rewrite the cached cardinality).
Observations Bytes(RawConn& c) {
  Observations out;
  for (const std::string& k : kKeys) {
    out.emplace_back("GET " + k, Call(c, {"GET", k}));
    out.emplace_back("PFDEBUG ENCODING " + k, Call(c, {"PFDEBUG", "ENCODING", k}));
  }
  return out;
}

// Counts, one key at a time and merged on the fly.
Observations Counts(RawConn& c) {
  Observations out;
  for (const std::string& k : kKeys) out.emplace_back("PFCOUNT " + k, Call(c, {"PFCOUNT", k}));
  out.emplace_back("PFCOUNT all", Call(c, {"PFCOUNT", "sparse", "sparse-cached", "dense", "stale", "empty"}));
  return out;
}

Observations operator+(Observations a, const Observations& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Compares observation by observation; a difference is reported by name
// and first differing byte (the values are binary and long).
void ExpectSame(const Observations& got, const Observations& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    const std::string& g = got[i].second;
    const std::string& w = want[i].second;
    if (g == w) continue;
    size_t at = 0;
    while (at < g.size() && at < w.size() && g[at] == w[at]) ++at;
    ADD_FAILURE() << what << ": " << want[i].first << " differs at byte " << at << " (sizes " << g.size() << " and "
                  << w.size() << ")" << (g.size() < 80 ? ": " + g + " vs " + w : "");
  }
}

// Extends every HLL: the sparse ones stay sparse, one turns dense.
void Extend(RawConn& c, const std::string& tag) {
  AddRange(c, "sparse", tag + "x", 0, 40);
  AddRange(c, "sparse-cached", tag + "y", 0, 3000);  // past hll-sparse-max-bytes: dense
  AddRange(c, "dense", tag + "z", 0, 1000);
  ASSERT_EQ(Call(c, {"PFMERGE", "merged", "stale", "empty"}), "+OK\r\n");
}


TEST(HyperLogLogE2E, RdbFilesMoveBothWaysWithRedisServer) {
  if (!HaveTool("redis-server")) GTEST_SKIP() << "redis-server not installed";
  TempDir dir;
  Observations bytes, counts, extended;
  {
    TestServer redis(InDir(dir), kRedis);
    ASSERT_TRUE(redis.ready());
    RawConn c(redis.port());
    BuildHlls(c, "r");
    bytes = Bytes(c);
    ASSERT_EQ(Call(c, {"SAVE"}), "+OK\r\n");
    counts = Counts(c);
    Extend(c, "r");
    extended = Bytes(c) + Counts(c);
  }
  {
    TestServer s(InDir(dir));
    ASSERT_TRUE(s.ready());
    RawConn c(s.port());
    ExpectSame(Bytes(c), bytes, "redis-server's HLLs loaded by ringkv");
    ExpectSame(Counts(c), counts, "redis-server's HLLs counted by ringkv");
    Extend(c, "r");
    ExpectSame(Bytes(c) + Counts(c), extended, "redis-server's HLLs extended by ringkv");
    Call(c, {"FLUSHALL"});
    BuildHlls(c, "k");
    bytes = Bytes(c);
    ASSERT_EQ(Call(c, {"SAVE"}), "+OK\r\n");
    counts = Counts(c);
    Extend(c, "k");
    extended = Bytes(c) + Counts(c);
  }
  TestServer redis(InDir(dir), kRedis);
  ASSERT_TRUE(redis.ready());
  RawConn c(redis.port());
  ExpectSame(Bytes(c), bytes, "ringkv's HLLs loaded by redis-server");
  ExpectSame(Counts(c), counts, "ringkv's HLLs counted by redis-server");
  Extend(c, "k");
  ExpectSame(Bytes(c) + Counts(c), extended, "ringkv's HLLs extended by redis-server");
}

TEST(HyperLogLogE2E, DumpRestoreBothWays) {
  if (!HaveTool("redis-server")) GTEST_SKIP() << "redis-server not installed";
  TestServer s({"--enable-debug-command", "yes"});
  TestServer redis({"--enable-debug-command", "yes"}, kRedis);
  ASSERT_TRUE(s.ready() && redis.ready());
  RawConn ck(s.port()), cr(redis.port());
  BuildHlls(ck, "k");
  BuildHlls(cr, "r");
  for (const std::string& key : kKeys) {
    const std::string from_k = BulkPayload(Call(ck, {"DUMP", key}));
    const std::string from_r = BulkPayload(Call(cr, {"DUMP", key}));
    ASSERT_EQ(Call(cr, {"RESTORE", key + ":k", "0", from_k}), "+OK\r\n") << key;
    ASSERT_EQ(Call(ck, {"RESTORE", key + ":r", "0", from_r}), "+OK\r\n") << key;
    EXPECT_TRUE(Call(cr, {"GET", key + ":k"}) == Call(ck, {"GET", key})) << key;
    EXPECT_TRUE(Call(ck, {"GET", key + ":r"}) == Call(cr, {"GET", key})) << key;
    EXPECT_EQ(Call(cr, {"PFCOUNT", key + ":k"}), Call(ck, {"PFCOUNT", key})) << key;
    EXPECT_EQ(Call(ck, {"PFCOUNT", key + ":r"}), Call(cr, {"PFCOUNT", key})) << key;
    // Extended on the other side, then compared with the same change at home.
    ASSERT_EQ(Call(ck, {"PFADD", key + ":r", "one", "two"}).substr(0, 1), ":");
    ASSERT_EQ(Call(cr, {"PFADD", key + ":k", "one", "two"}).substr(0, 1), ":");
    ASSERT_EQ(Call(ck, {"PFADD", key, "one", "two"}).substr(0, 1), ":");
    ASSERT_EQ(Call(cr, {"PFADD", key, "one", "two"}).substr(0, 1), ":");
    EXPECT_TRUE(Call(cr, {"GET", key + ":k"}) == Call(ck, {"GET", key})) << "extended " << key;
    EXPECT_TRUE(Call(ck, {"GET", key + ":r"}) == Call(cr, {"GET", key})) << "extended " << key;
  }
  // The same commands give the same bytes on both servers.
  ASSERT_EQ(Call(ck, {"FLUSHALL"}), "+OK\r\n");
  BuildHlls(ck, "r");
  for (const std::string& key : kKeys) {
    ASSERT_EQ(Call(ck, {"PFCOUNT", key}).substr(0, 1), ":");  // caches the count, as above
    ASSERT_EQ(Call(ck, {"PFADD", key, "one", "two"}).substr(0, 1), ":");
  }
  for (const std::string& key : kKeys) EXPECT_TRUE(Call(ck, {"GET", key}) == Call(cr, {"GET", key})) << key;
}

}  // namespace
}  // namespace ringkv::testing::hyperloglog_e2e_test
