// The set family: membership, random members, moves, and the set algebra
// (SINTER, SUNION, SDIFF and their STORE forms, SINTERCARD), SSCAN. Replies,
// errors, result encodings and propagation follow Redis 7.0's t_set.c.
#include <algorithm>
#include <string>
#include <vector>

#include "core/set_value.h"
#include "core/strings.h"
#include "server/command_table.h"
#include "server/commands/set_ops.h"
#include "server/commands/util.h"
#include "server/errors.h"

namespace ringkv::server {
namespace {

using core::SetValue;

void CmdSadd(CommandContext& ctx) {
  ReplyInteger(ctx, OpSadd(OpArgsOf(ctx), ctx.argv[1], ctx.argv.subspan(2)));
}

void CmdSrem(CommandContext& ctx) {
  ReplyInteger(ctx, OpSrem(OpArgsOf(ctx), ctx.argv[1], ctx.argv.subspan(2)));
}

void CmdScard(CommandContext& ctx) {
  SetValue* s;
  if (LookupForRead(ctx, ctx.argv[1], &s)) ctx.reply.Integer(s ? static_cast<int64_t>(s->size()) : 0);
}

void CmdSismember(CommandContext& ctx) {
  SetValue* s;
  if (LookupForRead(ctx, ctx.argv[1], &s)) ctx.reply.Integer(s != nullptr && s->Contains(ctx.argv[2]) ? 1 : 0);
}

void CmdSmismember(CommandContext& ctx) {
  SetValue* s;
  if (!LookupForRead(ctx, ctx.argv[1], &s)) return;
  ctx.reply.ArrayHeader(static_cast<int64_t>(ctx.argv.size() - 2));
  for (size_t i = 2; i < ctx.argv.size(); ++i) ctx.reply.Integer(s != nullptr && s->Contains(ctx.argv[i]) ? 1 : 0);
}

void ReplyMembers(CommandContext& ctx, const SetValue& s) {
  ctx.reply.SetHeader(static_cast<int64_t>(s.size()));
  s.ForEach([&](std::string_view m) { ctx.reply.Bulk(m); });
}

void CmdSmembers(CommandContext& ctx) {
  SetValue* s;
  if (!LookupForRead(ctx, ctx.argv[1], &s)) return;
  if (s == nullptr) {
    ctx.reply.SetHeader(0);
    return;
  }
  ReplyMembers(ctx, *s);
}

// SPOP key [count]. Propagated as SREM of what was popped (or DEL / UNLINK
// when the whole set went), so replicas and the AOF remove the same members.
void CmdSpop(CommandContext& ctx) {
  if (ctx.argv.size() > 3) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  const bool with_count = ctx.argv.size() == 3;
  int64_t count = 1;
  if (with_count) {
    if (!core::StringToInt64(ctx.argv[2], &count) || count < 0) {
      ctx.reply.Error("ERR value is out of range, must be positive");
      return;
    }
  }
  const auto reply_member = [&](std::string_view m) { ctx.reply.Bulk(m); };
  core::OpStatus status;
  if (with_count) {
    const auto header = [&](size_t n) { ctx.reply.SetHeader(static_cast<int64_t>(n)); };
    status = OpSpopCount(OpArgsOf(ctx), ctx.argv[1], static_cast<uint64_t>(count), header, reply_member).status();
  } else {
    status = OpSpop(OpArgsOf(ctx), ctx.argv[1], reply_member);
  }
  if (status == core::OpStatus::kNotFound) {
    if (with_count) {
      ctx.reply.SetHeader(0);
    } else {
      ctx.reply.Null();
    }
  } else if (status != core::OpStatus::kOk) {
    ReplyOpError(ctx, status);
  }
}

// SRANDMEMBER key [count]: a negative count allows repeats.
void CmdSrandmember(CommandContext& ctx) {
  if (ctx.argv.size() > 3) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  if (ctx.argv.size() == 2) {
    SetValue* s;
    if (!LookupForRead(ctx, ctx.argv[1], &s)) return;
    if (s == nullptr) {
      ctx.reply.Null();
    } else {
      ctx.reply.Bulk(s->RandomMember(ctx.keyspace.rng()));
    }
    return;
  }
  int64_t l;
  bool unused;  // SRANDMEMBER has no WITH option (argv has 3 entries here)
  if (!ParseRandomCountArgs(ctx, "", &l, &unused)) return;
  SetValue* s;
  if (!LookupForRead(ctx, ctx.argv[1], &s)) return;
  if (s == nullptr || l == 0) {
    ctx.reply.ArrayHeader(0);
    return;
  }
  absl::BitGen& rng = ctx.keyspace.rng();
  const size_t size = s->size();
  const uint64_t count = l > 0 ? static_cast<uint64_t>(l) : static_cast<uint64_t>(-l);
  if (l < 0 || count == 1) {
    ctx.reply.ArrayHeader(static_cast<int64_t>(count));
    for (uint64_t i = 0; i < count; ++i) ctx.reply.Bulk(s->RandomMember(rng));
    return;
  }
  if (count >= size) {
    ctx.reply.ArrayHeader(static_cast<int64_t>(size));
    s->ForEach([&](std::string_view m) { ctx.reply.Bulk(m); });
    return;
  }
  const std::vector<std::string> picked = PickDistinct<std::string>(
      count, size, rng, [&](std::vector<std::string>* out) { s->ForEach([&](std::string_view m) { out->emplace_back(m); }); },
      [&] { return s->RandomMember(rng); }, [](const std::string& m) -> std::string_view { return m; });
  ctx.reply.ArrayHeader(static_cast<int64_t>(count));
  for (const std::string& m : picked) ctx.reply.Bulk(m);
}

void CmdSmove(CommandContext& ctx) {
  core::OpResult<bool> r = OpSmove(OpArgsOf(ctx), ctx.argv[1], ctx.argv[2], ctx.argv[3]);
  if (r.status() == core::OpStatus::kNotFound) return ctx.reply.Integer(0);
  if (!r.ok()) return ReplyOpError(ctx, r.status());
  ctx.reply.Integer(r.value() ? 1 : 0);
}

void ReplyStrings(CommandContext& ctx, const std::vector<std::string>& members) {
  ctx.reply.SetHeader(static_cast<int64_t>(members.size()));
  for (const std::string& m : members) ctx.reply.Bulk(m);
}

void CmdSinter(CommandContext& ctx) {
  core::OpResult<std::vector<std::string>> r = OpSinter(OpArgsOf(ctx), ctx.argv.subspan(1), core::Access::kRead);
  if (!r.ok()) return ReplyOpError(ctx, r.status());
  ReplyStrings(ctx, r.value());
}

void CmdSinterstore(CommandContext& ctx) {
  ReplyInteger(ctx, OpSinterstore(OpArgsOf(ctx), ctx.argv[1], ctx.argv.subspan(2)));
}

// SINTERCARD numkeys key [key ...] [LIMIT limit]
void CmdSintercard(CommandContext& ctx) {
  int64_t numkeys;
  if (!core::StringToInt64(ctx.argv[1], &numkeys) || numkeys <= 0) {
    ctx.reply.Error("ERR numkeys should be greater than 0");
    return;
  }
  if (numkeys > static_cast<int64_t>(ctx.argv.size()) - 2) {
    ctx.reply.Error("ERR Number of keys can't be greater than number of args");
    return;
  }
  int64_t limit = 0;
  for (size_t i = 2 + static_cast<size_t>(numkeys); i < ctx.argv.size(); ++i) {
    if (Is(ctx.argv[i], "LIMIT") && i + 1 < ctx.argv.size()) {
      // Redis answers this one message for a non-integer limit too.
      if (!core::StringToInt64(ctx.argv[++i], &limit) || limit < 0) {
        ctx.reply.Error("ERR LIMIT can't be negative");
        return;
      }
    } else {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  }
  core::OpResult<std::vector<std::string>> r = OpSinter(OpArgsOf(ctx), ctx.argv.subspan(2, static_cast<size_t>(numkeys)),
                                                        core::Access::kRead, static_cast<size_t>(limit));
  if (!r.ok()) return ReplyOpError(ctx, r.status());
  ctx.reply.Integer(static_cast<int64_t>(r.value().size()));
}

void UnionDiff(CommandContext& ctx, bool diff, bool store) {
  if (store) {
    ReplyInteger(ctx, OpSunionOrDiffStore(OpArgsOf(ctx), ctx.argv[1], ctx.argv.subspan(2), diff));
    return;
  }
  core::OpResult<SetValue> r = OpSunionOrDiff(OpArgsOf(ctx), ctx.argv.subspan(1), diff, core::Access::kRead);
  if (!r.ok()) return ReplyOpError(ctx, r.status());
  ReplyMembers(ctx, r.value());
}

void CmdSunion(CommandContext& ctx) { UnionDiff(ctx, false, false); }
void CmdSunionstore(CommandContext& ctx) { UnionDiff(ctx, false, true); }
void CmdSdiff(CommandContext& ctx) { UnionDiff(ctx, true, false); }
void CmdSdiffstore(CommandContext& ctx) { UnionDiff(ctx, true, true); }

// SSCAN key cursor [MATCH pattern] [COUNT count]
void CmdSscan(CommandContext& ctx) {
  uint64_t cursor;
  if (!ParseScanCursor(ctx, ctx.argv[2], &cursor)) return;
  SetValue* s;
  if (!LookupForRead(ctx, ctx.argv[1], &s)) return;
  if (s == nullptr) {
    ReplyScan(ctx, 0, {});
    return;
  }
  auto taker = [](const ScanOptions& opts, std::vector<std::string>* out) {
    return [&opts, out](std::string_view m) {
      if (opts.Matches(m)) out->emplace_back(m);
    };
  };
  ScanCollection(
      ctx, cursor, s->encoding() == SetValue::Encoding::kIntset, 1,
      [&](const ScanOptions& opts, std::vector<std::string>* out) { s->ForEach(taker(opts, out)); },
      [&](uint64_t c, const ScanOptions& opts, std::vector<std::string>* out) {
        return s->ScanTable(c, taker(opts, out));
      });
}

}  // namespace

void RegisterSetCommands(CommandTable& t) {
  using namespace cmd;
  constexpr const char* kWriteFast = "@write @set @fast";
  constexpr const char* kWriteSlow = "@write @set @slow";
  constexpr const char* kReadFast = "@read @set @fast";
  constexpr const char* kReadSlow = "@read @set @slow";
  t.Add(Cmd("sadd", -3, kWrite | kDenyOom | kFast, 1, 1, 1, kWriteFast, "set", "Adds one or more members to a set. Creates the key if it doesn't exist.", "1.0.0", CmdSadd));
  t.Add(Cmd("srem", -3, kWrite | kFast, 1, 1, 1, kWriteFast, "set", "Removes one or more members from a set. Deletes the set if the last member was removed.", "1.0.0", CmdSrem));
  t.Add(Cmd("scard", 2, kReadonly | kFast, 1, 1, 1, kReadFast, "set", "Returns the number of members in a set.", "1.0.0", CmdScard));
  t.Add(Cmd("sismember", 3, kReadonly | kFast, 1, 1, 1, kReadFast, "set", "Determines whether a member belongs to a set.", "1.0.0", CmdSismember));
  t.Add(Cmd("smismember", -3, kReadonly | kFast, 1, 1, 1, kReadFast, "set", "Determines whether multiple members belong to a set.", "6.2.0", CmdSmismember));
  t.Add(Cmd("smembers", 2, kReadonly, 1, 1, 1, kReadSlow, "set", "Returns all members of a set.", "1.0.0", CmdSmembers));
  t.Add(Cmd("spop", -2, kWrite | kFast, 1, 1, 1, kWriteFast, "set", "Returns one or more random members from a set after removing them. Deletes the set if the last member was popped.", "1.0.0", CmdSpop));
  t.Add(Cmd("srandmember", -2, kReadonly, 1, 1, 1, kReadSlow, "set", "Get one or multiple random members from a set", "1.0.0", CmdSrandmember));
  t.Add(Cmd("smove", 4, kWrite | kFast, 1, 2, 1, kWriteFast, "set", "Moves a member from one set to another.", "1.0.0", CmdSmove));
  t.Add(Cmd("sinter", -2, kReadonly, 1, -1, 1, kReadSlow, "set", "Returns the intersect of multiple sets.", "1.0.0", CmdSinter));
  t.Add(Cmd("sinterstore", -3, kWrite | kDenyOom, 1, -1, 1, kWriteSlow, "set", "Stores the intersect of multiple sets in a key.", "1.0.0", CmdSinterstore));
  t.Add(NumKeysAt1(Cmd("sintercard", -3, kReadonly, 0, 0, 0, kReadSlow, "set", "Returns the number of members of the intersect of multiple sets.", "7.0.0", CmdSintercard)));
  t.Add(Cmd("sunion", -2, kReadonly, 1, -1, 1, kReadSlow, "set", "Returns the union of multiple sets.", "1.0.0", CmdSunion));
  t.Add(Cmd("sunionstore", -3, kWrite | kDenyOom, 1, -1, 1, kWriteSlow, "set", "Stores the union of multiple sets in a key.", "1.0.0", CmdSunionstore));
  t.Add(Cmd("sdiff", -2, kReadonly, 1, -1, 1, kReadSlow, "set", "Returns the difference of multiple sets.", "1.0.0", CmdSdiff));
  t.Add(Cmd("sdiffstore", -3, kWrite | kDenyOom, 1, -1, 1, kWriteSlow, "set", "Stores the difference of multiple sets in a key.", "1.0.0", CmdSdiffstore));
  t.Add(Cmd("sscan", -3, kReadonly, 1, 1, 1, kReadSlow, "set", "Iterates over members of a set.", "2.8.0", CmdSscan));
}

}  // namespace ringkv::server
