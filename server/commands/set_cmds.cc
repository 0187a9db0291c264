// The set family: membership, random members, moves, and the set algebra
// (SINTER, SUNION, SDIFF and their STORE forms, SINTERCARD), SSCAN. Replies,
// errors, result encodings and propagation follow Redis 7.0's t_set.c.
#include <algorithm>
#include <string>
#include <vector>

#include "core/set_value.h"
#include "core/strings.h"
#include "server/command_table.h"
#include "server/commands/util.h"
#include "server/errors.h"
#include "server/server.h"

namespace ringkv::server {
namespace {

using core::SetValue;
using core::ValueType;

const core::SetLimits& Limits(CommandContext& ctx) { return ctx.server.keyspace().limits().set; }

// The set at `key` for reading: nullptr when missing (nothing replied) or
// of another type (WRONGTYPE replied, *failed set).
SetValue* SetForRead(CommandContext& ctx, std::string_view key, bool* failed) {
  core::Entry* e = ctx.server.db(ctx.client).FindForRead(key, ctx.now_ms);
  *failed = !CheckType(ctx, e, ValueType::kSet);
  return e != nullptr && !*failed ? &e->value.set() : nullptr;
}

// As SetForRead for a write lookup (no hit/miss statistics).
SetValue* SetForWrite(CommandContext& ctx, std::string_view key, bool* failed) {
  core::Entry* e = ctx.server.db(ctx.client).Find(key, ctx.now_ms);
  *failed = !CheckType(ctx, e, ValueType::kSet);
  return e != nullptr && !*failed ? &e->value.set() : nullptr;
}

// Creates `key` holding an empty set in the encoding Redis picks for a set
// whose first member is `first`.
SetValue* CreateSet(CommandContext& ctx, std::string_view key, std::string_view first) {
  bool created;
  core::Entry* e = ctx.server.db(ctx.client).FindOrInsert(key, ctx.now_ms, &created);
  e->value = core::Value(SetValue::ForFirstMember(first));
  return &e->value.set();
}

// Deletes `key` when its set became empty, with the "del" event.
void DeleteIfEmpty(CommandContext& ctx, std::string_view key, const SetValue& s) {
  if (!s.empty()) return;
  const std::string k(key);  // `key` may alias the erased entry
  ctx.server.db(ctx.client).Erase(k);
  KeyEvent(ctx, notify::kGeneric, "del", k);
}

void CmdSadd(CommandContext& ctx) {
  bool failed;
  SetValue* s = SetForWrite(ctx, ctx.argv[1], &failed);
  if (failed) return;
  if (s == nullptr) s = CreateSet(ctx, ctx.argv[1], ctx.argv[2]);
  int64_t added = 0;
  for (size_t i = 2; i < ctx.argv.size(); ++i) added += s->Add(ctx.argv[i], Limits(ctx));
  ctx.server.stats().dirty += static_cast<uint64_t>(added);
  if (added > 0) KeyEvent(ctx, notify::kSet, "sadd", ctx.argv[1]);
  ctx.reply.Integer(added);
}

void CmdSrem(CommandContext& ctx) {
  bool failed;
  SetValue* s = SetForWrite(ctx, ctx.argv[1], &failed);
  if (failed) return;
  int64_t removed = 0;
  if (s != nullptr) {
    for (size_t i = 2; i < ctx.argv.size() && !s->empty(); ++i) removed += s->Remove(ctx.argv[i]);
    if (removed > 0) KeyEvent(ctx, notify::kSet, "srem", ctx.argv[1]);
    DeleteIfEmpty(ctx, ctx.argv[1], *s);
  }
  ctx.server.stats().dirty += static_cast<uint64_t>(removed);
  ctx.reply.Integer(removed);
}

void CmdScard(CommandContext& ctx) {
  bool failed;
  SetValue* s = SetForRead(ctx, ctx.argv[1], &failed);
  if (!failed) ctx.reply.Integer(s ? static_cast<int64_t>(s->size()) : 0);
}

void CmdSismember(CommandContext& ctx) {
  bool failed;
  SetValue* s = SetForRead(ctx, ctx.argv[1], &failed);
  if (!failed) ctx.reply.Integer(s != nullptr && s->Contains(ctx.argv[2]) ? 1 : 0);
}

void CmdSmismember(CommandContext& ctx) {
  bool failed;
  SetValue* s = SetForRead(ctx, ctx.argv[1], &failed);
  if (failed) return;
  ctx.reply.ArrayHeader(static_cast<int64_t>(ctx.argv.size() - 2));
  for (size_t i = 2; i < ctx.argv.size(); ++i) ctx.reply.Integer(s != nullptr && s->Contains(ctx.argv[i]) ? 1 : 0);
}

void ReplyMembers(CommandContext& ctx, const SetValue& s) {
  ctx.reply.SetHeader(static_cast<int64_t>(s.size()));
  s.ForEach([&](std::string_view m) { ctx.reply.Bulk(m); });
}

void CmdSmembers(CommandContext& ctx) {
  bool failed;
  SetValue* s = SetForRead(ctx, ctx.argv[1], &failed);
  if (failed) return;
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
  bool failed;
  SetValue* s = SetForWrite(ctx, ctx.argv[1], &failed);
  if (failed) return;
  if (s == nullptr || (with_count && count == 0)) {
    if (with_count) {
      ctx.reply.SetHeader(0);
    } else {
      ctx.reply.Null();
    }
    return;
  }
  const std::string key(ctx.argv[1]);
  if (with_count && static_cast<uint64_t>(count) >= s->size()) {
    ReplyMembers(ctx, *s);
    ctx.server.stats().dirty += s->size();
    KeyEvent(ctx, notify::kSet, "spop", key);
    ctx.server.db(ctx.client).Erase(key);
    KeyEvent(ctx, notify::kGeneric, "del", key);
    ctx.server.PropagateAs({ctx.server.lazy_server_del() ? "UNLINK" : "DEL", key});
    return;
  }
  absl::BitGen& rng = ctx.server.keyspace().rng();
  std::vector<std::string> srem = {"SREM", key};
  if (with_count) ctx.reply.SetHeader(count);
  for (int64_t i = 0; i < count; ++i) {
    srem.push_back(s->PopRandom(rng));
    ctx.reply.Bulk(srem.back());
  }
  ctx.server.stats().dirty += static_cast<uint64_t>(count);
  KeyEvent(ctx, notify::kSet, "spop", key);
  DeleteIfEmpty(ctx, key, *s);
  ctx.server.PropagateAs(std::move(srem));
}

// SRANDMEMBER key [count]: a negative count allows repeats.
void CmdSrandmember(CommandContext& ctx) {
  if (ctx.argv.size() > 3) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  if (ctx.argv.size() == 2) {
    bool failed;
    SetValue* s = SetForRead(ctx, ctx.argv[1], &failed);
    if (failed) return;
    if (s == nullptr) {
      ctx.reply.Null();
    } else {
      ctx.reply.Bulk(s->RandomMember(ctx.server.keyspace().rng()));
    }
    return;
  }
  int64_t l;
  bool unused;  // SRANDMEMBER has no WITH option (argv has 3 entries here)
  if (!ParseRandomCountArgs(ctx, "", &l, &unused)) return;
  bool failed;
  SetValue* s = SetForRead(ctx, ctx.argv[1], &failed);
  if (failed) return;
  if (s == nullptr || l == 0) {
    ctx.reply.ArrayHeader(0);
    return;
  }
  absl::BitGen& rng = ctx.server.keyspace().rng();
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
  // A missing source answers 0 before any type check, as in Redis.
  core::Database& db = ctx.server.db(ctx.client);
  core::Entry* src_entry = db.Find(ctx.argv[1], ctx.now_ms);
  core::Entry* dst_entry = db.Find(ctx.argv[2], ctx.now_ms);
  if (src_entry == nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  if (!CheckType(ctx, src_entry, ValueType::kSet) || !CheckType(ctx, dst_entry, ValueType::kSet)) return;
  SetValue* src = &src_entry->value.set();
  SetValue* dst = dst_entry ? &dst_entry->value.set() : nullptr;
  const std::string_view member = ctx.argv[3];
  if (src == dst) {  // same key: nothing moves
    ctx.reply.Integer(src->Contains(member) ? 1 : 0);
    return;
  }
  if (!src->Remove(member)) {
    ctx.reply.Integer(0);
    return;
  }
  KeyEvent(ctx, notify::kSet, "srem", ctx.argv[1]);
  DeleteIfEmpty(ctx, ctx.argv[1], *src);
  if (dst == nullptr) dst = CreateSet(ctx, ctx.argv[2], member);
  ++ctx.server.stats().dirty;
  if (dst->Add(member, Limits(ctx))) {
    ++ctx.server.stats().dirty;
    KeyEvent(ctx, notify::kSet, "sadd", ctx.argv[2]);
  }
  ctx.reply.Integer(1);
}

// The operands of a set-algebra command, looked up as Redis does.
struct Operands {
  std::vector<const SetValue*> sets;  // nullptr: a missing key (empty set)
  bool any_missing = false;
};

// Looks up every key in order (a missing one does not stop the type checks
// of the others, as in Redis). False when WRONGTYPE was replied.
bool LookupOperands(CommandContext& ctx, Argv keys, bool for_write, Operands* out) {
  for (std::string_view key : keys) {
    bool failed;
    SetValue* s = for_write ? SetForWrite(ctx, key, &failed) : SetForRead(ctx, key, &failed);
    if (failed) return false;
    out->sets.push_back(s);
    if (s == nullptr) out->any_missing = true;
  }
  return true;
}

// The members of the intersection, in the iteration order of the smallest
// set; stops after `limit` members (0: no limit).
std::vector<std::string> Intersect(std::vector<const SetValue*> sets, size_t limit) {
  std::vector<std::string> out;
  if (sets.empty()) return out;
  std::stable_sort(sets.begin(), sets.end(), [](const SetValue* a, const SetValue* b) { return a->size() < b->size(); });
  sets[0]->ForEach([&](std::string_view m) {
    if (limit != 0 && out.size() >= limit) return;
    for (size_t i = 1; i < sets.size(); ++i) {
      if (sets[i] != sets[0] && !sets[i]->Contains(m)) return;
    }
    out.emplace_back(m);
  });
  return out;
}

// A union or difference built into a fresh set, which starts as an intset
// as Redis's does -- so results of integers come out ascending, as there.
SetValue UnionOrDiff(const std::vector<const SetValue*>& sets, bool diff, const core::SetLimits& limits) {
  SetValue result;
  if (!diff) {
    for (const SetValue* s : sets) {
      if (s != nullptr) s->ForEach([&](std::string_view m) { result.Add(m, limits); });
    }
    return result;
  }
  if (sets.empty() || sets[0] == nullptr) return result;
  sets[0]->ForEach([&](std::string_view m) {
    for (size_t i = 1; i < sets.size(); ++i) {
      if (sets[i] == sets[0] || (sets[i] != nullptr && sets[i]->Contains(m))) return;
    }
    result.Add(m, limits);
  });
  return result;
}

// Stores a computed set at `dst` (or deletes `dst` when it is empty) and
// replies with its size.
void StoreResult(CommandContext& ctx, std::string_view dst, SetValue result) {
  const size_t n = result.size();
  ctx.reply.Integer(StoreCollection(ctx, dst, core::Value(std::move(result)), n, notify::kSet));
}

SetValue FromMembers(const std::vector<std::string>& members, const core::SetLimits& limits) {
  SetValue set;
  for (const std::string& m : members) set.Add(m, limits);
  return set;
}

void CmdSinter(CommandContext& ctx) {
  Operands ops;
  if (!LookupOperands(ctx, ctx.argv.subspan(1), false, &ops)) return;
  if (ops.any_missing) {
    ctx.reply.SetHeader(0);
    return;
  }
  const std::vector<std::string> members = Intersect(ops.sets, 0);
  ctx.reply.SetHeader(static_cast<int64_t>(members.size()));
  for (const std::string& m : members) ctx.reply.Bulk(m);
}

void CmdSinterstore(CommandContext& ctx) {
  Operands ops;
  if (!LookupOperands(ctx, ctx.argv.subspan(2), true, &ops)) return;
  std::vector<std::string> members;
  if (!ops.any_missing) members = Intersect(ops.sets, 0);
  StoreResult(ctx, ctx.argv[1], FromMembers(members, Limits(ctx)));
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
  Operands ops;
  if (!LookupOperands(ctx, ctx.argv.subspan(2, static_cast<size_t>(numkeys)), false, &ops)) return;
  if (ops.any_missing) {
    ctx.reply.Integer(0);
    return;
  }
  ctx.reply.Integer(static_cast<int64_t>(Intersect(ops.sets, static_cast<size_t>(limit)).size()));
}

void UnionDiff(CommandContext& ctx, bool diff, bool store) {
  Operands ops;
  if (!LookupOperands(ctx, ctx.argv.subspan(store ? 2 : 1), store, &ops)) return;
  SetValue result = UnionOrDiff(ops.sets, diff, Limits(ctx));
  if (store) {
    StoreResult(ctx, ctx.argv[1], std::move(result));
    return;
  }
  ReplyMembers(ctx, result);
}

void CmdSunion(CommandContext& ctx) { UnionDiff(ctx, false, false); }
void CmdSunionstore(CommandContext& ctx) { UnionDiff(ctx, false, true); }
void CmdSdiff(CommandContext& ctx) { UnionDiff(ctx, true, false); }
void CmdSdiffstore(CommandContext& ctx) { UnionDiff(ctx, true, true); }

// SSCAN key cursor [MATCH pattern] [COUNT count]
void CmdSscan(CommandContext& ctx) {
  uint64_t cursor;
  if (!ParseScanCursor(ctx, ctx.argv[2], &cursor)) return;
  bool failed;
  SetValue* s = SetForRead(ctx, ctx.argv[1], &failed);
  if (failed) return;
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
