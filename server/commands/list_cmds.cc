// The list family: pushes and pops at both ends (with counts), LMPOP,
// indexes and ranges, LSET, LINSERT, LREM, LTRIM, LPOS, LMOVE and
// RPOPLPUSH. Replies, errors and propagation follow Redis 7.0's t_list.c.
// (The blocking forms belong to the blocking component.)
#include <string>
#include <vector>

#include "core/list_value.h"
#include "core/strings.h"
#include "server/command_table.h"
#include "server/commands/list_ops.h"
#include "server/commands/list_util.h"
#include "server/commands/util.h"
#include "server/errors.h"

namespace ringkv::server {

using core::ListValue;

namespace {

constexpr char kMustBePositive[] = "ERR value is out of range, must be positive";

// LPUSH / RPUSH / LPUSHX / RPUSHX
void Push(CommandContext& ctx, bool head, bool only_existing) {
  ReplyInteger(ctx, OpPush(OpArgsOf(ctx), ctx.argv[1], head, ctx.argv.subspan(2), only_existing));
}

void CmdLpush(CommandContext& ctx) { Push(ctx, true, false); }
void CmdRpush(CommandContext& ctx) { Push(ctx, false, false); }
void CmdLpushx(CommandContext& ctx) { Push(ctx, true, true); }
void CmdRpushx(CommandContext& ctx) { Push(ctx, false, true); }

// LPOP / RPOP key [count]
void ListPop(CommandContext& ctx, bool head) {
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
  core::OpStatus status;
  if (has_count) {
    status = OpPopCount(
                 OpArgsOf(ctx), ctx.argv[1], head, static_cast<uint64_t>(count),
                 [&](size_t n) { ctx.reply.ArrayHeader(static_cast<int64_t>(n)); },
                 [&](std::string_view v) { ctx.reply.Bulk(v); })
                 .status();
  } else {
    core::OpResult<std::string> r = OpPop(OpArgsOf(ctx), ctx.argv[1], head);
    if (r.ok()) ctx.reply.Bulk(r.value());
    status = r.status();
  }
  if (status == core::OpStatus::kNotFound) {
    if (has_count) {
      ctx.reply.NullArray();
    } else {
      ctx.reply.Null();
    }
  } else if (status != core::OpStatus::kOk) {
    ReplyOpError(ctx, status);
  }
}

void CmdLpop(CommandContext& ctx) { ListPop(ctx, true); }
void CmdRpop(CommandContext& ctx) { ListPop(ctx, false); }

// LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count]: pops from the first
// non-empty list; propagated as LPOP/RPOP of that key with the count.
void CmdLmpop(CommandContext& ctx) {
  MpopArgs args;
  if (!ParseMpopArgs(ctx, 1, "LEFT", "RIGHT", &args)) return;
  if (!ListMpopFirst(ctx, args)) ctx.reply.NullArray();
}

void CmdLlen(CommandContext& ctx) {
  ListValue* l;
  if (LookupForRead(ctx, ctx.argv[1], &l)) ctx.reply.Integer(l ? static_cast<int64_t>(l->size()) : 0);
}

void CmdLrange(CommandContext& ctx) {
  int64_t start, end;
  if (!ParseInt(ctx, ctx.argv[2], &start) || !ParseInt(ctx, ctx.argv[3], &end)) return;
  ListValue* l;
  if (!LookupForRead(ctx, ctx.argv[1], &l)) return;
  if (l == nullptr || !ClipListRange(static_cast<int64_t>(l->size()), &start, &end)) {
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
  ListValue* l;
  if (!LookupForRead(ctx, ctx.argv[1], &l)) return;
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
  const core::OpStatus status = OpLset(OpArgsOf(ctx), ctx.argv[1], ctx.argv[2], ctx.argv[3]);
  if (status != core::OpStatus::kOk) return ReplyOpError(ctx, status);
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
  ReplyInteger(ctx, OpLinsert(OpArgsOf(ctx), ctx.argv[1], after, ctx.argv[3], ctx.argv[4]));
}

void CmdLrem(CommandContext& ctx) {
  int64_t count;
  if (!ParseInt(ctx, ctx.argv[2], &count)) return;
  ReplyInteger(ctx, OpLrem(OpArgsOf(ctx), ctx.argv[1], count, ctx.argv[3]));
}

void CmdLtrim(CommandContext& ctx) {
  int64_t start, end;
  if (!ParseInt(ctx, ctx.argv[2], &start) || !ParseInt(ctx, ctx.argv[3], &end)) return;
  const core::OpStatus status = OpLtrim(OpArgsOf(ctx), ctx.argv[1], start, end);
  if (status != core::OpStatus::kOk) return ReplyOpError(ctx, status);
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
  ListValue* l;
  if (!LookupForRead(ctx, ctx.argv[1], &l)) return;
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
  core::OpResult<size_t> r = OpMpop(
      OpArgsOf(ctx), args.keys, args.first_end, static_cast<uint64_t>(args.count),
      [&](std::string_view key, size_t n) {
        ctx.reply.ArrayHeader(2);
        ctx.reply.Bulk(key);
        ctx.reply.ArrayHeader(static_cast<int64_t>(n));
      },
      [&](std::string_view v) { ctx.reply.Bulk(v); });
  if (r.status() == core::OpStatus::kNotFound) return false;
  if (!r.ok()) ReplyOpError(ctx, r.status());
  return true;
}

void ListMove(CommandContext& ctx, bool from_head, bool to_head, MoveForm form) {
  core::OpResult<std::string> r = OpLmove(OpArgsOf(ctx), ctx.argv[1], ctx.argv[2], from_head, to_head, form);
  if (r.status() == core::OpStatus::kNotFound) return ctx.reply.Null();
  if (!r.ok()) return ReplyOpError(ctx, r.status());
  ctx.reply.Bulk(r.value());
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
  ListMove(ctx, from_head, to_head, MoveForm::kAsIs);
}

void CmdRpoplpush(CommandContext& ctx) { ListMove(ctx, false, true, MoveForm::kAsIs); }

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
  t.Add(NumKeysAt1(Cmd("lmpop", -4, kWrite, 0, 0, 0, kWriteSlow, "list", "Returns multiple elements from a list after removing them. Deletes the list if the last element was popped.", "7.0.0", CmdLmpop)));
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
