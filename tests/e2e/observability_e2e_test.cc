// End-to-end tests of LATENCY (events and histograms), INFO latencystats and
// MEMORY STATS / DOCTOR / MALLOC-STATS on the real ringkv-server.
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/hiredis_util.h"
#include "tests/e2e/persistence_test_util.h"
#include "tests/e2e/test_server.h"

namespace ringkv::testing::observability_e2e_test {
namespace {

struct Reply {
  int type = REDIS_REPLY_NIL;
  std::string str;
  long long integer = 0;
  std::vector<Reply> elements;
};

Reply Convert(const redisReply* r) {
  Reply out;
  out.type = r->type;
  if (r->str != nullptr) out.str.assign(r->str, r->len);
  out.integer = r->integer;
  for (size_t i = 0; i < r->elements; ++i) out.elements.push_back(Convert(r->element[i]));
  return out;
}

Reply Call(redisContext* c, const std::vector<std::string>& argv) {
  redisReply* r = CommandArgv(c, argv);
  EXPECT_NE(r, nullptr);
  if (r == nullptr) return {};
  Reply out = Convert(r);
  freeReplyObject(r);
  return out;
}

std::string Text(redisContext* c, const std::vector<std::string>& argv) { return Call(c, argv).str; }

// "field:value" lines of an INFO section.
std::map<std::string, std::string> InfoFields(redisContext* c, const std::string& section) {
  std::map<std::string, std::string> out;
  const std::string text = Text(c, {"INFO", section});
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find("\r\n", pos);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(pos, end - pos);
    const size_t colon = line.find(':');
    if (colon != std::string::npos && line[0] != '#') out[line.substr(0, colon)] = line.substr(colon + 1);
    pos = end + 2;
  }
  return out;
}

int64_t NowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

TEST(LatencyMonitorE2E, DebugSleepIsACommandEvent) {
  TestServer s({"--enable-debug-command", "yes"});
  ASSERT_TRUE(s.ready());
  Redis c = Connect(s.port());
  // Monitoring off: nothing is recorded.
  Call(c.get(), {"DEBUG", "SLEEP", "0.06"});
  EXPECT_TRUE(Call(c.get(), {"LATENCY", "LATEST"}).elements.empty());

  Call(c.get(), {"CONFIG", "SET", "latency-monitor-threshold", "50"});
  Call(c.get(), {"DEBUG", "SLEEP", "0.06"});
  Call(c.get(), {"DEBUG", "SLEEP", "0.12"});  // most likely in the same second: one sample, the larger
  Call(c.get(), {"GET", "x"});                // a fast command under the threshold
  const Reply latest = Call(c.get(), {"LATENCY", "LATEST"});
  ASSERT_EQ(latest.elements.size(), 1u);
  const Reply& ev = latest.elements[0];
  ASSERT_EQ(ev.elements.size(), 4u);
  EXPECT_EQ(ev.elements[0].str, "command");
  EXPECT_NEAR(ev.elements[1].integer, NowSeconds(), 5);
  EXPECT_GE(ev.elements[2].integer, 50);
  EXPECT_GE(ev.elements[3].integer, 120);  // the all-time high

  const Reply history = Call(c.get(), {"LATENCY", "HISTORY", "command"});
  ASSERT_GE(history.elements.size(), 1u);
  ASSERT_LE(history.elements.size(), 2u);
  EXPECT_EQ(history.elements.back().elements[0].integer, ev.elements[1].integer);
  EXPECT_EQ(Call(c.get(), {"LATENCY", "HISTORY", "fast-command"}).elements.size(), 0u);

  const std::string graph = Text(c.get(), {"LATENCY", "GRAPH", "command"});
  EXPECT_EQ(graph.rfind("command - high ", 0), 0u) << graph;
  EXPECT_NE(graph.find("\n" + std::string(80, '-') + "\n"), std::string::npos);
  const std::string doctor = Text(c.get(), {"LATENCY", "DOCTOR"});
  EXPECT_NE(doctor.find("1. command: "), std::string::npos) << doctor;
  EXPECT_NE(doctor.find("- Check your Slow Log"), std::string::npos) << doctor;

  EXPECT_EQ(Call(c.get(), {"LATENCY", "RESET", "COMMAND"}).integer, 1);
  EXPECT_TRUE(Call(c.get(), {"LATENCY", "LATEST"}).elements.empty());
  EXPECT_EQ(Call(c.get(), {"LATENCY", "GRAPH", "command"}).str, "ERR No samples available for event 'command'");
}

// INFO memory: Redis 7.0's fields, in its order (tools and the suite read
// them: mem_not_counted_for_evict, used_memory_overhead, ...).
TEST(InfoMemoryE2E, RedisFieldsInRedisOrder) {
  TestServer s;
  ASSERT_TRUE(s.ready());
  Redis c = Connect(s.port());
  const std::string text = Text(c.get(), {"INFO", "memory"});
  std::vector<std::string> names;
  for (size_t pos = 0; pos < text.size();) {
    size_t end = text.find("\r\n", pos);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(pos, end - pos);
    if (!line.empty() && line[0] != '#') names.push_back(line.substr(0, line.find(':')));
    pos = end + 2;
  }
  const std::vector<std::string> redis = {
      "used_memory", "used_memory_human", "used_memory_rss", "used_memory_rss_human", "used_memory_peak",
      "used_memory_peak_human", "used_memory_peak_perc", "used_memory_overhead", "used_memory_startup",
      "used_memory_dataset", "used_memory_dataset_perc", "allocator_allocated", "allocator_active",
      "allocator_resident", "total_system_memory", "total_system_memory_human", "used_memory_lua",
      "used_memory_vm_eval", "used_memory_lua_human", "used_memory_scripts_eval", "number_of_cached_scripts",
      "number_of_functions", "number_of_libraries", "used_memory_vm_functions", "used_memory_vm_total",
      "used_memory_vm_total_human", "used_memory_functions", "used_memory_scripts", "used_memory_scripts_human",
      "maxmemory", "maxmemory_human", "maxmemory_policy", "allocator_frag_ratio", "allocator_frag_bytes",
      "allocator_rss_ratio", "allocator_rss_bytes", "rss_overhead_ratio", "rss_overhead_bytes",
      "mem_fragmentation_ratio", "mem_fragmentation_bytes", "mem_not_counted_for_evict", "mem_replication_backlog",
      "mem_total_replication_buffers", "mem_clients_slaves", "mem_clients_normal", "mem_cluster_links",
      "mem_aof_buffer", "mem_allocator", "active_defrag_running", "lazyfree_pending_objects", "lazyfreed_objects"};
  EXPECT_EQ(names, redis);
  // A standalone server without AOF: nothing is left out of eviction.
  EXPECT_EQ(InfoFields(c.get(), "memory")["mem_not_counted_for_evict"], "0");
}

TEST(LatencyMonitorE2E, EvictingABigKeyIsAnEvictionEvent) {
  TestServer s({"--enable-debug-command", "yes"});
  ASSERT_TRUE(s.ready());
  Redis c = Connect(s.port());
  // A set big enough that freeing it takes over a millisecond.
  const int n = 300000;
  for (int i = 0; i < n; i += 1000) {
    std::vector<std::string> argv{"SADD", "big"};
    for (int j = i; j < i + 1000; ++j) argv.push_back(std::to_string(j));
    Call(c.get(), argv);
  }
  const int64_t used = std::stoll(InfoFields(c.get(), "memory")["used_memory"]);
  Call(c.get(), {"CONFIG", "SET", "maxmemory-policy", "allkeys-random"});
  Call(c.get(), {"CONFIG", "SET", "latency-monitor-threshold", "1"});
  Call(c.get(), {"CONFIG", "SET", "maxmemory", std::to_string(used / 2)});
  Call(c.get(), {"SET", "k", "v"});  // evicts "big" first
  Call(c.get(), {"CONFIG", "SET", "maxmemory", "0"});
  EXPECT_EQ(Call(c.get(), {"EXISTS", "big"}).integer, 0);
  std::vector<std::string> events;
  for (const Reply& e : Call(c.get(), {"LATENCY", "LATEST"}).elements) events.push_back(e.elements[0].str);
  EXPECT_NE(std::find(events.begin(), events.end(), "eviction-cycle"), events.end());
  EXPECT_NE(std::find(events.begin(), events.end(), "eviction-del"), events.end());
}

TEST(LatencyTrackingE2E, HistogramAndPercentiles) {
  TestServer s({"--enable-debug-command", "yes"});
  ASSERT_TRUE(s.ready());
  Redis c = Connect(s.port());
  Call(c.get(), {"CONFIG", "RESETSTAT"});
  Call(c.get(), {"DEBUG", "SLEEP", "0.05"});
  for (int i = 0; i < 10; ++i) Call(c.get(), {"SET", "k", "v"});
  Call(c.get(), {"CLIENT", "ID"});

  // INFO latencystats: the default percentiles, with 3 decimals.
  std::map<std::string, std::string> info = InfoFields(c.get(), "latencystats");
  ASSERT_TRUE(info.contains("latency_percentiles_usec_debug"));
  const std::string debug = info["latency_percentiles_usec_debug"];
  ASSERT_EQ(debug.rfind("p50=", 0), 0u) << debug;
  EXPECT_GE(std::stod(debug.substr(4)), 50000.0);
  EXPECT_NE(debug.find(",p99="), std::string::npos);
  EXPECT_NE(debug.find(",p99.9="), std::string::npos);
  EXPECT_TRUE(info.contains("latency_percentiles_usec_set"));
  EXPECT_TRUE(info.contains("latency_percentiles_usec_client|id"));
  EXPECT_TRUE(info.contains("latency_percentiles_usec_config|resetstat"));
  EXPECT_EQ(InfoFields(c.get(), "default").count("latency_percentiles_usec_set"), 0u);

  // LATENCY HISTOGRAM: cumulative counts at Redis's bucket bounds.
  const Reply h = Call(c.get(), {"LATENCY", "HISTOGRAM", "set", "debug", "nosuch", "client"});
  ASSERT_EQ(h.elements.size(), 6u);  // set, debug, client|id
  EXPECT_EQ(h.elements[0].str, "set");
  const Reply& set = h.elements[1];
  ASSERT_EQ(set.elements.size(), 4u);
  EXPECT_EQ(set.elements[0].str, "calls");
  EXPECT_EQ(set.elements[1].integer, 10);
  EXPECT_EQ(set.elements[2].str, "histogram_usec");
  const std::vector<Reply>& buckets = set.elements[3].elements;
  ASSERT_FALSE(buckets.empty());
  EXPECT_EQ(buckets.back().integer, 10);  // the last bound holds every call
  const std::vector<long long> bounds = {1,     2,     4,     8,      16,     33,     66,     132,     264,    528, 1056,
                                         2113,  4227,  8454,  16908,  33816,  67633,  135266, 270532,  541065, 1073741};
  for (size_t i = 0; i < buckets.size(); i += 2) {
    EXPECT_NE(std::find(bounds.begin(), bounds.end(), buckets[i].integer), bounds.end()) << buckets[i].integer;
  }
  EXPECT_EQ(h.elements[2].str, "debug");
  EXPECT_EQ(h.elements[4].str, "client|id");

  // Off: nothing new is recorded and INFO shows none; RESETSTAT drops them.
  Call(c.get(), {"CONFIG", "SET", "latency-tracking", "no"});
  Call(c.get(), {"SET", "k", "v"});
  EXPECT_TRUE(InfoFields(c.get(), "latencystats").empty());
  Call(c.get(), {"CONFIG", "SET", "latency-tracking", "yes"});
  EXPECT_EQ(Call(c.get(), {"LATENCY", "HISTOGRAM", "set"}).elements[1].elements[1].integer, 10);
  Call(c.get(), {"CONFIG", "SET", "latency-tracking-info-percentiles", "0 100"});
  EXPECT_EQ(InfoFields(c.get(), "latencystats")["latency_percentiles_usec_debug"].rfind("p0=", 0), 0u);
  Call(c.get(), {"CONFIG", "RESETSTAT"});
  EXPECT_TRUE(Call(c.get(), {"LATENCY", "HISTOGRAM", "set", "debug"}).elements.empty());
}

TEST(LatencyTrackingE2E, BlockedCommandsRecordedWhenServedNotWhenTimedOut) {
  TestServer s;
  ASSERT_TRUE(s.ready());
  Redis c = Connect(s.port());
  Redis other = Connect(s.port());
  Call(c.get(), {"CONFIG", "RESETSTAT"});
  Call(c.get(), {"BLPOP", "nokey", "0.05"});  // times out
  redisAppendCommand(other.get(), "BLPOP list 0");
  redisBufferWrite(other.get(), nullptr);
  for (int i = 0; i < 100 && std::stoll(InfoFields(c.get(), "clients")["blocked_clients"]) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  Call(c.get(), {"LPUSH", "list", "a"});
  void* r = nullptr;
  ASSERT_EQ(redisGetReply(other.get(), &r), REDIS_OK);
  freeReplyObject(r);
  const Reply h = Call(c.get(), {"LATENCY", "HISTOGRAM", "blpop"});
  ASSERT_EQ(h.elements.size(), 2u);
  // As redis-server 7.0.15: the served call is recorded, the timed-out one
  // is not (both are counted in commandstats).
  EXPECT_EQ(h.elements[1].elements[1].integer, 1);
  // Its latency is its two runs, not the time it waited for the LPUSH:
  // under the 33 ms bound.
  const std::vector<Reply>& buckets = h.elements[1].elements[3].elements;
  ASSERT_GE(buckets.size(), 2u);
  EXPECT_LT(buckets[buckets.size() - 2].integer, 33816);
}

TEST(MemoryE2E, StatsFieldsInRedisOrder) {
  TestServer s;
  ASSERT_TRUE(s.ready());
  Redis c = Connect(s.port());
  Call(c.get(), {"SET", "a", "1"});
  Call(c.get(), {"SET", "b", "2", "EX", "100"});
  Call(c.get(), {"SELECT", "3"});
  Call(c.get(), {"SET", "c", "3"});
  const Reply stats = Call(c.get(), {"MEMORY", "STATS"});
  std::vector<std::string> names;
  std::map<std::string, Reply> values;
  for (size_t i = 0; i + 1 < stats.elements.size(); i += 2) {
    names.push_back(stats.elements[i].str);
    values[stats.elements[i].str] = stats.elements[i + 1];
  }
  const std::vector<std::string> expected = {
      "peak.allocated", "total.allocated", "startup.allocated", "replication.backlog", "clients.slaves",
      "clients.normal", "cluster.links", "aof.buffer", "lua.caches", "functions.caches", "db.0", "db.3",
      "overhead.total", "keys.count", "keys.bytes-per-key", "dataset.bytes", "dataset.percentage",
      "peak.percentage", "allocator.allocated", "allocator.active", "allocator.resident",
      "allocator-fragmentation.ratio", "allocator-fragmentation.bytes", "allocator-rss.ratio", "allocator-rss.bytes",
      "rss-overhead.ratio", "rss-overhead.bytes", "fragmentation", "fragmentation.bytes"};
  EXPECT_EQ(names, expected);
  EXPECT_EQ(values["keys.count"].integer, 3);
  const Reply& db0 = values["db.0"];
  ASSERT_EQ(db0.elements.size(), 6u);
  EXPECT_EQ(db0.elements[0].str, "overhead.hashtable.main");
  EXPECT_GT(db0.elements[1].integer, 0);
  EXPECT_EQ(db0.elements[2].str, "overhead.hashtable.expires");
  EXPECT_GT(db0.elements[3].integer, 0);
  EXPECT_EQ(db0.elements[4].str, "overhead.hashtable.slot-to-keys");
  EXPECT_EQ(values["db.3"].elements[3].integer, 0);  // no TTLs there
  EXPECT_GE(values["total.allocated"].integer, values["startup.allocated"].integer);
  EXPECT_GE(values["peak.allocated"].integer, values["total.allocated"].integer);
  EXPECT_GT(values["clients.normal"].integer, 0);
  EXPECT_EQ(values["dataset.percentage"].type, REDIS_REPLY_STRING);  // a double, as a bulk string in RESP2
  EXPECT_GT(std::stod(values["fragmentation"].str), 0.0);
}

TEST(MemoryE2E, DoctorAndMallocStats) {
  TestServer s({"--enable-debug-command", "yes"});
  ASSERT_TRUE(s.ready());
  Redis c = Connect(s.port());
  EXPECT_EQ(Text(c.get(), {"MEMORY", "DOCTOR"}).rfind("Hi Sam, this instance is empty", 0), 0u);
  Call(c.get(), {"DEBUG", "POPULATE", "100000", "key", "100"});
  const std::string doctor = Text(c.get(), {"MEMORY", "DOCTOR"});
  EXPECT_TRUE(doctor.rfind("Hi Sam, I can't find any memory issue", 0) == 0 ||
              doctor.rfind("Sam, I detected a few issues", 0) == 0)
      << doctor;
  const std::string malloc_stats = Text(c.get(), {"MEMORY", "MALLOC-STATS"});
  // mimalloc's report; the sanitizer build runs on libc malloc, as Redis.
  EXPECT_TRUE(malloc_stats.find("heap stats") != std::string::npos ||
              malloc_stats == "Stats not supported for the current allocator")
      << malloc_stats;
}

}  // namespace
}  // namespace ringkv::testing::observability_e2e_test

