// DEBUG: the operator and tooling subcommands of Redis 7.0 that ringkv has
// the data for. Behind enable-debug-command (no / yes / local), as in Redis:
// the gate refuses it where not allowed (cmd::kProtected).
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <string>
#include <thread>

#include "absl/random/random.h"
#include "core/digest.h"
#include "core/access_policy.h"
#include "core/rdb_string.h"
#include "core/rdb_writer.h"
#include "core/list_value.h"
#include "core/rdb_reader.h"
#include "absl/strings/str_format.h"
#include "core/glob.h"
#include "server/cluster/cluster_bus.h"
#include "server/cluster/cluster_mode.h"
#include "server/command_table.h"
#include "server/commands/util.h"
#include "server/errors.h"
#include "server/logging.h"
#include "server/server.h"

namespace ringkv::server {
namespace {

// DEBUG OBJECT's serializedlength: the RDB encoding of the value without its
// type byte (Redis's rdbSavedObjectLen).
size_t SerializedLength(const core::Value& value, bool compress) {
  if (value.is_string()) return core::RdbStringSize(value.str(), compress);
  std::string body;
  core::RdbAppendValueBody(value, compress, &body);
  return body.size();
}

// DEBUG OBJECT's quicklist fields, as Redis 7.0 adds them for lists.
std::string QuicklistDetails(const core::Value& value) {
  if (value.type() != core::ValueType::kList) return "";
  const core::ListValue& l = value.list();
  const double avg = l.node_count() ? static_cast<double>(l.size()) / static_cast<double>(l.node_count()) : 0;
  return absl::StrFormat(" ql_nodes:%zu ql_avg_node:%.2f ql_listpack_max:%d ql_compressed:%d ql_uncompressed_size:%zu",
                         l.node_count(), avg, static_cast<int>(l.limits().fill), l.limits().compress_depth != 0 ? 1 : 0,
                         l.packed_bytes());
}

void DebugProtocol(ServerCommandContext& ctx, std::string_view type) {
  io::ReplyBuilder& rb = ctx.reply;
  if (Is(type, "string")) {
    rb.Bulk("Hello World");
  } else if (Is(type, "integer")) {
    rb.Integer(12345);
  } else if (Is(type, "double")) {
    rb.Double(3.141);
  } else if (Is(type, "bignum")) {
    rb.BigNumber("1234567999999999999999999999999999999");
  } else if (Is(type, "null")) {
    rb.Null();
  } else if (Is(type, "array")) {
    rb.ArrayHeader(3);
    for (int j = 0; j < 3; ++j) rb.Integer(j);
  } else if (Is(type, "set")) {
    rb.SetHeader(3);
    for (int j = 0; j < 3; ++j) rb.Integer(j);
  } else if (Is(type, "map")) {
    rb.MapHeader(3);
    for (int j = 0; j < 3; ++j) {
      rb.Integer(j);
      rb.Bool(j == 1);
    }
  } else if (Is(type, "attrib")) {
    if (rb.resp() >= 3) {
      rb.AttributeHeader(1);
      rb.Bulk("key-popularity");
      rb.ArrayHeader(2);
      rb.Bulk("key:123");
      rb.Integer(90);
    }
    // Attributes are not replies: a real reply follows.
    rb.Bulk("Some real reply following the attribute");
  } else if (Is(type, "push")) {
    if (rb.resp() < 3) {
      rb.Error("ERR RESP2 is not supported by this command");
      return;
    }
    rb.PushHeader(2);
    rb.Bulk("server-cpu-usage");
    rb.Integer(42);
    rb.Bulk("Some real reply following the push reply");
  } else if (Is(type, "true")) {
    rb.Bool(true);
  } else if (Is(type, "false")) {
    rb.Bool(false);
  } else if (Is(type, "verbatim")) {
    rb.Verbatim("This is a verbatim\nstring");
  } else {
    rb.Error(
        "ERR Wrong protocol type name. Please use one of the following: "
        "string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false");
  }
}

// Random patterns and strings through the glob matcher: it must terminate
// quickly and never read out of bounds (run under ASan in the tests).
void StringmatchFuzz() {
  absl::BitGen rng;
  static const char kAlphabet[] = "ab*?[]^-\\c";
  for (int i = 0; i < 100000; ++i) {
    std::string pattern(absl::Uniform(rng, 0, 32), 'a'), str(absl::Uniform(rng, 0, 32), 'a');
    for (char& c : pattern) c = kAlphabet[absl::Uniform(rng, 0, 10)];
    for (char& c : str) c = kAlphabet[absl::Uniform(rng, 0, 10)];
    (void)core::GlobMatch(pattern, str, absl::Bernoulli(rng, 0.5));
  }
}

// One handler per subcommand. Each runs with argc already checked against
// its row in kSubcommands.

void DebugSleep(ServerCommandContext& ctx) {
  // Redis parses with strtod: a non-number sleeps 0 s. Blocking the main
  // thread is the point of this command.
  double secs = std::strtod(std::string(ctx.argv[2]).c_str(), nullptr);
  std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(secs * 1e6)));
  ctx.reply.Ok();
}

