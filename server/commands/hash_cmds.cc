// The hash family: HSET and friends, counters, whole-hash reads, HRANDFIELD,
// HSCAN. Replies, errors and encodings follow Redis 7.0's t_hash.c.
#include <cmath>
#include <string>
#include <vector>

#include "core/hash_value.h"
#include "core/strings.h"
#include "server/command_table.h"
#include "server/commands/hash_ops.h"
#include "server/commands/util.h"
#include "server/errors.h"

namespace ringkv::server {
namespace {

using core::HashValue;

// HSET key field value [field value ...] / HMSET: returns the new fields.
bool SetPairs(CommandContext& ctx, int64_t* added) {
  if (ctx.argv.size() % 2 != 0) {
    ctx.reply.Error(StrCat("ERR wrong number of arguments for '", AsciiLower(ctx.argv[0]), "' command"));
    return false;
  }
  core::OpResult<int64_t> r = OpHset(OpArgsOf(ctx), ctx.argv[1], ctx.argv.subspan(2));
  if (!r.ok()) {
    ReplyOpError(ctx, r.status());
    return false;
  }
  *added = r.value();
  return true;
}

void CmdHset(CommandContext& ctx) {
  int64_t added;
  if (SetPairs(ctx, &added)) ctx.reply.Integer(added);
}

void CmdHmset(CommandContext& ctx) {
  int64_t added;
  if (SetPairs(ctx, &added)) ctx.reply.Ok();
}

void CmdHsetnx(CommandContext& ctx) {
  core::OpResult<bool> r = OpHsetnx(OpArgsOf(ctx), ctx.argv[1], ctx.argv[2], ctx.argv[3]);
  if (!r.ok()) return ReplyOpError(ctx, r.status());
  ctx.reply.Integer(r.value() ? 1 : 0);
}

void CmdHget(CommandContext& ctx) {
  HashValue* h;
  if (!LookupForRead(ctx, ctx.argv[1], &h)) return;
  char scratch[24];
  std::string_view v;
  if (h == nullptr || !h->GetView(ctx.argv[2], scratch, &v)) {
    ctx.reply.Null();
    return;
  }
  ctx.reply.Bulk(v);
}

void CmdHmget(CommandContext& ctx) {
  HashValue* h;
  if (!LookupForRead(ctx, ctx.argv[1], &h)) return;
  ctx.reply.ArrayHeader(static_cast<int64_t>(ctx.argv.size() - 2));
  char scratch[24];
  for (size_t i = 2; i < ctx.argv.size(); ++i) {
    std::string_view v;
    if (h != nullptr && h->GetView(ctx.argv[i], scratch, &v)) {
      ctx.reply.Bulk(v);
    } else {
      ctx.reply.Null();
    }
  }
}

void CmdHdel(CommandContext& ctx) {
  ReplyInteger(ctx, OpHdel(OpArgsOf(ctx), ctx.argv[1], ctx.argv.subspan(2)));
}

void CmdHlen(CommandContext& ctx) {
  HashValue* h;
  if (LookupForRead(ctx, ctx.argv[1], &h)) ctx.reply.Integer(h ? static_cast<int64_t>(h->size()) : 0);
}

void CmdHstrlen(CommandContext& ctx) {
  HashValue* h;
  if (!LookupForRead(ctx, ctx.argv[1], &h)) return;
  char scratch[24];
  std::string_view v;
  ctx.reply.Integer(h != nullptr && h->GetView(ctx.argv[2], scratch, &v) ? static_cast<int64_t>(v.size()) : 0);
}

void CmdHexists(CommandContext& ctx) {
  HashValue* h;
  if (LookupForRead(ctx, ctx.argv[1], &h)) ctx.reply.Integer(h != nullptr && h->Contains(ctx.argv[2]) ? 1 : 0);
}

// HKEYS / HVALS / HGETALL: the whole hash, in the encoding's order.
void ReplyWhole(CommandContext& ctx, bool fields, bool values) {
  HashValue* h;
  if (!LookupForRead(ctx, ctx.argv[1], &h)) return;
  const int64_t n = h ? static_cast<int64_t>(h->size()) : 0;
  if (fields && values) {
    ctx.reply.MapHeader(n);
  } else {
    ctx.reply.ArrayHeader(n);
  }
  if (h == nullptr) return;
  h->ForEach([&](std::string_view f, std::string_view v) {
    if (fields) ctx.reply.Bulk(f);
    if (values) ctx.reply.Bulk(v);
  });
}

void CmdHkeys(CommandContext& ctx) { ReplyWhole(ctx, true, false); }
void CmdHvals(CommandContext& ctx) { ReplyWhole(ctx, false, true); }
void CmdHgetall(CommandContext& ctx) { ReplyWhole(ctx, true, true); }

void CmdHincrby(CommandContext& ctx) {
  int64_t delta;
  if (!ParseInt(ctx, ctx.argv[3], &delta)) return;
  core::OpResult<int64_t> r = OpHincrby(OpArgsOf(ctx), ctx.argv[1], ctx.argv[2], delta);
  if (r.status() == core::OpStatus::kNotInteger) return ctx.reply.Error("ERR hash value is not an integer");
  if (!r.ok()) return ReplyOpError(ctx, r.status());
  ctx.reply.Integer(r.value());
}

void CmdHincrbyfloat(CommandContext& ctx) {
  long double delta;
  if (!ParseFloat(ctx, ctx.argv[3], &delta)) return;
  if (std::isnan(delta) || std::isinf(delta)) {
    ctx.reply.Error("ERR value is NaN or Infinity");
    return;
  }
  core::OpResult<std::string> r = OpHincrbyfloat(OpArgsOf(ctx), ctx.argv[1], ctx.argv[2], delta);
  if (r.status() == core::OpStatus::kNotFloat) return ctx.reply.Error("ERR hash value is not a float");
  if (!r.ok()) return ReplyOpError(ctx, r.status());
  ctx.reply.Bulk(r.value());
}

// One pair of an HRANDFIELD reply: RESP3 nests pairs, RESP2 flattens them.
void ReplyPair(CommandContext& ctx, std::string_view f, std::string_view v, bool withvalues) {
  if (withvalues && ctx.reply.resp() >= 3) ctx.reply.ArrayHeader(2);
  ctx.reply.Bulk(f);
  if (withvalues) ctx.reply.Bulk(v);
}

void RandomFieldsWithCount(CommandContext& ctx, int64_t l, bool withvalues) {
  HashValue* h;
  if (!LookupForRead(ctx, ctx.argv[1], &h)) return;
  if (h == nullptr || l == 0) {
    ctx.reply.ArrayHeader(0);
    return;
  }
  absl::BitGen& rng = ctx.keyspace.rng();
  const size_t size = h->size();
  const bool unique = l > 0;
  const uint64_t count = unique ? static_cast<uint64_t>(l) : static_cast<uint64_t>(-l);
  std::string f, v;
  const auto header = [&](uint64_t n) {
    ctx.reply.ArrayHeader(static_cast<int64_t>(withvalues && ctx.reply.resp() == 2 ? n * 2 : n));
  };
  // Repeats allowed (negative count), or a single field: independent draws.
  if (!unique || count == 1) {
    header(count);
    for (uint64_t i = 0; i < count; ++i) {
      h->RandomPair(rng, &f, &v);
      ReplyPair(ctx, f, v, withvalues);
    }
    return;
  }
  // Distinct fields, at most the whole hash.
  if (count >= size) {
    header(size);
    h->ForEach([&](std::string_view field, std::string_view value) { ReplyPair(ctx, field, value, withvalues); });
    return;
  }
  // Distinct fields, fewer than the hash holds: draw without repeats.
  using Pair = std::pair<std::string, std::string>;
  const std::vector<Pair> picked = PickDistinct<Pair>(
      count, size, rng,
      [&](std::vector<Pair>* out) {
        h->ForEach([&](std::string_view field, std::string_view value) { out->emplace_back(field, value); });
      },
      [&] {
        h->RandomPair(rng, &f, &v);
        return Pair(f, v);
      },
      [](const Pair& p) -> std::string_view { return p.first; });
  header(count);
  for (const auto& [field, value] : picked) ReplyPair(ctx, field, value, withvalues);
}

// HRANDFIELD key [count [WITHVALUES]]
void CmdHrandfield(CommandContext& ctx) {
  if (ctx.argv.size() >= 3) {
    int64_t l;
    bool withvalues;
    if (!ParseRandomCountArgs(ctx, "WITHVALUES", &l, &withvalues)) return;
    RandomFieldsWithCount(ctx, l, withvalues);
    return;
  }
  HashValue* h;
  if (!LookupForRead(ctx, ctx.argv[1], &h)) return;
  if (h == nullptr) {
    ctx.reply.Null();
    return;
  }
  std::string f, v;
  h->RandomPair(ctx.keyspace.rng(), &f, &v);
  ctx.reply.Bulk(f);
}

// The pairs whose field matches, appended to *out.
auto PairTaker(const ScanOptions& opts, std::vector<std::string>* out) {
  return [&opts, out](std::string_view f, std::string_view v) {
    if (!opts.Matches(f)) return;
    out->emplace_back(f);
    out->emplace_back(v);
  };
}

// HSCAN key cursor [MATCH pattern] [COUNT count]
void CmdHscan(CommandContext& ctx) {
  uint64_t cursor;
  if (!ParseScanCursor(ctx, ctx.argv[2], &cursor)) return;
  HashValue* h;
  if (!LookupForRead(ctx, ctx.argv[1], &h)) return;
  if (h == nullptr) {  // Redis answers a missing key before looking at the options
    ReplyScan(ctx, 0, {});
    return;
  }
  ScanCollection(
      ctx, cursor, h->encoding() == HashValue::Encoding::kListpack, 2,
      [&](const ScanOptions& opts, std::vector<std::string>* out) { h->ForEach(PairTaker(opts, out)); },
      [&](uint64_t c, const ScanOptions& opts, std::vector<std::string>* out) {
        return h->ScanTable(c, PairTaker(opts, out));
      });
}

}  // namespace

void RegisterHashCommands(CommandTable& t) {
  using namespace cmd;
  constexpr const char* kWriteFast = "@write @hash @fast";
  constexpr const char* kReadFast = "@read @hash @fast";
  constexpr const char* kReadSlow = "@read @hash @slow";
  t.Add(Cmd("hset", -4, kWrite | kDenyOom | kFast, 1, 1, 1, kWriteFast, "hash", "Creates or modifies the value of a field in a hash.", "2.0.0", CmdHset));
  t.Add(Cmd("hmset", -4, kWrite | kDenyOom | kFast, 1, 1, 1, kWriteFast, "hash", "Sets the values of multiple fields.", "2.0.0", CmdHmset));
  t.Add(Cmd("hsetnx", 4, kWrite | kDenyOom | kFast, 1, 1, 1, kWriteFast, "hash", "Sets the value of a field in a hash only when the field doesn't exist.", "2.0.0", CmdHsetnx));
  t.Add(Cmd("hget", 3, kReadonly | kFast, 1, 1, 1, kReadFast, "hash", "Returns the value of a field in a hash.", "2.0.0", CmdHget));
  t.Add(Cmd("hmget", -3, kReadonly | kFast, 1, 1, 1, kReadFast, "hash", "Returns the values of all fields in a hash.", "2.0.0", CmdHmget));
  t.Add(Cmd("hdel", -3, kWrite | kFast, 1, 1, 1, kWriteFast, "hash", "Deletes one or more fields and their values from a hash. Deletes the hash if no fields remain.", "2.0.0", CmdHdel));
  t.Add(Cmd("hlen", 2, kReadonly | kFast, 1, 1, 1, kReadFast, "hash", "Returns the number of fields in a hash.", "2.0.0", CmdHlen));
  t.Add(Cmd("hstrlen", 3, kReadonly | kFast, 1, 1, 1, kReadFast, "hash", "Returns the length of the value of a field.", "3.2.0", CmdHstrlen));
  t.Add(Cmd("hexists", 3, kReadonly | kFast, 1, 1, 1, kReadFast, "hash", "Determines whether a field exists in a hash.", "2.0.0", CmdHexists));
  t.Add(Cmd("hkeys", 2, kReadonly, 1, 1, 1, kReadSlow, "hash", "Returns all fields in a hash.", "2.0.0", CmdHkeys));
  t.Add(Cmd("hvals", 2, kReadonly, 1, 1, 1, kReadSlow, "hash", "Returns all values in a hash.", "2.0.0", CmdHvals));
  t.Add(Cmd("hgetall", 2, kReadonly, 1, 1, 1, kReadSlow, "hash", "Returns all fields and values in a hash.", "2.0.0", CmdHgetall));
  t.Add(Cmd("hincrby", 4, kWrite | kDenyOom | kFast, 1, 1, 1, kWriteFast, "hash", "Increments the integer value of a field in a hash by a number. Uses 0 as initial value if the field doesn't exist.", "2.0.0", CmdHincrby));
  t.Add(Cmd("hincrbyfloat", 4, kWrite | kDenyOom | kFast, 1, 1, 1, kWriteFast, "hash", "Increments the floating point value of a field by a number. Uses 0 as initial value if the field doesn't exist.", "2.6.0", CmdHincrbyfloat));
  t.Add(Cmd("hrandfield", -2, kReadonly, 1, 1, 1, kReadSlow, "hash", "Returns one or more random fields from a hash.", "6.2.0", CmdHrandfield));
  t.Add(Cmd("hscan", -3, kReadonly, 1, 1, 1, kReadSlow, "hash", "Iterates over fields and values of a hash.", "2.8.0", CmdHscan));
}

}  // namespace ringkv::server
