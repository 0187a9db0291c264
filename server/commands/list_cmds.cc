// The list family: pushes and pops at both ends (with counts), LMPOP,
// indexes and ranges, LSET, LINSERT, LREM, LTRIM, LPOS, LMOVE and
// RPOPLPUSH. Replies, errors and propagation follow Redis 7.0's t_list.c.
// (The blocking forms belong to the blocking component.)
#include <string>
#include <vector>

#include "core/list_value.h"
#include "core/strings.h"
#include "server/command_table.h"
#include "server/commands/list_util.h"
#include "server/commands/util.h"
#include "server/errors.h"
#include "server/server.h"

namespace ringkv::server {

using core::ListValue;
using core::ValueType;

ListValue* ListLookup(CommandContext& ctx, std::string_view key, bool for_read, bool* failed) {
  core::Database& db = ctx.server.db(ctx.client);
  core::Entry* e = for_read ? db.FindForRead(key, ctx.now_ms) : db.Find(key, ctx.now_ms);
  *failed = !CheckType(ctx, e, ValueType::kList);
  return e != nullptr && !*failed ? &e->value.list() : nullptr;
}

ListValue* ListCreate(CommandContext& ctx, std::string_view key) {
  bool created;
  core::Entry* e = ctx.server.db(ctx.client).FindOrInsert(key, ctx.now_ms, &created);
  e->value = core::Value(std::make_unique<ListValue>(ctx.server.keyspace().limits().list));
  return &e->value.list();
}

void ListDeleteIfEmpty(CommandContext& ctx, std::string_view key, const ListValue& l) {
  if (!l.empty()) return;
  const std::string k(key);  // `key` may alias the erased entry
  ctx.server.db(ctx.client).Erase(k);
  KeyEvent(ctx, notify::kGeneric, "del", k);
}

namespace {

constexpr char kMustBePositive[] = "ERR value is out of range, must be positive";

void DeleteIfEmpty(CommandContext& ctx, std::string_view key, const ListValue& l) { ListDeleteIfEmpty(ctx, key, l); }

// LPUSH / RPUSH / LPUSHX / RPUSHX
void Push(CommandContext& ctx, bool head, bool only_existing) {
  bool failed;
  ListValue* l = ListLookup(ctx, ctx.argv[1], false, &failed);
  if (failed) return;
  if (l == nullptr) {
    if (only_existing) {
      ctx.reply.Integer(0);
      return;
    }
    l = ListCreate(ctx, ctx.argv[1]);
  }
  for (size_t i = 2; i < ctx.argv.size(); ++i) l->Push(head, ctx.argv[i]);
  ctx.server.stats().dirty += ctx.argv.size() - 2;
  KeyEvent(ctx, notify::kList, head ? "lpush" : "rpush", ctx.argv[1]);
  ctx.reply.Integer(static_cast<int64_t>(l->size()));
}

void CmdLpush(CommandContext& ctx) { Push(ctx, true, false); }
void CmdRpush(CommandContext& ctx) { Push(ctx, false, false); }
void CmdLpushx(CommandContext& ctx) { Push(ctx, true, true); }
void CmdRpushx(CommandContext& ctx) { Push(ctx, false, true); }

}  // namespace

std::string ListPopOne(CommandContext& ctx, std::string_view key, ListValue& l, bool head) {
  std::string v;
  l.Pop(head, &v);
  ++ctx.server.stats().dirty;
  KeyEvent(ctx, notify::kList, head ? "lpop" : "rpop", key);
  return v;
}

void ListPopCountAndReply(CommandContext& ctx, std::string_view key, ListValue& l, int64_t count, bool head) {
  const size_t n = std::min<uint64_t>(static_cast<uint64_t>(count), l.size());
  ctx.reply.ArrayHeader(static_cast<int64_t>(n));
  std::string v;
  for (size_t i = 0; i < n; ++i) {
    l.Pop(head, &v);
    ctx.reply.Bulk(v);
  }
  ctx.server.stats().dirty += n;
  if (n > 0) KeyEvent(ctx, notify::kList, head ? "lpop" : "rpop", key);
  DeleteIfEmpty(ctx, key, l);
}

namespace {

// LPOP / RPOP key [count]
void Pop(CommandContext& ctx, bool head) {
  if (ctx.argv.size() > 3) {
    ctx.reply.Error(StrCat("ERR wrong number of arguments for '", AsciiLower(ctx.argv[0]), "' command"));
    return;
  }
  const bool has_count = ctx.argv.size() == 3;
  int64_t count = 1;
  if (has_count && (!core::StringToInt64(ctx.argv[2], &count) || count < 0)) {
    ctx.reply.Error(kMustBePositive);
    return;
  }
  bool failed;
  ListValue* l = ListLookup(ctx, ctx.argv[1], false, &failed);
  if (failed) return;
  if (l == nullptr) {
    if (has_count) {
      ctx.reply.NullArray();
    } else {
      ctx.reply.Null();
    }
    return;
  }
  if (has_count) {
    ListPopCountAndReply(ctx, ctx.argv[1], *l, count, head);
    return;
  }
  ctx.reply.Bulk(ListPopOne(ctx, ctx.argv[1], *l, head));
  DeleteIfEmpty(ctx, ctx.argv[1], *l);
}

void CmdLpop(CommandContext& ctx) { Pop(ctx, true); }
void CmdRpop(CommandContext& ctx) { Pop(ctx, false); }

// LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count]: pops from the first
// non-empty list; propagated as LPOP/RPOP of that key with the count.
void CmdLmpop(CommandContext& ctx) {
  MpopArgs args;
  if (!ParseMpopArgs(ctx, 1, "LEFT", "RIGHT", &args)) return;
  if (!ListMpopFirst(ctx, args)) ctx.reply.NullArray();
}

void CmdLlen(CommandContext& ctx) {
  bool failed;
  ListValue* l = ListLookup(ctx, ctx.argv[1], true, &failed);
  if (!failed) ctx.reply.Integer(l ? static_cast<int64_t>(l->size()) : 0);
}

// Clips [start, end] as Redis's list ranges do; false when empty.
bool ClipRange(int64_t n, int64_t* start, int64_t* end) {
  if (*start < 0) *start += n;
  if (*end < 0) *end += n;
  if (*start < 0) *start = 0;
  if (*start > *end || *start >= n) return false;
  if (*end >= n) *end = n - 1;
  return true;
}

void CmdLrange(CommandContext& ctx) {
  int64_t start, end;
  if (!ParseInt(ctx, ctx.argv[2], &start) || !ParseInt(ctx, ctx.argv[3], &end)) return;
  bool failed;
  ListValue* l = ListLookup(ctx, ctx.argv[1], true, &failed);
  if (failed) return;
  if (l == nullptr || !ClipRange(static_cast<int64_t>(l->size()), &start, &end)) {
    ctx.reply.ArrayHeader(0);
    return;
  }
  // Streamed from the nodes into the reply: no copy per element.
  size_t left = static_cast<size_t>(end - start + 1);
  ctx.reply.ArrayHeader(static_cast<int64_t>(left));
  l->Walk(static_cast<size_t>(start), false, [&](std::string_view v) {
    ctx.reply.Bulk(v);
    return --left > 0;
  });
}

// LINDEX key index. As in Redis, the key is looked up first: a missing key
// answers null and another type WRONGTYPE whatever the index says.
void CmdLindex(CommandContext& ctx) {
  bool failed;
  ListValue* l = ListLookup(ctx, ctx.argv[1], true, &failed);
  if (failed) return;
  if (l == nullptr) {
    ctx.reply.Null();
    return;
  }
  int64_t index;
  if (!ParseInt(ctx, ctx.argv[2], &index)) return;
  std::string v;
  if (!l->Index(index, &v)) {
    ctx.reply.Null();
    return;
  }
  ctx.reply.Bulk(v);
}

void CmdLset(CommandContext& ctx) {
  int64_t index;
  bool failed;
  ListValue* l = ListLookup(ctx, ctx.argv[1], false, &failed);
  if (failed) return;
  if (l == nullptr) {
    ctx.reply.Error(errors::kNoSuchKey);
    return;
  }
  if (!ParseInt(ctx, ctx.argv[2], &index)) return;
  if (!l->Set(index, ctx.argv[3])) {
    ctx.reply.Error("ERR index out of range");
    return;
  }
  ++ctx.server.stats().dirty;
  KeyEvent(ctx, notify::kList, "lset", ctx.argv[1]);
  ctx.reply.Ok();
}

// LINSERT key BEFORE|AFTER pivot element
void CmdLinsert(CommandContext& ctx) {
  bool after;
  if (Is(ctx.argv[2], "AFTER")) {
    after = true;
  } else if (Is(ctx.argv[2], "BEFORE")) {
    after = false;
  } else {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  bool failed;
  ListValue* l = ListLookup(ctx, ctx.argv[1], false, &failed);
  if (failed) return;
  if (l == nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  if (!l->Insert(ctx.argv[3], ctx.argv[4], after)) {
    ctx.reply.Integer(-1);
    return;
  }
  ++ctx.server.stats().dirty;
  KeyEvent(ctx, notify::kList, "linsert", ctx.argv[1]);
  ctx.reply.Integer(static_cast<int64_t>(l->size()));
}

void CmdLrem(CommandContext& ctx) {
  int64_t count;
  if (!ParseInt(ctx, ctx.argv[2], &count)) return;
  bool failed;
  ListValue* l = ListLookup(ctx, ctx.argv[1], false, &failed);
  if (failed) return;
  if (l == nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  const size_t removed = l->Remove(ctx.argv[3], count);
  ctx.server.stats().dirty += removed;
  if (removed > 0) KeyEvent(ctx, notify::kList, "lrem", ctx.argv[1]);
  DeleteIfEmpty(ctx, ctx.argv[1], *l);
  ctx.reply.Integer(static_cast<int64_t>(removed));
}

void CmdLtrim(CommandContext& ctx) {
  int64_t start, end;
  if (!ParseInt(ctx, ctx.argv[2], &start) || !ParseInt(ctx, ctx.argv[3], &end)) return;
  bool failed;
  ListValue* l = ListLookup(ctx, ctx.argv[1], false, &failed);
  if (failed) return;
  if (l == nullptr) {
    ctx.reply.Ok();
    return;
  }
  const int64_t n = static_cast<int64_t>(l->size());
  int64_t kept = 0;
  if (ClipRange(n, &start, &end)) {
    l->Keep(static_cast<size_t>(start), static_cast<size_t>(end));
    kept = end - start + 1;
  }
  ctx.server.stats().dirty += static_cast<uint64_t>(n - kept);
  KeyEvent(ctx, notify::kList, "ltrim", ctx.argv[1]);
  if (kept == 0) {  // nothing kept
    ctx.server.db(ctx.client).Erase(ctx.argv[1]);
    KeyEvent(ctx, notify::kGeneric, "del", ctx.argv[1]);
  }
  ctx.reply.Ok();
}

// LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len]
void CmdLpos(CommandContext& ctx) {
  int64_t rank = 1, count = -1, maxlen = 0;
  for (size_t i = 3; i < ctx.argv.size(); i += 2) {
    std::string_view opt = ctx.argv[i];
    if (i + 1 >= ctx.argv.size()) {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
    if (Is(opt, "RANK")) {
      if (!ParseInt(ctx, ctx.argv[i + 1], &rank)) return;
      if (rank == 0) {
        ctx.reply.Error(
            "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to "
            "start from the end of the list");
        return;
      }

    } else if (Is(opt, "COUNT")) {
      if (!core::StringToInt64(ctx.argv[i + 1], &count) || count < 0) {
        ctx.reply.Error("ERR COUNT can't be negative");
        return;
      }
    } else if (Is(opt, "MAXLEN")) {
      if (!core::StringToInt64(ctx.argv[i + 1], &maxlen) || maxlen < 0) {
        ctx.reply.Error("ERR MAXLEN can't be negative");
        return;
      }
    } else {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  }
  bool failed;
  ListValue* l = ListLookup(ctx, ctx.argv[1], true, &failed);
  if (failed) return;
  const bool want_array = count != -1;
  if (l == nullptr) {
    if (want_array) {
      ctx.reply.ArrayHeader(0);
    } else {
      ctx.reply.Null();
    }
    return;
  }
  const bool reverse = rank < 0;
  // Matches to pass over first. Redis 7.0's negation of INT64_MIN stays
  // negative, which there means "the first match from the tail": same here.
  int64_t skip = rank == INT64_MIN ? 0 : (reverse ? -rank : rank) - 1;
  const int64_t n = static_cast<int64_t>(l->size());
  std::vector<int64_t> found;
  int64_t index = 0;
  l->Walk(0, reverse, [&](std::string_view v) {
    if (maxlen != 0 && index >= maxlen) return false;
    if (v == ctx.argv[2]) {
      if (skip > 0) {
        --skip;
      } else {
        found.push_back(reverse ? n - 1 - index : index);
        if (!want_array || (count != 0 && static_cast<int64_t>(found.size()) == count)) return false;
      }
    }
    ++index;
    return true;
  });
  if (want_array) {
    ctx.reply.ArrayHeader(static_cast<int64_t>(found.size()));
    for (int64_t pos : found) ctx.reply.Integer(pos);
  } else if (found.empty()) {
    ctx.reply.Null();
  } else {
    ctx.reply.Integer(found[0]);
  }
}

}  // namespace

bool ListMpopFirst(CommandContext& ctx, const MpopArgs& args) {
  for (std::string_view k : args.keys) {
    bool failed;
    ListValue* l = ListLookup(ctx, k, false, &failed);
    if (failed) return true;
    if (l == nullptr) continue;
    const std::string key(k);
    ctx.reply.ArrayHeader(2);
    ctx.reply.Bulk(key);
    ListPopCountAndReply(ctx, key, *l, args.count, args.first_end);
    ctx.server.PropagateAs({args.first_end ? "LPOP" : "RPOP", key, StrCat(args.count)});
    return true;
  }
  return false;
}

void ListMove(CommandContext& ctx, bool from_head, bool to_head) {
  bool failed;
  ListValue* src = ListLookup(ctx, ctx.argv[1], false, &failed);
  if (failed) return;
  if (src == nullptr) {
    ctx.reply.Null();
    return;
  }
  ListValue* dst = ListLookup(ctx, ctx.argv[2], false, &failed);  // checked before anything moves
  if (failed) return;
  std::string v;
  src->Pop(from_head, &v);
  const std::string src_key(ctx.argv[1]);
  if (dst == nullptr) dst = ListCreate(ctx, ctx.argv[2]);
  dst->Push(to_head, v);
  KeyEvent(ctx, notify::kList, to_head ? "lpush" : "rpush", ctx.argv[2]);
  KeyEvent(ctx, notify::kList, from_head ? "lpop" : "rpop", src_key);
  if (src != dst) DeleteIfEmpty(ctx, src_key, *src);
  ++ctx.server.stats().dirty;
  ctx.reply.Bulk(v);
}

bool ParseListEnd(CommandContext& ctx, std::string_view arg, bool* head) {
  if (Is(arg, "LEFT")) {
    *head = true;
  } else if (Is(arg, "RIGHT")) {
    *head = false;
  } else {
    ctx.reply.Error(errors::kSyntax);
    return false;
  }
  return true;
}

namespace {

void CmdLmove(CommandContext& ctx) {
  bool from_head, to_head;
  if (!ParseListEnd(ctx, ctx.argv[3], &from_head) || !ParseListEnd(ctx, ctx.argv[4], &to_head)) return;
  ListMove(ctx, from_head, to_head);
}

void CmdRpoplpush(CommandContext& ctx) { ListMove(ctx, false, true); }

}  // namespace

void RegisterListCommands(CommandTable& t) {
  using namespace cmd;
  constexpr const char* kWriteFast = "@write @list @fast";
  constexpr const char* kWriteSlow = "@write @list @slow";
  constexpr const char* kReadFast = "@read @list @fast";
  constexpr const char* kReadSlow = "@read @list @slow";
  t.Add(Cmd("lpush", -3, kWrite | kDenyOom | kFast, 1, 1, 1, kWriteFast, "list", "Prepends one or more elements to a list. Creates the key if it doesn't exist.", "1.0.0", CmdLpush));
  t.Add(Cmd("rpush", -3, kWrite | kDenyOom | kFast, 1, 1, 1, kWriteFast, "list", "Appends one or more elements to a list. Creates the key if it doesn't exist.", "1.0.0", CmdRpush));
  t.Add(Cmd("lpushx", -3, kWrite | kDenyOom | kFast, 1, 1, 1, kWriteFast, "list", "Prepends one or more elements to a list only when the list exists.", "2.2.0", CmdLpushx));
  t.Add(Cmd("rpushx", -3, kWrite | kDenyOom | kFast, 1, 1, 1, kWriteFast, "list", "Appends an element to a list only when the list exists.", "2.2.0", CmdRpushx));
  t.Add(Cmd("lpop", -2, kWrite | kFast, 1, 1, 1, kWriteFast, "list", "Returns the first elements in a list after removing it. Deletes the list if the last element was popped.", "1.0.0", CmdLpop));
  t.Add(Cmd("rpop", -2, kWrite | kFast, 1, 1, 1, kWriteFast, "list", "Returns and removes the last elements of a list. Deletes the list if the last element was popped.", "1.0.0", CmdRpop));
  t.Add(Cmd("lmpop", -4, kWrite, 0, 0, 0, kWriteSlow, "list", "Returns multiple elements from a list after removing them. Deletes the list if the last element was popped.", "7.0.0", CmdLmpop));
  t.Add(Cmd("llen", 2, kReadonly | kFast, 1, 1, 1, kReadFast, "list", "Returns the length of a list.", "1.0.0", CmdLlen));
  t.Add(Cmd("lrange", 4, kReadonly, 1, 1, 1, kReadSlow, "list", "Returns a range of elements from a list.", "1.0.0", CmdLrange));
  t.Add(Cmd("lindex", 3, kReadonly, 1, 1, 1, kReadSlow, "list", "Returns an element from a list by its index.", "1.0.0", CmdLindex));
  t.Add(Cmd("lset", 4, kWrite | kDenyOom, 1, 1, 1, kWriteSlow, "list", "Sets the value of an element in a list by its index.", "1.0.0", CmdLset));
  t.Add(Cmd("linsert", 5, kWrite | kDenyOom, 1, 1, 1, kWriteSlow, "list", "Inserts an element before or after another element in a list.", "2.2.0", CmdLinsert));
  t.Add(Cmd("lrem", 4, kWrite, 1, 1, 1, kWriteSlow, "list", "Removes elements from a list. Deletes the list if the last element was removed.", "1.0.0", CmdLrem));
  t.Add(Cmd("ltrim", 4, kWrite, 1, 1, 1, kWriteSlow, "list", "Removes elements from both ends a list. Deletes the list if all elements were trimmed.", "1.0.0", CmdLtrim));
  t.Add(Cmd("lpos", -3, kReadonly, 1, 1, 1, kReadSlow, "list", "Returns the index of matching elements in a list.", "6.0.6", CmdLpos));
  t.Add(Cmd("lmove", 5, kWrite | kDenyOom, 1, 2, 1, kWriteSlow, "list", "Returns an element after popping it from one list and pushing it to another. Deletes the list if the last element was moved.", "6.2.0", CmdLmove));
  t.Add(Cmd("rpoplpush", 3, kWrite | kDenyOom, 1, 2, 1, kWriteSlow, "list", "Returns the last element of a list after removing and pushing it to another list. Deletes the list if the last element was popped.", "1.2.0", CmdRpoplpush));
}

}  // namespace ringkv::server