// DEBUG POPULATE <count> [<prefix>] [<size>]: keys prefix:N holding "value:N"
// (cut or zero-padded to size); existing keys are left alone.
void DebugPopulate(ServerCommandContext& ctx) {
  const size_t argc = ctx.argv.size();
  int64_t count = 0, size = 0;
  if (!core::StringToInt64(ctx.argv[2], &count) || (argc == 5 && !core::StringToInt64(ctx.argv[4], &size)) ||
      count < 0 || size < 0) {
    ctx.reply.Error("ERR value is out of range, must be positive");
    return;
  }
  const std::string_view prefix = argc >= 4 ? ctx.argv[3] : std::string_view("key");
  core::Database& db = ctx.server.db(ctx.client);
  std::string key, value;
  for (int64_t j = 0; j < count; ++j) {
    key = StrCat(prefix, ":", j);
    value = StrCat("value:", j);
    if (size > 0) value.resize(static_cast<size_t>(size), '\0');
    bool created;
    core::Entry* e = db.FindOrInsert(key, ctx.now_ms, &created, core::StringValue::SlotBytesFor(value));
    if (!created) continue;
    if (value.size() <= core::StringValue::kEmbstrMax) {
      e->value = core::StringValue(value);
    } else {
      e->value = core::StringValue::Raw(value);
    }
  }
  ctx.reply.Ok();
}

void DebugLog(ServerCommandContext& ctx) {
  Log(kWarning, StrCat("DEBUG LOG: ", ctx.argv[2]));
  ctx.reply.Ok();
}

// Redis reads these 0/1 switches with atoi: anything not a number is 0.
bool SwitchArg(const ServerCommandContext& ctx) { return std::atoi(std::string(ctx.argv[2]).c_str()) != 0; }

void DebugSetSkipChecksumValidation(ServerCommandContext& ctx) {
  core::SetSkipChecksumValidation(SwitchArg(ctx));
  ctx.reply.Ok();
}

// DEBUG AOF-FLUSH-SLEEP <microseconds>: each AOF flush sleeps first (a test
// hook for writes that land while a flush is slow).
void DebugAofFlushSleep(ServerCommandContext& ctx) {
  int64_t us;
  if (!core::StringToInt64(ctx.argv[2], &us)) {
    ctx.reply.Error(errors::kNotInteger);
    return;
  }
  ctx.server.persistence().aof().set_flush_sleep_us(std::max<int64_t>(0, us));
  ctx.reply.Ok();
}

// DEBUG AOF-FSYNCS (ringkv's own; not in Redis): how many fdatasyncs of the
// AOF have completed since start. With the requests a load generator counted
// over the same interval it gives writes per fsync (docs/performance.md).
void DebugAofFsyncs(ServerCommandContext& ctx) {
  ctx.reply.Integer(static_cast<int64_t>(ctx.server.persistence().aof().stats().fsyncs));
}