namespace ringkv::testing::observability_e2e_test {
namespace {

// watchdog-period: a main thread stuck longer than the period (DEBUG SLEEP)
// logs Redis's "--- WATCHDOG TIMER EXPIRED ---" report with a stack, and the
// server keeps serving; a healthy server never trips it, and 0 turns it off.
TEST(WatchdogE2E, ReportsAStuckMainThreadAndKeepsServing) {
  TempDir dir;
  const std::string log_path = dir / "log.txt";
  TestServer s({"--logfile", log_path, "--enable-debug-command", "yes"});
  ASSERT_TRUE(s.ready());
  auto c = Connect(s.port());
  ASSERT_EQ(Text(c.get(), {"CONFIG", "SET", "watchdog-period", "200"}), "OK");
  std::this_thread::sleep_for(std::chrono::milliseconds(600));  // healthy: several cron ticks
  EXPECT_EQ(ReadFile(log_path).find("WATCHDOG TIMER EXPIRED"), std::string::npos);
  EXPECT_EQ(Text(c.get(), {"DEBUG", "SLEEP", "1"}), "OK");
  const std::string log = ReadFile(log_path);
  const size_t at = log.find(":signal-handler (");
  ASSERT_NE(at, std::string::npos) << log;
  EXPECT_NE(log.find("\n--- WATCHDOG TIMER EXPIRED ---", at), std::string::npos) << log;
  EXPECT_NE(log.find("--------\n", at), std::string::npos) << log;
  EXPECT_EQ(Text(c.get(), {"PING"}), "PONG");
  const Reply got = Call(c.get(), {"CONFIG", "GET", "watchdog-period"});
  ASSERT_EQ(got.elements.size(), 2u);
  EXPECT_EQ(got.elements[1].str, "200");
  // Off: a stuck thread is no longer reported.
  ASSERT_EQ(Text(c.get(), {"CONFIG", "SET", "watchdog-period", "0"}), "OK");
  const std::string before = ReadFile(log_path);
  EXPECT_EQ(Text(c.get(), {"DEBUG", "SLEEP", "0.5"}), "OK");
  EXPECT_EQ(ReadFile(log_path).size(), before.size());
}

// A replica loading a payload of another history makes its clients wait
// (-LOADING): the watchdog times that load as it times the main thread,
// reports it once it runs past the period (with the loader's stack), and the
// load -- whose blocking reads the signal interrupts -- carries on to the end
// with one full sync. Redis's "replica can handle EINTR if use diskless load".
TEST(WatchdogE2E, ReportsAReplicaLoadThatClientsWaitOn) {
  TempDir pdir, rdir;
  const std::string log_path = rdir / "log.txt";
  TestServer primary(InDir(pdir, {"--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0",
                                  "--rdbcompression", "no"}));
  TestServer replica(InDir(rdir, {"--logfile", log_path, "--repl-diskless-load", "on-empty-db",
                                  "--watchdog-period", "200"}));
  ASSERT_TRUE(primary.ready());
  ASSERT_TRUE(replica.ready());
  auto p = Connect(primary.port());
  auto r = Connect(replica.port());
  ASSERT_EQ(Text(p.get(), {"DEBUG", "POPULATE", "200", "key", "1000"}), "OK");
  ASSERT_EQ(Text(p.get(), {"CONFIG", "SET", "rdb-key-save-delay", "5000"}), "OK");  // 200 keys: about 1 s
  ASSERT_EQ(Text(r.get(), {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "OK");
  size_t loading_at = std::string::npos, report_at = std::string::npos;
  bool saw_loading = false;
  for (int i = 0; i < 250 && report_at == std::string::npos; ++i) {
    const std::string log = ReadFile(log_path);
    loading_at = log.find("Loading DB in memory");
    if (loading_at != std::string::npos) {
      report_at = log.find("--- WATCHDOG TIMER EXPIRED ---", loading_at);
      saw_loading = saw_loading || InfoFields(r.get(), "persistence")["loading"] == "1";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_NE(report_at, std::string::npos) << ReadFile(log_path);
  EXPECT_TRUE(saw_loading);
  EXPECT_NE(ReadFile(log_path).find("--------\n", report_at), std::string::npos);
  // The load ends, with the one full sync it started with.
  bool up = false;
  for (int i = 0; i < 500 && !up; ++i) {
    up = InfoFields(r.get(), "replication")["master_link_status"] == "up";
    if (!up) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(up) << ReadFile(log_path);
  EXPECT_EQ(Call(r.get(), {"DBSIZE"}).integer, 200);
  EXPECT_EQ(InfoFields(p.get(), "stats")["sync_full"], "1");
  EXPECT_EQ(Text(r.get(), {"DEBUG", "DIGEST"}), Text(p.get(), {"DEBUG", "DIGEST"}));
}

}  // namespace
}  // namespace ringkv::testing::observability_e2e_test

namespace ringkv::testing::observability_e2e_test {
namespace {

// INFO stats' network counters count the bytes as they arrive: between two
// INFOs, exactly the SET and the second INFO's request; CONFIG RESETSTAT
// starts them again.
TEST(InfoStatsE2E, NetworkCountersCountEveryByte) {
  TestServer s;
  ASSERT_TRUE(s.ready());
  auto c = Connect(s.port());
  const auto before = InfoFields(c.get(), "stats");
  ASSERT_EQ(Text(c.get(), {"SET", "k", "v"}), "OK");  // 27 bytes of RESP
  const auto after = InfoFields(c.get(), "stats");     // 25 bytes of RESP
  EXPECT_EQ(std::stoll(after.at("total_net_input_bytes")) - std::stoll(before.at("total_net_input_bytes")), 27 + 25);
  EXPECT_GT(std::stoll(after.at("total_net_output_bytes")), std::stoll(before.at("total_net_output_bytes")));
  EXPECT_EQ(std::stoll(after.at("total_reads_processed")) - std::stoll(before.at("total_reads_processed")), 2);
  EXPECT_EQ(after.at("total_net_repl_input_bytes"), "0");
  EXPECT_EQ(after.at("total_net_repl_output_bytes"), "0");
  ASSERT_EQ(Text(c.get(), {"CONFIG", "RESETSTAT"}), "OK");
  const auto reset = InfoFields(c.get(), "stats");
  EXPECT_EQ(reset.at("total_net_input_bytes"), "25");  // this INFO's request only
  EXPECT_EQ(reset.at("total_reads_processed"), "1");
  EXPECT_EQ(reset.at("reply_buffer_shrinks"), "0");
  EXPECT_EQ(reset.at("reply_buffer_expands"), "0");
}

// dump_payload_sanitizations counts the packed blobs of RESTORE payloads as
// Redis does: only while sanitize-dump-payload asks for sanitizing.
TEST(InfoStatsE2E, DumpPayloadSanitizationsCountPackedBlobs) {
  TestServer s;
  ASSERT_TRUE(s.ready());
  auto c = Connect(s.port());
  ASSERT_EQ(Call(c.get(), {"HSET", "h", "f", "v"}).integer, 1);  // one listpack
  ASSERT_EQ(Call(c.get(), {"SET", "str", "plain"}).str, "OK");    // no packed blob
  const std::string hash_payload = Call(c.get(), {"DUMP", "h"}).str;
  const std::string string_payload = Call(c.get(), {"DUMP", "str"}).str;
  auto sanitizations = [&] { return InfoFields(c.get(), "stats").at("dump_payload_sanitizations"); };
  ASSERT_EQ(Text(c.get(), {"RESTORE", "h2", "0", hash_payload}), "OK");  // default `no`
  EXPECT_EQ(sanitizations(), "0");
  ASSERT_EQ(Text(c.get(), {"CONFIG", "SET", "sanitize-dump-payload", "yes"}), "OK");
  ASSERT_EQ(Text(c.get(), {"RESTORE", "h3", "0", hash_payload}), "OK");
  ASSERT_EQ(Text(c.get(), {"RESTORE", "str2", "0", string_payload}), "OK");
  EXPECT_EQ(sanitizations(), "1");
  ASSERT_EQ(Text(c.get(), {"CONFIG", "SET", "sanitize-dump-payload", "clients"}), "OK");
  ASSERT_EQ(Text(c.get(), {"RESTORE", "h4", "0", hash_payload}), "OK");
  EXPECT_EQ(sanitizations(), "2");
  ASSERT_EQ(Text(c.get(), {"CONFIG", "RESETSTAT"}), "OK");
  EXPECT_EQ(sanitizations(), "0");
}

}  // namespace
}  // namespace ringkv::testing::observability_e2e_test
