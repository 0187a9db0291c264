// DEBUG: the operator and tooling subcommands of Redis 7.0 that ringkv has
// the data for. Behind enable-debug-command (no / yes / local), as in Redis.
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "absl/random/random.h"
#include "core/digest.h"
#include "core/eviction.h"
#include "core/rdb_string.h"
#include "core/rdb_writer.h"
#include "core/list_value.h"
#include "core/rdb_reader.h"
#include "absl/strings/str_format.h"
#include "core/glob.h"
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

bool DebugAllowed(CommandContext& ctx) {
  const std::string& mode = ctx.server.config().Str("enable-debug-command");
  if (mode == "yes" || (mode == "local" && ctx.client.loopback)) return true;
  ctx.reply.Error(
      "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it from "
      "a local connection, otherwise you need to set this option in the configuration file, and then restart the "
      "server.");
  return false;
}

void DebugProtocol(CommandContext& ctx, std::string_view type) {
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

void CmdDebug(CommandContext& ctx) {
  if (!DebugAllowed(ctx)) return;
  std::string_view sub = ctx.argv[1];
  const size_t argc = ctx.argv.size();
  if (Is(sub, "SLEEP") && argc == 3) {
    // Redis parses with strtod: a non-number sleeps 0 s. Blocking the main
    // thread is the point of this command.
    double secs = std::strtod(std::string(ctx.argv[2]).c_str(), nullptr);
    std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(secs * 1e6)));
    ctx.reply.Ok();
  } else if (Is(sub, "POPULATE") && argc >= 3 && argc <= 5) {
    // DEBUG POPULATE <count> [<prefix>] [<size>]: keys prefix:N holding
    // "value:N" (cut or zero-padded to size); existing keys are left alone.
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
      bool created;
      core::Entry* e = db.FindOrInsert(key, ctx.now_ms, &created);
      if (!created) continue;
      value = StrCat("value:", j);
      if (size > 0) value.resize(static_cast<size_t>(size), '\0');
      e->value = core::StringValue::Raw(value);
      if (value.size() <= core::StringValue::kEmbstrMax) e->value = core::StringValue(value);
    }
    ctx.reply.Ok();
  } else if (Is(sub, "LOG") && argc == 3) {
    Log(kWarning, StrCat("DEBUG LOG: ", ctx.argv[2]));
    ctx.reply.Ok();
  } else if (Is(sub, "REPLICATE") && argc >= 3) {
    // The arguments go to the replicas as a command, unrun here: a test
    // hook for data divergence (propagation-error-behavior).
    ctx.server.ReplicateVerbatim(ctx.argv.subspan(2));
    ctx.reply.Ok();
  } else if (Is(sub, "SET-SKIP-CHECKSUM-VALIDATION") && argc == 3) {
    core::SetSkipChecksumValidation(std::atoi(std::string(ctx.argv[2]).c_str()) != 0);
    ctx.reply.Ok();
  } else if (Is(sub, "SET-ACTIVE-EXPIRE") && argc == 3) {
    ctx.server.set_active_expire(std::atoi(std::string(ctx.argv[2]).c_str()) != 0);
    ctx.reply.Ok();
  } else if (Is(sub, "SET-DISABLE-DENY-SCRIPTS") && argc == 3) {
    // A test hook: scripts may call commands flagged noscript.
    ctx.server.set_disable_deny_scripts(std::atoi(std::string(ctx.argv[2]).c_str()) != 0);
    ctx.reply.Ok();
  } else if (Is(sub, "OBJECT") && argc == 3) {
    // The stored entry, expired or not (Redis looks in the dict directly).
    core::Entry* e = ctx.server.db(ctx.client).Peek(ctx.argv[2]);
    if (e == nullptr) {
      ctx.reply.Error(errors::kNoSuchKey);
      return;
    }
    const bool lfu = ctx.server.keyspace().access_policy().lfu();
    ctx.reply.SimpleString(StrCat(
        "Value at:0x", absl::Hex(reinterpret_cast<uintptr_t>(&e->value)), " refcount:",
        e->value.redis_refcount(), " encoding:", e->value.encoding_name(),
        " serializedlength:", SerializedLength(e->value, ctx.server.config().Bool("rdbcompression")),
        " lru:", e->lru & 0xFFFFFF, " lru_seconds_idle:", lfu ? 0 : core::IdleSeconds(*e, ctx.now_ms),
        QuicklistDetails(e->value)));
  } else if (Is(sub, "DIGEST") && argc == 2) {
    ctx.reply.SimpleString(core::DigestHex(core::DatasetDigest(ctx.server.keyspace())));
  } else if (Is(sub, "DIGEST-VALUE") && argc >= 2) {
    ctx.reply.ArrayHeader(static_cast<int64_t>(argc - 2));
    for (size_t i = 2; i < argc; ++i) {
      ctx.reply.SimpleString(core::DigestHex(core::ValueDigest(ctx.server.db(ctx.client), ctx.argv[i])));
    }
  } else if (Is(sub, "RELOAD")) {
    // DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE]
    bool save = true, flush = true, merge = false;
    for (size_t i = 2; i < argc; ++i) {
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
    absl::Status s = ctx.server.DebugReload(save, flush, merge);
    if (s.ok()) {
      ctx.reply.Ok();
    } else if (absl::IsDataLoss(s) || absl::IsNotFound(s)) {
      ctx.reply.Error("ERR Error trying to load the RDB dump, check server logs.");
    } else {
      ctx.reply.Error("ERR");
    }
  } else if (Is(sub, "LOADAOF") && argc == 2) {
    if (absl::Status s = ctx.server.DebugLoadAof(); !s.ok()) {
      ctx.reply.Error(StrCat("ERR Error loading the AOF: ", s.message()));
      return;
    }
    ctx.server.stats().dirty = 0;
    ctx.reply.Ok();
  } else if (Is(sub, "PROTOCOL") && argc == 3) {
    DebugProtocol(ctx, ctx.argv[2]);
  } else if (Is(sub, "STRINGMATCH-LEN") && argc == 2) {
    StringmatchFuzz();
    ctx.reply.SimpleString("Apparently Redis did not crash: test passed");
  } else if (Is(sub, "CLIENT-COMPONENTS") && argc == 3) {
    // ringkv only: the components a client has allocated beyond its base
    // struct (a client that uses no feature has none).
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
  } else if (Is(sub, "HELP") && argc == 2) {
    static const char* kLines[] = {
        "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "DIGEST",
        "    Output a hex signature representing the current DB content.",
        "DIGEST-VALUE <key> [<key> ...]",
        "    Output a hex signature of the values of all the specified keys.",
        "LOADAOF",
        "    Flush the AOF buffers on disk and reload the AOF in memory.",
        "LOG <message>",
        "    Write <message> to the server log.",
        "REPLICATE <string>",
        "    Replicates the provided string to replicas, allowing data divergence.",
        "OBJECT <key>",
        "    Show low level info about the `key` and associated value.",
        "POPULATE <count> [<prefix>] [<size>]",
        "    Create <count> string keys named key:<num>. If <prefix> is specified then",
        "    it is used instead of the 'key' prefix. These are not propagated to",
        "    replicas. Cluster slots are not respected so keys not belonging to the",
        "    current node can be created in cluster mode.",
        "PROTOCOL <type>",
        "    Reply with a test value of the specified type. <type> can be: string,",
        "    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
        "    true, false.",
        "RELOAD [option ...]",
        "    Save the RDB on disk and reload it back to memory. Valid <option> values:",
        "    * MERGE: conflicting keys will be loaded from RDB.",
        "    * NOFLUSH: the existing database will not be removed before load, but",
        "      conflicting keys will generate an exception and kill the server.",
        "    * NOSAVE: the database will be loaded from an existing RDB file.",
        "    Examples:",
        "    * DEBUG RELOAD: verify that the server is able to persist, flush and reload",
        "      the database.",
        "    * DEBUG RELOAD NOSAVE: replace the current database with the contents of an",
        "      existing RDB file.",
        "    * DEBUG RELOAD NOSAVE NOFLUSH MERGE: add the contents of an existing RDB",
        "      file to the database.",
        "SET-ACTIVE-EXPIRE <0|1>",
        "    Setting it to 0 disables expiring keys in background when they are not",
        "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
        "    default.",
        "SET-SKIP-CHECKSUM-VALIDATION <0|1>",
        "    Enables or disables checksum checks for RDB files and RESTORE's payload.",
        "SLEEP <seconds>",
        "    Stop the server for <seconds>. Decimals allowed.",
        "STRINGMATCH-LEN",
        "    Run a fuzz tester against the stringmatchlen() function.",
        "HELP",
        "    Print this help.",
    };
    ReplyHelp(ctx, kLines);
  } else {
    ctx.reply.Error(StrCat("ERR unknown subcommand or wrong number of arguments for '", sub, "'. Try DEBUG HELP."));
  }
}

}  // namespace

void RegisterDebugCommand(CommandTable& t) {
  t.Add(Cmd("debug", -2, cmd::kAdmin | cmd::kNoscript | cmd::kLoading | cmd::kStale, 0, 0, 0,
            "@admin @slow @dangerous", "server", "A container for debugging commands.", "1.0.0", CmdDebug));
}

}  // namespace ringkv::server