// DEBUG REPLICATE <arg> ...: the arguments go to the replicas as a command,
// unrun here: a test hook for data divergence (propagation-error-behavior).
void DebugReplicate(ServerCommandContext& ctx) {
  // No SELECT before it, not in the AOF; a replica only relays its primary's stream.
  repl::Primary* p = ctx.server.primary_side().primary();
  if (p != nullptr && !ctx.server.replica_side().is_replica()) p->FeedRaw(ctx.argv.subspan(2));
  ctx.reply.Ok();
}

void DebugSetActiveExpire(ServerCommandContext& ctx) {
  ctx.server.set_active_expire(SwitchArg(ctx));
  ctx.reply.Ok();
}

// DEBUG QUICKLIST-PACKED-THRESHOLD <size>: elements of at least <size>
// bytes get a list node of their own (0: back to 1 GiB).
void DebugQuicklistPackedThreshold(ServerCommandContext& ctx) {
  int64_t bytes;
  if (!Config::ParseMemory(ctx.argv[2], &bytes) || bytes < 0 ||
      !core::SetListPackedThreshold(static_cast<uint64_t>(bytes))) {
    ctx.reply.Error("ERR argument must be a memory value bigger than 1 and smaller than 4gb");
    return;
  }
  ctx.reply.Ok();
}

// DEBUG SEGFAULT / PANIC: the server crashes on purpose, to check what a
// crash leaves (crash-log-enabled's report, Redis's panic lines, a core).
void DebugSegfault(ServerCommandContext&) {
  Log(kWarning, "DEBUG SEGFAULT called: crashing the server with SIGSEGV");
  raise(SIGSEGV);
}

void DebugPanic(ServerCommandContext& ctx) {
  Panic(StrCat("DEBUG PANIC called at Unix time ", ctx.now_ms / 1000));
}

// DEBUG CONFIG-REWRITE-FORCE-ALL: CONFIG REWRITE with every parameter
// written, its default or not (Redis's check that all of them read back).
void DebugConfigRewriteForceAll(ServerCommandContext& ctx) {
  if (absl::Status s = ctx.server.config().Rewrite(/*force_all=*/true); !s.ok()) {
    std::string why(ToStd(s.message()));
    if (why.starts_with("ERR ")) why.erase(0, 4);
    ctx.reply.Error(StrCat("ERR CONFIG-REWRITE-FORCE-ALL failed: ", why));
    return;
  }
  ctx.reply.Ok();
}

void DebugPauseCron(ServerCommandContext& ctx) {
  ctx.server.set_cron_paused(SwitchArg(ctx));
  ctx.reply.Ok();
}

// A test hook: scripts may call commands flagged noscript.
void DebugSetDisableDenyScripts(ServerCommandContext& ctx) {
  ctx.server.scripting().set_noscript_allowed(SwitchArg(ctx));
  ctx.reply.Ok();
}

void DebugObject(ServerCommandContext& ctx) {
  // The stored entry, expired or not (Redis looks in the dict directly).
  core::Entry* e = ctx.server.db(ctx.client).Peek(ctx.argv[2]);
  if (e == nullptr) {
    ctx.reply.Error(errors::kNoSuchKey);
    return;
  }
  const bool lfu = ctx.server.keyspace().access_policy().lfu();
  ctx.reply.SimpleString(StrCat(
      "Value at:0x", absl::Hex(reinterpret_cast<uintptr_t>(&e->value)), " refcount:", e->value.redis_refcount(ctx.server.keyspace().access_policy().integers_shared),
      " encoding:", e->value.encoding_name(),
      " serializedlength:", SerializedLength(e->value, ctx.server.config().Bool("rdbcompression")),
      " lru:", e->lru() & 0xFFFFFF, " lru_seconds_idle:", lfu ? 0 : core::IdleSeconds(e->lru(), ctx.now_ms),
      QuicklistDetails(e->value)));
}

