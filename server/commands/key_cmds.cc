// Generic key commands: DEL, EXISTS, TYPE, KEYS, SCAN, expiry, RENAME, MOVE,
// COPY, OBJECT. A data family: it reaches the keyspace through its context
// (FLUSHDB, FLUSHALL and SWAPDB, which tell the server, are flush_cmds.cc).
#include "core/strings.h"
#include <cerrno>
#include <cctype>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "core/access_policy.h"
#include "core/glob.h"
#include "server/client.h"
#include "server/command_table.h"
#include "server/commands/key_ops.h"
#include "server/commands/util.h"
#include "server/errors.h"

namespace ringkv::server {
namespace {

void Delete(CommandContext& ctx, bool async) {
  ctx.reply.Integer(OpDel(OpArgsOf(ctx), ctx.argv.subspan(1), async));
}

void CmdDel(CommandContext& ctx) { Delete(ctx, ctx.effects.lazy_user_del()); }
void CmdUnlink(CommandContext& ctx) { Delete(ctx, /*async=*/true); }

void CmdExists(CommandContext& ctx) {
  core::Database& db = ctx.db;
  int64_t n = 0;
  for (size_t i = 1; i < ctx.argv.size(); ++i) n += db.FindForRead(ctx.argv[i], ctx.now_ms, /*touch=*/false) != nullptr;
  ctx.reply.Integer(n);
}

void CmdTouch(CommandContext& ctx) {
  core::Database& db = ctx.db;
  int64_t n = 0;
  for (size_t i = 1; i < ctx.argv.size(); ++i) {
    if (db.FindForRead(ctx.argv[i], ctx.now_ms) != nullptr) ++n;  // records the access, counted as a read
  }
  ctx.reply.Integer(n);
}

void CmdType(CommandContext& ctx) {
  core::Entry* e = ctx.db.FindForRead(ctx.argv[1], ctx.now_ms, /*touch=*/false);
  ctx.reply.SimpleString(e != nullptr ? core::TypeName(e->value.type()) : "none");
}

void CmdKeys(CommandContext& ctx) {
  std::vector<std::string> keys;
  std::string_view pattern = ctx.argv[1];
  bool all = pattern == "*";
  ctx.db.ForEach(ctx.now_ms, [&](std::string_view key, const core::Entry&) {
    if (all || core::GlobMatch(pattern, key)) keys.emplace_back(key);
  });
  ctx.reply.ArrayHeader(static_cast<int64_t>(keys.size()));
  for (const std::string& k : keys) ctx.reply.Bulk(k);
}

// SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]
void CmdScan(CommandContext& ctx) {
  uint64_t cursor;
  ScanOptions opts;
  if (!ParseScanCursor(ctx, ctx.argv[1], &cursor) || !ParseScanOptions(ctx, 2, /*allow_type=*/true, &opts)) return;
  std::vector<std::string> keys, stale;
  core::Database& db = ctx.db;
  int64_t budget = opts.count * 10;  // bounds the work on sparse tables, as Redis
  do {
    cursor = db.Scan(
        cursor, ctx.now_ms,
        [&](std::string_view key, const core::Entry& e) {
          if (!opts.Matches(key)) return;
          if (!opts.type.empty() && !Is(opts.type, core::TypeName(e.value.type()))) return;
          keys.emplace_back(key);
        },
        [&](std::string_view key) {
          if (opts.Matches(key)) stale.emplace_back(key);
        });
  } while (cursor != 0 && --budget > 0 && static_cast<int64_t>(keys.size()) < opts.count);
  // The expired keys it met (and that match) are expired as any lookup
  // would, each its own DEL, as Redis's SCAN.
  for (const std::string& key : stale) db.FindNoTouch(key, ctx.now_ms);
  ReplyScan(ctx, cursor, keys);
}

void CmdRandomkey(CommandContext& ctx) {
  std::string key;
  if (ctx.db.RandomKey(ctx.now_ms, ctx.keyspace.rng(), &key)) {
    ctx.reply.Bulk(key);
  } else {
    ctx.reply.Null();
  }
}

void CmdDbsize(CommandContext& ctx) { ctx.reply.Integer(static_cast<int64_t>(ctx.db.size())); }

// EXPIRE family: relative or absolute, seconds or ms, with NX XX GT LT.
void Expire(CommandContext& ctx, int64_t unit_ms, bool absolute) {
  ExpireFlags flags;
  for (size_t i = 3; i < ctx.argv.size(); ++i) {
    std::string_view a = ctx.argv[i];
    if (Is(a, "NX")) flags.nx = true;
    else if (Is(a, "XX")) flags.xx = true;
    else if (Is(a, "GT")) flags.gt = true;
    else if (Is(a, "LT")) flags.lt = true;
    else {
      ctx.reply.Error(StrCat("ERR Unsupported option ", errors::UpToNul(a)));
      return;
    }
  }
  if (flags.nx && (flags.xx || flags.gt || flags.lt)) {
    ctx.reply.Error("ERR NX and XX, GT or LT options at the same time are not compatible");
    return;
  }
  if (flags.gt && flags.lt) {
    ctx.reply.Error("ERR GT and LT options at the same time are not compatible");
    return;
  }
  int64_t v;
  if (!ParseInt(ctx, ctx.argv[2], &v)) return;
  std::string name = AsciiLower(ctx.argv[0]);
  auto invalid = [&] { ctx.reply.Error(StrCat("ERR invalid expire time in '", name, "' command")); };
  if (v > INT64_MAX / unit_ms || v < INT64_MIN / unit_ms) return invalid();
  int64_t when = v * unit_ms;
  if (!absolute) {
    if ((when > 0 && ctx.now_ms > INT64_MAX - when) || (when < 0 && ctx.now_ms < INT64_MIN - when)) return invalid();
    when += ctx.now_ms;
  }
  ctx.reply.Integer(OpExpire(OpArgsOf(ctx), ctx.argv[1], when, flags) ? 1 : 0);
}
void CmdExpire(CommandContext& ctx) { Expire(ctx, 1000, false); }
void CmdPexpire(CommandContext& ctx) { Expire(ctx, 1, false); }
void CmdExpireat(CommandContext& ctx) { Expire(ctx, 1000, true); }
void CmdPexpireat(CommandContext& ctx) { Expire(ctx, 1, true); }

// TTL family: -2 missing, -1 persistent.
void Ttl(CommandContext& ctx, bool ms, bool absolute) {
  core::Database& db = ctx.db;
  core::Entry* e = db.FindForRead(ctx.argv[1], ctx.now_ms, /*touch=*/false);
  if (e == nullptr) {
    ctx.reply.Integer(-2);
    return;
  }
  int64_t when = db.GetExpire(e);
  if (when < 0) {
    ctx.reply.Integer(-1);
    return;
  }
  if (absolute) {
    ctx.reply.Integer(ms ? when : when / 1000);
    return;
  }
  int64_t left = std::max<int64_t>(0, when - ctx.now_ms);
  ctx.reply.Integer(ms ? left : (left + 500) / 1000);
}
void CmdTtl(CommandContext& ctx) { Ttl(ctx, false, false); }
void CmdPttl(CommandContext& ctx) { Ttl(ctx, true, false); }
void CmdExpiretime(CommandContext& ctx) { Ttl(ctx, false, true); }
void CmdPexpiretime(CommandContext& ctx) { Ttl(ctx, true, true); }

void CmdPersist(CommandContext& ctx) { ctx.reply.Integer(OpPersist(OpArgsOf(ctx), ctx.argv[1]) ? 1 : 0); }

void Rename(CommandContext& ctx, bool nx) {
  core::OpResult<bool> r = OpRename(OpArgsOf(ctx), ctx.argv[1], ctx.argv[2], nx);
  if (!r.ok()) return ReplyOpError(ctx, r.status());  // no such key
  if (nx) {
    ctx.reply.Integer(r.value() ? 1 : 0);
  } else {
    ctx.reply.Ok();
  }
}
void CmdRename(CommandContext& ctx) { Rename(ctx, false); }
void CmdRenamenx(CommandContext& ctx) { Rename(ctx, true); }

bool ParseDbIndex(CommandContext& ctx, std::string_view arg, int* out) {
  int32_t v;
  if (!ParseInt32(ctx, arg, &v)) return false;
  if (v < 0 || v >= ctx.keyspace.count()) {
    ctx.reply.Error(errors::kDbIndexRange);
    return false;
  }
  *out = v;
  return true;
}

void CmdMove(CommandContext& ctx) {
  if (ctx.effects.cluster_enabled()) {
    ctx.reply.Error("ERR MOVE is not allowed in cluster mode");
    return;
  }
  int dst_index;
  if (!ParseDbIndex(ctx, ctx.argv[2], &dst_index)) return;
  if (dst_index == ctx.client.db) {
    ctx.reply.Error("ERR source and destination objects are the same");
    return;
  }
  ctx.reply.Integer(OpMove(OpArgsOf(ctx), ctx.argv[1], ctx.keyspace.db(dst_index)) ? 1 : 0);
}

// COPY source destination [DB destination-db] [REPLACE]
void CmdCopy(CommandContext& ctx) {
  int dst_index = ctx.client.db;
  bool replace = false;
  for (size_t i = 3; i < ctx.argv.size(); ++i) {
    if (Is(ctx.argv[i], "REPLACE")) {
      replace = true;
    } else if (Is(ctx.argv[i], "DB") && i + 1 < ctx.argv.size()) {
      if (!ParseDbIndex(ctx, ctx.argv[++i], &dst_index)) return;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  }
  // As Redis 7.0: after every option parsed (a syntax error or a DB out of
  // range answers first), before the same-key check; DB 0 is allowed.
  if (ctx.effects.cluster_enabled() && (ctx.client.db != 0 || dst_index != 0)) {
    ctx.reply.Error("ERR Copying to another database is not allowed in cluster mode");
    return;
  }
  if (dst_index == ctx.client.db && ctx.argv[1] == ctx.argv[2]) {
    ctx.reply.Error("ERR source and destination objects are the same");
    return;
  }
  core::Database& dst = ctx.keyspace.db(dst_index);
  ctx.reply.Integer(OpCopy(OpArgsOf(ctx), ctx.argv[1], dst, ctx.argv[2], replace) ? 1 : 0);
}

// OBJECT subcommands. REQUIRES: argv is {OBJECT, sub, key}. A miss is
// counted but not announced (objectCommandLookup: LOOKUP_NONOTIFY).
core::Entry* ObjectTarget(CommandContext& ctx) {
  core::Entry* e = ctx.db.FindForRead(ctx.argv[2], ctx.now_ms, /*touch=*/false, /*notify_miss=*/false);
  if (e == nullptr) ctx.reply.Null();
  return e;
}

void CmdObjectEncoding(CommandContext& ctx) {
  core::Entry* e = ObjectTarget(ctx);
  if (e == nullptr) return;
  ctx.reply.Bulk(e->value.encoding_name());
}

void CmdObjectRefcount(CommandContext& ctx) {
  core::Entry* e = ObjectTarget(ctx);
  if (e == nullptr) return;
  ctx.reply.Integer(e->value.redis_refcount(ctx.keyspace.access_policy().integers_shared));
}

void CmdObjectIdletime(CommandContext& ctx) {
  core::Entry* e = ObjectTarget(ctx);
  if (e == nullptr) return;
  if (ctx.keyspace.access_policy().lfu()) {
    ctx.reply.Error(
        "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between "
        "policies at runtime LRU and LFU data will take some time to adjust.");
    return;
  }
  ctx.reply.Integer(core::IdleSeconds(e->lru(), ctx.now_ms));
}

void CmdObjectFreq(CommandContext& ctx) {
  core::Entry* e = ObjectTarget(ctx);
  if (e == nullptr) return;
  const core::AccessPolicy& p = ctx.keyspace.access_policy();
  if (!p.lfu()) {
    ctx.reply.Error(
        "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching "
        "between policies at runtime LRU and LFU data will take some time to adjust.");
    return;
  }
  ctx.reply.Integer(core::LfuFrequency(p, e->lru(), ctx.now_ms));
}

void CmdObjectHelp(CommandContext& ctx) {
  static const char* kLines[] = {
      "ENCODING <key>",
      "    Return the kind of internal representation used in order to store the value",
      "    associated with a <key>.",
      "FREQ <key>",
      "    Return the access frequency index of the <key>. The returned integer is",
      "    proportional to the logarithm of the recent access frequency of the key.",
      "IDLETIME <key>",
      "    Return the idle time of the <key>, that is the approximated number of",
      "    seconds elapsed since the last access to the key.",
      "REFCOUNT <key>",
      "    Return the number of references of the value associated with the specified",
      "    <key>.",
  };
  ReplyHelp(ctx, kLines);
}

}  // namespace

void RegisterKeyCommands(CommandTable& t) {
  using namespace cmd;
  t.Add(Cmd("del", -2, kWrite, 1, -1, 1, "@keyspace @write @slow", "generic", "Deletes one or more keys.", "1.0.0", CmdDel));
  t.Add(Cmd("unlink", -2, kWrite | kFast, 1, -1, 1, "@keyspace @write @fast", "generic", "Asynchronously deletes one or more keys.", "4.0.0", CmdUnlink));
  t.Add(Cmd("exists", -2, kReadonly | kFast, 1, -1, 1, "@keyspace @read @fast", "generic", "Determines whether one or more keys exist.", "1.0.0", CmdExists));
  t.Add(Cmd("touch", -2, kReadonly | kFast, 1, -1, 1, "@keyspace @read @fast", "generic", "Returns the number of existing keys out of those specified after updating the time they were last accessed.", "3.2.1", CmdTouch));
  t.Add(Cmd("type", 2, kReadonly | kFast, 1, 1, 1, "@keyspace @read @fast", "generic", "Determines the type of value stored at a key.", "1.0.0", CmdType));
  t.Add(Cmd("keys", 2, kReadonly, 0, 0, 0, "@keyspace @read @slow @dangerous", "generic", "Returns all key names that match a pattern.", "1.0.0", CmdKeys));
  t.Add(Cmd("scan", -2, kReadonly, 0, 0, 0, "@keyspace @read @slow", "generic", "Iterates over the key names in the database.", "2.8.0", CmdScan));
  t.Add(Cmd("randomkey", 1, kReadonly, 0, 0, 0, "@keyspace @read @slow", "generic", "Returns a random key name from the database.", "1.0.0", CmdRandomkey));
  t.Add(Cmd("dbsize", 1, kReadonly | kFast, 0, 0, 0, "@keyspace @read @fast", "server", "Returns the number of keys in the database.", "1.0.0", CmdDbsize));
  t.Add(Cmd("expire", -3, kWrite | kFast, 1, 1, 1, "@keyspace @write @fast", "generic", "Sets the expiration time of a key in seconds.", "1.0.0", CmdExpire));
  t.Add(Cmd("pexpire", -3, kWrite | kFast, 1, 1, 1, "@keyspace @write @fast", "generic", "Sets the expiration time of a key in milliseconds.", "2.6.0", CmdPexpire));
  t.Add(Cmd("expireat", -3, kWrite | kFast, 1, 1, 1, "@keyspace @write @fast", "generic", "Sets the expiration time of a key to a Unix timestamp.", "1.2.0", CmdExpireat));
  t.Add(Cmd("pexpireat", -3, kWrite | kFast, 1, 1, 1, "@keyspace @write @fast", "generic", "Sets the expiration time of a key to a Unix milliseconds timestamp.", "2.6.0", CmdPexpireat));
  t.Add(Cmd("ttl", 2, kReadonly | kFast, 1, 1, 1, "@keyspace @read @fast", "generic", "Returns the expiration time in seconds of a key.", "1.0.0", CmdTtl));
  t.Add(Cmd("pttl", 2, kReadonly | kFast, 1, 1, 1, "@keyspace @read @fast", "generic", "Returns the expiration time in milliseconds of a key.", "2.6.0", CmdPttl));
  t.Add(Cmd("expiretime", 2, kReadonly | kFast, 1, 1, 1, "@keyspace @read @fast", "generic", "Returns the expiration time of a key as a Unix timestamp.", "7.0.0", CmdExpiretime));
  t.Add(Cmd("pexpiretime", 2, kReadonly | kFast, 1, 1, 1, "@keyspace @read @fast", "generic", "Returns the expiration time of a key as a Unix milliseconds timestamp.", "7.0.0", CmdPexpiretime));
  t.Add(Cmd("persist", 2, kWrite | kFast, 1, 1, 1, "@keyspace @write @fast", "generic", "Removes the expiration time of a key.", "2.2.0", CmdPersist));
  t.Add(Cmd("rename", 3, kWrite, 1, 2, 1, "@keyspace @write @slow", "generic", "Renames a key and overwrites the destination.", "1.0.0", CmdRename));
  t.Add(Cmd("renamenx", 3, kWrite | kFast, 1, 2, 1, "@keyspace @write @fast", "generic", "Renames a key only when the target key name doesn't exist.", "1.0.0", CmdRenamenx));
  t.Add(Cmd("move", 3, kWrite | kFast, 1, 1, 1, "@keyspace @write @fast", "generic", "Moves a key to another database.", "1.0.0", CmdMove));
  t.Add(Cmd("copy", -3, kWrite | kDenyOom, 1, 2, 1, "@keyspace @write @slow", "generic", "Copies the value of a key to a new key.", "6.2.0", CmdCopy));
  std::vector<CommandSpec> object;
  object.push_back(Cmd("object|encoding", 3, kReadonly, 2, 2, 1, "@keyspace @read @slow", "generic", "Returns the internal encoding of a Redis object.", "2.2.3", CmdObjectEncoding));
  object.push_back(Cmd("object|freq", 3, kReadonly, 2, 2, 1, "@keyspace @read @slow", "generic", "Returns the logarithmic access frequency counter of a Redis object.", "4.0.0", CmdObjectFreq));
  object.push_back(Cmd("object|idletime", 3, kReadonly, 2, 2, 1, "@keyspace @read @slow", "generic", "Returns the time since the last access to a Redis object.", "2.2.3", CmdObjectIdletime));
  object.push_back(Cmd("object|refcount", 3, kReadonly, 2, 2, 1, "@keyspace @read @slow", "generic", "Returns the reference count of a value of a key.", "2.2.3", CmdObjectRefcount));
  object.push_back(Cmd("object|help", 2, kLoading | kStale, 0, 0, 0, "@keyspace @slow", "generic", "Returns helpful text about the different subcommands.", "6.2.0", CmdObjectHelp));
  t.Add(Cmd("object", -2, 0, 0, 0, 0, "@slow", "generic", "A container for object introspection commands.", "2.2.3", nullptr, std::move(object)));
}

}  // namespace ringkv::server
