// The string family: GET, SET and friends, counters, ranges.
#include <algorithm>
#include <cstdint>
#include <span>
#include <string_view>

#include "core/strings.h"
#include "absl/strings/str_cat.h"
#include "core/string_ops.h"
#include "server/command_table.h"
#include "server/commands/string_ops.h"
#include "server/commands/util.h"
#include "server/errors.h"

namespace ringkv::server {
namespace {

// A pipelined batch's last prefetch round for the commands that copy a
// string value whole into their reply (GET, GETDEL, GETEX, GETSET): the
// first cache lines of a value kept on the heap, so that their misses
// overlap across the batch instead of stalling each copy in turn (a third
// of GET's CPU at pipeline 16 was that copy's miss, docs/performance.md
// 35.1). Integers and short strings live in the node, which the stage
// before brought in. Larger values are left to the copy's own streaming.
template <int kForWrite>
void PrefetchStringBytes(const core::Value& value) {
  if (!value.is_string() || value.str().is_int()) return;
  char scratch[24];
  const std::string_view s = value.str().View(scratch);
  constexpr uintptr_t kLine = 64;
  const uintptr_t begin = reinterpret_cast<uintptr_t>(s.data()) & ~(kLine - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(s.data()) + std::min<size_t>(s.size(), 4 * kLine);
  for (uintptr_t line = begin; line < end; line += kLine) {
    __builtin_prefetch(reinterpret_cast<const void*>(line), kForWrite);
  }
}
void PrefetchStringValue(const core::Value& value, std::span<const std::string_view> /*argv*/) {
  PrefetchStringBytes<0>(value);
}
// SET's: the old value's bytes are overwritten in place when the new value
// fits them (StringValue::Assign) or freed (the allocator writes into the
// block): fetched for writing.
void PrefetchOverwrittenValue(const core::Value& value, std::span<const std::string_view> /*argv*/) {
  PrefetchStringBytes<1>(value);
}

using core::OpStatus;

// proto-max-bulk-len, as the I/O layer already holds it (no config parsing per call).
int64_t MaxBulk(CommandContext& ctx) { return ctx.keyspace.limits().max_string_len; }

// Converts a relative or absolute expire argument into an absolute deadline
// in ms. On a value Redis rejects, *error is its error text.
bool ParseExpireQuiet(CommandContext& ctx, std::string_view arg, int64_t unit_ms, bool absolute, std::string_view cmd,
                      int64_t* deadline_ms, std::string* error) {
  int64_t v;
  if (!core::StringToInt64(arg, &v)) {
    *error = errors::kNotInteger;
    return false;
  }
  auto invalid = [&] {
    *error = StrCat("ERR invalid expire time in '", cmd, "' command");
    return false;
  };
  if (v <= 0) return invalid();
  if (v > INT64_MAX / unit_ms) return invalid();
  int64_t ms = v * unit_ms;
  if (!absolute) {
    if (ms > INT64_MAX - ctx.now_ms) return invalid();
    ms += ctx.now_ms;
  }
  *deadline_ms = ms;
  return true;
}

// As ParseExpireQuiet, replying the error.
bool ParseExpire(CommandContext& ctx, std::string_view arg, int64_t unit_ms, bool absolute, std::string_view cmd,
                 int64_t* deadline_ms) {
  std::string error;
  if (ParseExpireQuiet(ctx, arg, unit_ms, absolute, cmd, deadline_ms, &error)) return true;
  ctx.reply.Error(error);
  return false;
}

// The options of SET (from argv[3]) and GETEX (from argv[2]), checked word by
// word as Redis's parseExtendedStringArgumentsOrReply does: each option is
// refused only next to one it conflicts with (a repeated EX replaces the
// earlier one), and the expiry's number is parsed later, so a syntax error
// anywhere wins over a bad number.
struct StringOptions {
  bool nx = false, xx = false, get = false, keep_ttl = false, persist = false;
  bool has_expire = false;      // EX/PX/EXAT/PXAT given, with expire_arg
  std::string_view expire_arg;
  int64_t unit_ms = 1000;
  bool absolute = false;
};

bool ParseStringOptions(CommandContext& ctx, bool for_set, StringOptions* o) {
  enum Expire { kNone, kEx, kPx, kExat, kPxat };
  Expire expire = kNone;
  for (size_t i = for_set ? 3 : 2; i < ctx.argv.size(); ++i) {
    std::string_view a = ctx.argv[i];
    const bool has_next = i + 1 < ctx.argv.size();
    // An expiry option is refused after KEEPTTL, PERSIST or a different one.
    auto expiry_allowed = [&](Expire kind) { return !o->keep_ttl && !o->persist && (expire == kNone || expire == kind); };
    Expire kind = Is(a, "EX") ? kEx : Is(a, "PX") ? kPx : Is(a, "EXAT") ? kExat : Is(a, "PXAT") ? kPxat : kNone;
    if (for_set && Is(a, "NX") && !o->xx) {
      o->nx = true;
    } else if (for_set && Is(a, "XX") && !o->nx) {
      o->xx = true;
    } else if (for_set && Is(a, "GET")) {
      o->get = true;
    } else if (for_set && Is(a, "KEEPTTL") && expire == kNone) {
      o->keep_ttl = true;
    } else if (!for_set && Is(a, "PERSIST") && expire == kNone) {
      o->persist = true;
    } else if (kind != kNone && has_next && expiry_allowed(kind)) {
      expire = kind;
      o->has_expire = true;
      o->expire_arg = ctx.argv[++i];
      o->unit_ms = kind == kPx || kind == kPxat ? 1 : 1000;
      o->absolute = kind == kExat || kind == kPxat;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return false;
    }
  }
  return true;
}

// A string's bytes, or nil for a missing key (MGET: and for other types).
void ReplyValueOrNull(CommandContext& ctx, core::Entry* e) {
  if (e == nullptr || !e->value.is_string()) {
    ctx.reply.Null();
    return;
  }
  char scratch[24];
  ctx.reply.Bulk(e->value.str().View(scratch));
}

void CmdGet(CommandContext& ctx) {
  core::Entry* e = ctx.db.FindForRead(ctx.argv[1], ctx.now_ms);
  if (!CheckType(ctx, e, core::ValueType::kString)) return;
  ReplyValueOrNull(ctx, e);
}

void CmdSet(CommandContext& ctx) {
  StringOptions parsed;
  if (!ParseStringOptions(ctx, true, &parsed)) return;
  SetOptions opts;
  using C = SetOptions::Condition;
  opts.condition = parsed.nx ? C::kIfMissing : parsed.xx ? C::kIfExists : opts.condition;
  opts.get = parsed.get;
  opts.keep_ttl = parsed.keep_ttl;
  if (parsed.has_expire &&
      !ParseExpire(ctx, parsed.expire_arg, parsed.unit_ms, parsed.absolute, "set", &opts.expire_at_ms)) {
    return;
  }
  auto r = OpSet(OpArgsOf(ctx), ctx.argv[1], ctx.argv[2], opts);
  if (!r.ok()) return ReplyOpError(ctx, r.status());
  if (opts.get) {
    if (r->previous) {
      ctx.reply.Bulk(*r->previous);
    } else {
      ctx.reply.Null();
    }
  } else if (r->written) {
    ctx.reply.Ok();
  } else {
    ctx.reply.Null();
  }
}

void CmdSetnx(CommandContext& ctx) {
  SetOptions opts;
  opts.condition = SetOptions::Condition::kIfMissing;
  auto r = OpSet(OpArgsOf(ctx), ctx.argv[1], ctx.argv[2], opts);
  ctx.reply.Integer(r->written ? 1 : 0);
}

void SetWithExpire(CommandContext& ctx, int64_t unit_ms, std::string_view name) {
  SetOptions opts;
  if (!ParseExpire(ctx, ctx.argv[2], unit_ms, false, name, &opts.expire_at_ms)) return;
  OpSet(OpArgsOf(ctx), ctx.argv[1], ctx.argv[3], opts);
  ctx.reply.Ok();
}
void CmdSetex(CommandContext& ctx) { SetWithExpire(ctx, 1000, "setex"); }
void CmdPsetex(CommandContext& ctx) { SetWithExpire(ctx, 1, "psetex"); }

void CmdGetset(CommandContext& ctx) {
  auto r = OpGetset(OpArgsOf(ctx), ctx.argv[1], ctx.argv[2]);
  if (!r.ok()) return ReplyOpError(ctx, r.status());
  if (r->previous) {
    ctx.reply.Bulk(*r->previous);
  } else {
    ctx.reply.Null();
  }
}

void CmdGetdel(CommandContext& ctx) {
  const core::OpStatus status = OpGetdel(OpArgsOf(ctx), ctx.argv[1], [&](std::string_view v) { ctx.reply.Bulk(v); });
  if (status == OpStatus::kNotFound) return ctx.reply.Null();
  if (status != OpStatus::kOk) ReplyOpError(ctx, status);
}

void CmdGetex(CommandContext& ctx) {
  StringOptions parsed;
  if (!ParseStringOptions(ctx, false, &parsed)) return;
  GetexChange change;
  // As in Redis, the expiry's number is checked only for an existing string.
  std::string expire_error;
  if (parsed.has_expire) {
    change.kind = ParseExpireQuiet(ctx, parsed.expire_arg, parsed.unit_ms, parsed.absolute, "getex", &change.when,
                                   &expire_error)
                      ? GetexChange::kExpire
                      : GetexChange::kCheck;
  } else if (parsed.persist) {
    change.kind = GetexChange::kPersist;
  }
  const core::OpStatus status =
      OpGetex(OpArgsOf(ctx), ctx.argv[1], change, [&](std::string_view v) { ctx.reply.Bulk(v); });
  if (status == OpStatus::kNotFound) return ctx.reply.Null();
  if (status != OpStatus::kOk) return ReplyOpError(ctx, status);
  if (change.kind == GetexChange::kCheck) ctx.reply.Error(expire_error);
}

void CmdMget(CommandContext& ctx) {
  core::Database& db = ctx.db;
  ctx.reply.ArrayHeader(static_cast<int64_t>(ctx.argv.size() - 1));
  for (size_t i = 1; i < ctx.argv.size(); ++i) ReplyValueOrNull(ctx, db.FindForRead(ctx.argv[i], ctx.now_ms));
}

void Mset(CommandContext& ctx, bool nx) {
  if (ctx.argv.size() % 2 == 0) {
    ctx.reply.Error(StrCat("ERR wrong number of arguments for '", nx ? "msetnx" : "mset", "' command"));
    return;
  }
  const bool written = OpMset(OpArgsOf(ctx), ctx.argv.subspan(1), nx);
  if (nx) {
    ctx.reply.Integer(written ? 1 : 0);
  } else {
    ctx.reply.Ok();
  }
}
void CmdMset(CommandContext& ctx) { Mset(ctx, false); }
void CmdMsetnx(CommandContext& ctx) { Mset(ctx, true); }

void CmdAppend(CommandContext& ctx) {
  ReplyInteger(ctx, OpAppend(OpArgsOf(ctx), ctx.argv[1], ctx.argv[2], MaxBulk(ctx)));
}

void CmdStrlen(CommandContext& ctx) {
  core::Entry* e = ctx.db.FindForRead(ctx.argv[1], ctx.now_ms);
  if (!CheckType(ctx, e, core::ValueType::kString)) return;
  ctx.reply.Integer(e ? static_cast<int64_t>(e->value.str().size()) : 0);
}

void IncrBy(CommandContext& ctx, int64_t delta) {
  ReplyInteger(ctx, OpIncrBy(OpArgsOf(ctx), ctx.argv[1], delta));
}
void CmdIncr(CommandContext& ctx) { IncrBy(ctx, 1); }
void CmdDecr(CommandContext& ctx) { IncrBy(ctx, -1); }
void CmdIncrby(CommandContext& ctx) {
  int64_t d;
  if (ParseInt(ctx, ctx.argv[2], &d)) IncrBy(ctx, d);
}
void CmdDecrby(CommandContext& ctx) {
  int64_t d;
  if (!ParseInt(ctx, ctx.argv[2], &d)) return;
  if (d == INT64_MIN) {
    ctx.reply.Error("ERR decrement would overflow");
    return;
  }
  IncrBy(ctx, -d);
}

void CmdIncrbyfloat(CommandContext& ctx) {
  // Unlike INCRBY, the increment is parsed after the key's type is checked.
  auto r = OpIncrByFloat(OpArgsOf(ctx), ctx.argv[1], ctx.argv[2]);
  if (!r.ok()) return ReplyOpError(ctx, r.status());
  ctx.reply.Bulk(r.value());
}

void CmdGetrange(CommandContext& ctx) {
  int64_t start, end;
  if (!ParseInt(ctx, ctx.argv[2], &start) || !ParseInt(ctx, ctx.argv[3], &end)) return;
  core::Entry* e = ctx.db.FindForRead(ctx.argv[1], ctx.now_ms);
  if (e == nullptr) {
    ctx.reply.Bulk("");
    return;
  }
  if (!CheckType(ctx, e, core::ValueType::kString)) return;
  char scratch[24];
  ctx.reply.Bulk(core::SliceRange(e->value.str().View(scratch), start, end));
}

void CmdSetrange(CommandContext& ctx) {
  int64_t offset;
  if (!ParseInt(ctx, ctx.argv[2], &offset)) return;
  if (offset < 0) {
    ctx.reply.Error(errors::kOffsetRange);
    return;
  }
  ReplyInteger(ctx, OpSetRange(OpArgsOf(ctx), ctx.argv[1], offset, ctx.argv[3], MaxBulk(ctx)));
}

// LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN]
void CmdLcs(CommandContext& ctx) {
  // Redis looks the keys up and checks their type before the options.
  core::Database& db = ctx.db;
  core::Entry* ea = db.FindForRead(ctx.argv[1], ctx.now_ms);
  core::Entry* eb = db.FindForRead(ctx.argv[2], ctx.now_ms);
  if ((ea && !ea->value.is_string()) || (eb && !eb->value.is_string())) {
    ctx.reply.Error("ERR The specified keys must contain string values");
    return;
  }
  bool want_len = false, want_idx = false, with_match_len = false;
  int64_t min_match_len = 0;
  for (size_t i = 3; i < ctx.argv.size(); ++i) {
    std::string_view opt = ctx.argv[i];
    if (Is(opt, "IDX")) {
      want_idx = true;
    } else if (Is(opt, "LEN")) {
      want_len = true;
    } else if (Is(opt, "WITHMATCHLEN")) {
      with_match_len = true;
    } else if (Is(opt, "MINMATCHLEN") && i + 1 < ctx.argv.size()) {
      if (!ParseInt(ctx, ctx.argv[++i], &min_match_len)) return;
      if (min_match_len < 0) min_match_len = 0;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  }
  if (want_len && want_idx) {
    ctx.reply.Error("ERR If you want both the length and indexes, please just use IDX.");
    return;
  }
  std::string a = ea ? ea->value.str().ToString() : std::string();
  std::string b = eb ? eb->value.str().ToString() : std::string();
  // Lengths and indexes are 32-bit (Redis's too): only reachable with
  // proto-max-bulk-len raised past 4 GB.
  if (a.size() >= UINT32_MAX - 1 || b.size() >= UINT32_MAX - 1) {
    ctx.reply.Error("ERR String too long for LCS");
    return;
  }
  // Redis refuses a call whose table (4 bytes a cell) would exceed
  // proto-max-bulk-len. ringkv's table is a 32nd of that (bits, not words),
  // but the same calls get the same error, so a client sees Redis's limit.
  const unsigned long long cells = (static_cast<unsigned long long>(a.size()) + 1) * (b.size() + 1);
  if (cells > static_cast<unsigned long long>(MaxBulk(ctx)) / sizeof(uint32_t)) {
    ctx.reply.Error("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
    return;
  }
  if (want_len) {
    ctx.reply.Integer(core::LcsLength(a, b));
    return;
  }
  core::LcsResult r = core::ComputeLcs(a, b, want_idx, static_cast<uint32_t>(std::min<int64_t>(min_match_len, UINT32_MAX)));
  if (want_idx) {
    ctx.reply.MapHeader(2);
    ctx.reply.Bulk("matches");
    ctx.reply.ArrayHeader(static_cast<int64_t>(r.matches.size()));
    for (const core::LcsMatch& m : r.matches) {
      ctx.reply.ArrayHeader(with_match_len ? 3 : 2);
      ctx.reply.ArrayHeader(2);
      ctx.reply.Integer(m.a_start);
      ctx.reply.Integer(m.a_end);
      ctx.reply.ArrayHeader(2);
      ctx.reply.Integer(m.b_start);
      ctx.reply.Integer(m.b_end);
      if (with_match_len) ctx.reply.Integer(m.len);
    }
    ctx.reply.Bulk("len");
    ctx.reply.Integer(r.length);
  } else {
    ctx.reply.Bulk(r.lcs);
  }
}

}  // namespace

void RegisterStringCommands(CommandTable& t) {
  using namespace cmd;
  const char* kRead = "@read @string @fast";
  const char* kWriteAcl = "@write @string @slow";
  const char* kWriteFast = "@write @string @fast";
  t.Add(PrefetchValue(Cmd("get", 2, kReadonly | kFast, 1, 1, 1, kRead, "string", "Returns the string value of a key.", "1.0.0", CmdGet), PrefetchStringValue));
  t.Add(PrefetchValue(Cmd("set", -3, kWrite | kDenyOom, 1, 1, 1, kWriteAcl, "string", "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist.", "1.0.0", CmdSet), PrefetchOverwrittenValue));
  t.Add(Cmd("setnx", 3, kWrite | kDenyOom | kFast, 1, 1, 1, kWriteFast, "string", "Set the string value of a key only when the key doesn't exist.", "1.0.0", CmdSetnx));
  t.Add(Cmd("setex", 4, kWrite | kDenyOom, 1, 1, 1, kWriteAcl, "string", "Sets the string value and expiration time of a key. Creates the key if it doesn't exist.", "2.0.0", CmdSetex));
  t.Add(Cmd("psetex", 4, kWrite | kDenyOom, 1, 1, 1, kWriteAcl, "string", "Sets both string value and expiration time in milliseconds of a key. The key is created if it doesn't exist.", "2.6.0", CmdPsetex));
  t.Add(PrefetchValue(Cmd("getset", 3, kWrite | kDenyOom | kFast, 1, 1, 1, kWriteFast, "string", "Returns the previous string value of a key after setting it to a new value.", "1.0.0", CmdGetset), PrefetchStringValue));
  t.Add(PrefetchValue(Cmd("getdel", 2, kWrite | kFast, 1, 1, 1, kWriteFast, "string", "Returns the string value of a key after deleting the key.", "6.2.0", CmdGetdel), PrefetchStringValue));
  t.Add(PrefetchValue(Cmd("getex", -2, kWrite | kFast, 1, 1, 1, kWriteFast, "string", "Returns the string value of a key after setting its expiration time.", "6.2.0", CmdGetex), PrefetchStringValue));
  t.Add(Cmd("mget", -2, kReadonly | kFast, 1, -1, 1, kRead, "string", "Atomically returns the string values of one or more keys.", "1.0.0", CmdMget));
  t.Add(Cmd("mset", -3, kWrite | kDenyOom, 1, -1, 2, kWriteAcl, "string", "Atomically creates or modifies the string values of one or more keys.", "1.0.1", CmdMset));
  t.Add(Cmd("msetnx", -3, kWrite | kDenyOom, 1, -1, 2, kWriteAcl, "string", "Atomically modifies the string values of one or more keys only when all keys don't exist.", "1.0.1", CmdMsetnx));
  t.Add(Cmd("append", 3, kWrite | kDenyOom | kFast, 1, 1, 1, kWriteFast, "string", "Appends a string to the value of a key. Creates the key if it doesn't exist.", "2.0.0", CmdAppend));
  t.Add(Cmd("strlen", 2, kReadonly | kFast, 1, 1, 1, kRead, "string", "Returns the length of a string value.", "2.2.0", CmdStrlen));
  t.Add(Cmd("incr", 2, kWrite | kDenyOom | kFast, 1, 1, 1, kWriteFast, "string", "Increments the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.", "1.0.0", CmdIncr));
  t.Add(Cmd("decr", 2, kWrite | kDenyOom | kFast, 1, 1, 1, kWriteFast, "string", "Decrements the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.", "1.0.0", CmdDecr));
  t.Add(Cmd("incrby", 3, kWrite | kDenyOom | kFast, 1, 1, 1, kWriteFast, "string", "Increments the integer value of a key by a number. Uses 0 as initial value if the key doesn't exist.", "1.0.0", CmdIncrby));
  t.Add(Cmd("decrby", 3, kWrite | kDenyOom | kFast, 1, 1, 1, kWriteFast, "string", "Decrements a number from the integer value of a key. Uses 0 as initial value if the key doesn't exist.", "1.0.0", CmdDecrby));
  t.Add(Cmd("incrbyfloat", 3, kWrite | kDenyOom | kFast, 1, 1, 1, kWriteFast, "string", "Increment the floating point value of a key by a number. Uses 0 as initial value if the key doesn't exist.", "2.6.0", CmdIncrbyfloat));
  t.Add(Cmd("getrange", 4, kReadonly, 1, 1, 1, "@read @string @slow", "string", "Returns a substring of the string stored at a key.", "2.4.0", CmdGetrange));
  t.Add(Cmd("substr", 4, kReadonly, 1, 1, 1, "@read @string @slow", "string", "Returns a substring from a string value.", "1.0.0", CmdGetrange));
  t.Add(Cmd("lcs", -3, kReadonly, 1, 2, 1, "@read @string @slow", "string", "Finds the longest common substring.", "7.0.0", CmdLcs));
  t.Add(Cmd("setrange", 4, kWrite | kDenyOom, 1, 1, 1, kWriteAcl, "string", "Overwrites a part of a string value with another by an offset. Creates the key if it doesn't exist.", "2.2.0", CmdSetrange));
}

}  // namespace ringkv::server