// DEBUG HTSTATS <dbid>: how the database's keys and deadlines lie in their
// tables (core/hash_table_stats.h), in Redis's words. The deadlines are an
// open-addressing map: each slot is reported as a bucket of one.
void DebugHtStats(ServerCommandContext& ctx) {
  int64_t id;
  if (!ParseInt(ctx, ctx.argv[2], &id)) return;
  core::Keyspace& ks = ctx.server.keyspace();
  if (id < 0 || id >= ks.count()) {
    ctx.reply.Error("ERR Out of range database");
    return;
  }
  const core::Database& db = ks.db(static_cast<int>(id));
  ctx.reply.Verbatim(
      StrCat("[Dictionary HT]\n", db.KeyTableStatsText(), "[Expires HT]\n", db.ExpireTableStatsText()));
}

// DEBUG HTSTATS-KEY <key>: the same for the hash table of a hash, set or
// sorted set (its member -> score table) that has one.
void DebugHtStatsKey(ServerCommandContext& ctx) {
  const core::Entry* e = ctx.server.db(ctx.client).Peek(ctx.argv[2]);
  if (e == nullptr) {
    ctx.reply.Error(errors::kNoSuchKey);
    return;
  }
  std::string text;
  switch (e->value.type()) {
    case core::ValueType::kHash:
      text = e->value.hash().TableStatsText();
      break;
    case core::ValueType::kSet:
      text = e->value.set().TableStatsText();
      break;
    case core::ValueType::kZSet:
      text = e->value.zset().TableStatsText();
      break;
    default:
      break;
  }
  if (text.empty()) {
    ctx.reply.Error("ERR The value stored at the specified key is not represented using an hash table");
    return;
  }
  ctx.reply.Verbatim(text);
}

void DebugDigest(ServerCommandContext& ctx) {
  ctx.reply.SimpleString(core::DigestHex(core::DatasetDigest(ctx.server.keyspace())));
}

void DebugDigestValue(ServerCommandContext& ctx) {
  ctx.reply.ArrayHeader(static_cast<int64_t>(ctx.argv.size() - 2));
  for (size_t i = 2; i < ctx.argv.size(); ++i) {
    ctx.reply.SimpleString(core::DigestHex(core::ValueDigest(ctx.server.db(ctx.client), ctx.argv[i])));
  }
}

// DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE]
void DebugReload(ServerCommandContext& ctx) {
  bool save = true, flush = true, merge = false;
  for (size_t i = 2; i < ctx.argv.size(); ++i) {
    if (Is(ctx.argv[i], "MERGE")) {
      merge = true;
    } else if (Is(ctx.argv[i], "NOFLUSH")) {
      flush = false;
    } else if (Is(ctx.argv[i], "NOSAVE")) {
      save = false;
    } else {
      ctx.reply.Error("ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.");
      return;
    }
  }
  absl::Status s = ctx.server.loading().DebugReload(save, flush, merge);
  if (s.ok()) {
    ctx.reply.Ok();
  } else if (absl::IsDataLoss(s) || absl::IsNotFound(s)) {
    ctx.reply.Error("ERR Error trying to load the RDB dump, check server logs.");
  } else {
    ctx.reply.Error("ERR");
  }
}

void DebugLoadAof(ServerCommandContext& ctx) {
  const absl::Status s = ctx.server.loading().DebugLoadAof();
  // What the load did is not a write of this command's (Redis's
  // "Prevent AOF / replication"), whether or not it failed.
  ctx.server.stats().dirty = 0;
  if (!s.ok()) {
    ctx.reply.Error(StrCat("ERR Error loading the AOF: ", s.message()));
    return;
  }
  ctx.reply.Ok();
}

void DebugProtocolCmd(ServerCommandContext& ctx) { DebugProtocol(ctx, ctx.argv[2]); }

void DebugStringmatchLen(ServerCommandContext& ctx) {
  StringmatchFuzz();
  ctx.reply.SimpleString("Apparently Redis did not crash: test passed");
}

// ringkv only: the components a client has allocated beyond its base struct
// (a client that uses no feature has none).
void DebugClientComponents(ServerCommandContext& ctx) {
  int64_t id;
  if (!ParseInt(ctx, ctx.argv[2], &id)) return;
  const Client* c = ctx.server.FindClient(static_cast<uint64_t>(id));
  if (c == nullptr) {
    ctx.reply.Error("ERR No such client");
    return;
  }
  const std::vector<std::string> names = ctx.server.ClientComponents(*c);
  ctx.reply.ArrayHeader(static_cast<int64_t>(names.size()));
  for (const std::string& n : names) ctx.reply.Bulk(n);
}

// DEBUG DEADLINE-LATENESS [RESET] (ringkv's own; not in Redis): how late
// blocked clients' deadlines (BLPOP & co., WAIT, WAITAOF timeouts) fired,
// measured in the server: a map of calls, p50/p99/p999/max in microseconds
// and LATENCY HISTOGRAM's cumulative histogram_usec. RESET clears it (+OK).
void DebugDeadlineLateness(ServerCommandContext& ctx) {
  if (ctx.argv.size() == 3) {
    if (!Is(ctx.argv[2], "RESET")) {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
    ctx.server.blocking().ResetDeadlineLateness();
    ctx.reply.Ok();
    return;
  }
  const core::LatencyHistogram empty;
  const core::LatencyHistogram* found = ctx.server.blocking().deadline_lateness();
  const core::LatencyHistogram& h = found != nullptr ? *found : empty;
  std::vector<std::pair<int64_t, uint64_t>> steps;
  h.ForEachCumulativeStep([&](int64_t us, uint64_t count) { steps.emplace_back(us, count); });
  ctx.reply.MapHeader(6);
  ctx.reply.Bulk("calls");
  ctx.reply.Integer(static_cast<int64_t>(h.total()));
  const std::pair<const char*, double> percentiles[] = {
      {"p50_usec", 50}, {"p99_usec", 99}, {"p999_usec", 99.9}, {"max_usec", 100}};
  for (const auto& [name, p] : percentiles) {
    ctx.reply.Bulk(name);
    ctx.reply.Integer(h.ValueAtPercentile(p) / 1000);
  }
  ctx.reply.Bulk("histogram_usec");
  ctx.reply.MapHeader(static_cast<int64_t>(steps.size()));
  for (const auto& [us, count] : steps) {
    ctx.reply.Integer(us);
    ctx.reply.Integer(static_cast<int64_t>(count));
  }
}

// DEBUG CLUSTERLINK KILL <to|from|all> <node-id>: frees this node's bus
// link(s) with a node; they are re-created as after a network error. Redis
// 7.0.15 crashes on a link that is not there (or myself's) and answers an
// unknown direction with its error and then OK; ringkv answers OK, the error
// of later Redis versions, and the error alone.
void DebugClusterLink(ServerCommandContext& ctx) {
  if (!Is(ctx.argv[2], "KILL")) {
    ReplySubcommandSyntaxError(ctx);
    return;
  }
  ClusterMode* cm = ctx.server.cluster();
  if (cm == nullptr || cm->bus() == nullptr) {
    ctx.reply.Error("ERR Debug option only available for cluster mode enabled setup!");
    return;
  }
  cluster::Node* n = cm->state().Find(ctx.argv[4]);
  if (n == nullptr) {
    ctx.reply.Error(StrCat("ERR Unknown node ", ctx.argv[4]));
    return;
  }
  if (n->is_myself()) {
    ctx.reply.Error("ERR Cannot free cluster link(s) to myself");
    return;
  }
  const std::string_view dir = ctx.argv[3];
  if (Is(dir, "to")) {
    cm->bus()->KillLinks(*n, LinkDirection::kTo);
  } else if (Is(dir, "from")) {
    cm->bus()->KillLinks(*n, LinkDirection::kFrom);
  } else if (Is(dir, "all")) {
    cm->bus()->KillLinks(*n, LinkDirection::kAll);
  } else {
    ctx.reply.Error(StrCat("ERR Unknown direction ", dir));
    return;
  }
  ctx.reply.Ok();
}

// DEBUG DROP-CLUSTER-PACKET-FILTER <type>: bus messages of that type are
// dropped on arrival (-1: none). Outside cluster mode it does nothing, as in
// Redis.
void DebugDropClusterPacketFilter(ServerCommandContext& ctx) {
  int64_t type;
  if (!core::StringToInt64(ctx.argv[2], &type)) {
    ctx.reply.Error(errors::kNotInteger);
    return;
  }
  if (ClusterMode* cm = ctx.server.cluster(); cm != nullptr && cm->bus() != nullptr) {
    cm->bus()->set_drop_packet_filter(type);
  }
  ctx.reply.Ok();
}

void DebugHelp(ServerCommandContext& ctx);

// A DEBUG subcommand: its name (any case on the wire), the argument counts it
// accepts (argc counts DEBUG and the subcommand; max -1 = no limit), its
// handler and its DEBUG HELP lines ('\n'-separated; empty: not listed, as
// Redis does not list its test hooks either).
struct DebugSubcommand {
  std::string_view name;
  size_t min_argc;
  int max_argc;
  void (*run)(ServerCommandContext&);
  std::string_view help;
};

// In DEBUG HELP's order.
constexpr DebugSubcommand kSubcommands[] = {
    {"AOF-FLUSH-SLEEP", 3, 3, DebugAofFlushSleep,
     "AOF-FLUSH-SLEEP <microsec>\n    Server will sleep before flushing the AOF, this is used for testing."},
    {"DIGEST", 2, 2, DebugDigest, "DIGEST\n    Output a hex signature representing the current DB content."},
    {"DIGEST-VALUE", 2, -1, DebugDigestValue,
     "DIGEST-VALUE <key> [<key> ...]\n    Output a hex signature of the values of all the specified keys."},
    {"LOG", 3, 3, DebugLog, "LOG <message>\n    Write <message> to the server log."},
    {"HTSTATS", 3, 3, DebugHtStats, "HTSTATS <dbid>\n    Return hash table statistics of the specified Redis database."},
    {"HTSTATS-KEY", 3, 3, DebugHtStatsKey,
     "HTSTATS-KEY <key>\n    Like HTSTATS but for the hash table stored at <key>'s value."},
    {"LOADAOF", 2, 2, DebugLoadAof, "LOADAOF\n    Flush the AOF buffers on disk and reload the AOF in memory."},
    {"REPLICATE", 3, -1, DebugReplicate,
     "REPLICATE <string>\n    Replicates the provided string to replicas, allowing data divergence."},
    {"OBJECT", 3, 3, DebugObject, "OBJECT <key>\n    Show low level info about the `key` and associated value."},
    {"DROP-CLUSTER-PACKET-FILTER", 3, 3, DebugDropClusterPacketFilter,
     "DROP-CLUSTER-PACKET-FILTER <packet-type>\n"
     "    Drop all packets that match the filtered type. Set to -1 allow all packets."},
    {"POPULATE", 3, 5, DebugPopulate,
     "POPULATE <count> [<prefix>] [<size>]\n"
     "    Create <count> string keys named key:<num>. If <prefix> is specified then\n"
     "    it is used instead of the 'key' prefix. These are not propagated to\n"
     "    replicas. Cluster slots are not respected so keys not belonging to the\n"
     "    current node can be created in cluster mode."},
    {"PROTOCOL", 3, 3, DebugProtocolCmd,
     "PROTOCOL <type>\n"
     "    Reply with a test value of the specified type. <type> can be: string,\n"
     "    integer, double, bignum, null, array, set, map, attrib, push, verbatim,\n"
     "    true, false."},
    {"RELOAD", 2, -1, DebugReload,
     "RELOAD [option ...]\n"
     "    Save the RDB on disk and reload it back to memory. Valid <option> values:\n"
     "    * MERGE: conflicting keys will be loaded from RDB.\n"
     "    * NOFLUSH: the existing database will not be removed before load, but\n"
     "      conflicting keys will generate an exception and kill the server.\n"
     "    * NOSAVE: the database will be loaded from an existing RDB file.\n"
     "    Examples:\n"
     "    * DEBUG RELOAD: verify that the server is able to persist, flush and reload\n"
     "      the database.\n"
     "    * DEBUG RELOAD NOSAVE: replace the current database with the contents of an\n"
     "      existing RDB file.\n"
     "    * DEBUG RELOAD NOSAVE NOFLUSH MERGE: add the contents of an existing RDB\n"
     "      file to the database."},
    {"QUICKLIST-PACKED-THRESHOLD", 3, 3, DebugQuicklistPackedThreshold,
     "QUICKLIST-PACKED-THRESHOLD <size>\n"
     "    Sets the threshold for elements to be inserted as plain vs packed nodes\n"
     "    Default value is 1GB, allows values up to 4GB. Setting to 0 restores to default."},
    {"SET-ACTIVE-EXPIRE", 3, 3, DebugSetActiveExpire,
     "SET-ACTIVE-EXPIRE <0|1>\n"
     "    Setting it to 0 disables expiring keys in background when they are not\n"
     "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the\n"
     "    default."},
    {"SET-SKIP-CHECKSUM-VALIDATION", 3, 3, DebugSetSkipChecksumValidation,
     "SET-SKIP-CHECKSUM-VALIDATION <0|1>\n    Enables or disables checksum checks for RDB files and RESTORE's payload."},
    {"SEGFAULT", 2, 2, DebugSegfault, "SEGFAULT\n    Crash the server with sigsegv."},
    {"PANIC", 2, 2, DebugPanic, "PANIC\n    Crash the server simulating a panic."},
    {"SLEEP", 3, 3, DebugSleep, "SLEEP <seconds>\n    Stop the server for <seconds>. Decimals allowed."},
    {"STRINGMATCH-LEN", 2, 2, DebugStringmatchLen,
     "STRINGMATCH-LEN\n    Run a fuzz tester against the stringmatchlen() function."},
    {"PAUSE-CRON", 3, 3, DebugPauseCron, "PAUSE-CRON <0|1>\n    Stop periodic cron job processing."},
    {"CLUSTERLINK", 5, 5, DebugClusterLink,
     "CLUSTERLINK KILL <to|from|all> <node-id>\n"
     "    Kills the link based on the direction to/from (both) with the provided node."},
    {"SET-DISABLE-DENY-SCRIPTS", 3, 3, DebugSetDisableDenyScripts, ""},
    {"CONFIG-REWRITE-FORCE-ALL", 2, 2, DebugConfigRewriteForceAll, ""},
    {"CLIENT-COMPONENTS", 3, 3, DebugClientComponents, ""},
    {"AOF-FSYNCS", 2, 2, DebugAofFsyncs, ""},
    {"DEADLINE-LATENESS", 2, 3, DebugDeadlineLateness,
     "DEADLINE-LATENESS [RESET]\n"
     "    How late blocked clients' timeouts (BLPOP, WAIT, ...) fired, in microseconds\n"
     "    (calls, p50, p99, p999, max and a cumulative histogram). RESET clears it."},
    {"HELP", 2, 2, DebugHelp, "HELP\n    Print this help."},
};

void DebugHelp(ServerCommandContext& ctx) {
  std::vector<std::string> lines = {"DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"};
  for (const DebugSubcommand& sub : kSubcommands) {
    if (sub.help.empty()) continue;
    for (std::string_view line : Split(sub.help, '\n')) lines.emplace_back(line);
  }
  ctx.reply.ArrayHeader(static_cast<int64_t>(lines.size()));
  for (const std::string& l : lines) ctx.reply.SimpleString(l);
}

void CmdDebug(ServerCommandContext& ctx) {
  const std::string_view name = ctx.argv[1];
  const size_t argc = ctx.argv.size();
  for (const DebugSubcommand& sub : kSubcommands) {
    if (!Is(name, sub.name)) continue;
    if (argc < sub.min_argc || (sub.max_argc >= 0 && argc > static_cast<size_t>(sub.max_argc))) break;
    sub.run(ctx);
    return;
  }
  ReplySubcommandSyntaxError(ctx);
}

}  // namespace

void RegisterDebugCommand(CommandTable& t) {
  t.Add(Cmd("debug", -2, cmd::kAdmin | cmd::kProtected | cmd::kNoscript | cmd::kLoading | cmd::kStale, 0, 0, 0,
            "@admin @slow @dangerous", "server", "A container for debugging commands.", "1.0.0", CmdDebug));
}

}  // namespace ringkv::server
