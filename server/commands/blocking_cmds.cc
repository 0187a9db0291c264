// The blocking list and sorted-set commands: BLPOP BRPOP BLMOVE BRPOPLPUSH
// BLMPOP BZPOPMIN BZPOPMAX BZMPOP. Each serves at once when one of its keys
// holds data (propagated as the non-blocking form); otherwise it blocks the
// client through BlockOnKeys (commands/util.h) and runs again when a write makes a key
// ready. Inside EXEC they never block. Replies follow Redis 7.0.
#include <cmath>
#include <string>
#include <vector>

#include "core/string_ops.h"
#include "core/strings.h"
#include "server/clock.h"
#include "server/command_table.h"
#include "server/commands/list_util.h"
#include "server/commands/util.h"
#include "server/commands/zset_ops.h"
#include "server/commands/zset_util.h"

namespace ringkv::server {
namespace {

using core::ListValue;

// A timeout in seconds (a float, 0: forever) as Redis 7.0's
// getTimeoutFromObjectOrReply (rounded up to whole milliseconds as there):
// the absolute deadline in µs (UnixUs), 0 for none.
bool ParseBlockTimeout(CommandContext& ctx, std::string_view arg, int64_t* deadline_us) {
  long double seconds;
  if (!core::StringToLongDouble(arg, &seconds)) {
    ctx.reply.Error("ERR timeout is not a float or out of range");
    return false;
  }
  const long double ms = std::ceil(seconds * 1000.0L);
  // Redis converts to a long long: out of range (inf included) turns negative there.
  if (!(ms < 9.2e18L) || ms < 0) {
    ctx.reply.Error("ERR timeout is negative");
    return false;
  }
  const int64_t tval = static_cast<int64_t>(ms);
  // From the system clock, the one deadlines are checked against (the
  // command's cached clock may run a few ms off between cron re-anchors),
  // to the microsecond: the timeout is counted from now, not from the
  // start of the current millisecond.
  const int64_t now = UnixUs();
  *deadline_us = tval == 0 ? 0 : (tval > (INT64_MAX - now) / 1000 ? INT64_MAX : now + tval * 1000);
  return true;
}

std::vector<std::string> KeysOf(Argv keys) { return {keys.begin(), keys.end()}; }

// The keys a run looks at: all of `keys`, or, serving a blocked client,
// only the key that was ready -- Redis serves it from that key whatever its
// other keys hold now (one turned into another type is no error then).
Argv KeysToRead(const CommandContext& ctx, Argv keys) {
  return ctx.serving_blocked ? Argv(&ctx.served_key, 1) : keys;
}

// BLPOP / BRPOP key [key ...] timeout
void BlockingPop(CommandContext& ctx, bool head) {
  int64_t deadline;
  if (!ParseBlockTimeout(ctx, ctx.argv.back(), &deadline)) return;
  Argv keys = KeysToRead(ctx, ctx.argv.subspan(1, ctx.argv.size() - 2));
  core::OpResult<std::string> r = OpBlockingPop(OpArgsOf(ctx), keys, head, [&](std::string_view key) {
    ctx.reply.ArrayHeader(2);
    ctx.reply.Bulk(key);
  });
  if (r.ok()) return ctx.reply.Bulk(r.value());
  if (r.status() != core::OpStatus::kNotFound) return ReplyOpError(ctx, r.status());
  BlockOnKeys(ctx, BlockKind::kList, KeysOf(keys), deadline);
}

void CmdBlpop(CommandContext& ctx) { BlockingPop(ctx, true); }
void CmdBrpop(CommandContext& ctx) { BlockingPop(ctx, false); }

// BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout, BRPOPLPUSH
// source destination timeout: waits on the source only. Served at once, it
// is propagated as the non-blocking form of the same command (Redis 7.0):
// BRPOPLPUSH as RPOPLPUSH, BLMOVE as LMOVE -- replicas count them so.
void BlockingMove(CommandContext& ctx, bool from_head, bool to_head, std::string_view timeout) {
  int64_t deadline;
  if (!ParseBlockTimeout(ctx, timeout, &deadline)) return;
  core::OpResult<ListValue*> src = core::FindTyped<ListValue>(ctx.db, ctx.argv[1], ctx.now_ms);
  if (src.status() == core::OpStatus::kNotFound) {
    BlockOnKeys(ctx, BlockKind::kList, {std::string(ctx.argv[1])}, deadline);
    return;
  }
  ListMove(ctx, from_head, to_head, ctx.argv.size() == 4 ? MoveForm::kRpoplpush : MoveForm::kLmove);
}

void CmdBlmove(CommandContext& ctx) {
  bool from_head, to_head;
  if (!ParseListEnd(ctx, ctx.argv[3], &from_head) || !ParseListEnd(ctx, ctx.argv[4], &to_head)) return;
  BlockingMove(ctx, from_head, to_head, ctx.argv[5]);
}

void CmdBrpoplpush(CommandContext& ctx) { BlockingMove(ctx, false, true, ctx.argv[3]); }

// BLMPOP timeout numkeys key [key ...] LEFT|RIGHT [COUNT count]: the
// timeout is checked after the rest, as Redis 7.0 does (so for BZMPOP).
void CmdBlmpop(CommandContext& ctx) {
  MpopArgs args;
  if (!ParseMpopArgs(ctx, 2, "LEFT", "RIGHT", &args)) return;
  int64_t deadline;
  if (!ParseBlockTimeout(ctx, ctx.argv[1], &deadline)) return;
  args.keys = KeysToRead(ctx, args.keys);
  if (ListMpopFirst(ctx, args)) return;
  BlockOnKeys(ctx, BlockKind::kList, KeysOf(args.keys), deadline);
}

// BZPOPMIN / BZPOPMAX key [key ...] timeout: [key, member, score].
void BlockingZPop(CommandContext& ctx, bool max) {
  int64_t deadline;
  if (!ParseBlockTimeout(ctx, ctx.argv.back(), &deadline)) return;
  Argv keys = KeysToRead(ctx, ctx.argv.subspan(1, ctx.argv.size() - 2));
  const core::OpStatus status = OpBlockingZpop(
      OpArgsOf(ctx), keys, max,
      [&](std::string_view key) {
        ctx.reply.ArrayHeader(3);
        ctx.reply.Bulk(key);
      },
      [&](std::string_view member, double score) { ReplyPoppedElement(ctx, member, score, /*nested=*/false); });
  if (status == core::OpStatus::kOk) return;
  if (status != core::OpStatus::kNotFound) return ReplyOpError(ctx, status);
  BlockOnKeys(ctx, BlockKind::kZSet, KeysOf(keys), deadline);
}

void CmdBzpopmin(CommandContext& ctx) { BlockingZPop(ctx, false); }
void CmdBzpopmax(CommandContext& ctx) { BlockingZPop(ctx, true); }

// BZMPOP timeout numkeys key [key ...] MIN|MAX [COUNT count]
void CmdBzmpop(CommandContext& ctx) {
  MpopArgs args;
  if (!ParseMpopArgs(ctx, 2, "MIN", "MAX", &args)) return;
  int64_t deadline;
  if (!ParseBlockTimeout(ctx, ctx.argv[1], &deadline)) return;
  args.keys = KeysToRead(ctx, args.keys);
  if (ZSetMpopFirst(ctx, args)) return;
  BlockOnKeys(ctx, BlockKind::kZSet, KeysOf(args.keys), deadline);
}

}  // namespace

void RegisterBlockingCommands(CommandTable& t) {
  using namespace cmd;
  t.Add(Cmd("blpop", -3, kWrite | kNoscript | kBlocking, 1, -2, 1, "@write @list @slow @blocking", "list", "Remove and get the first element in a list, or block until one is available", "2.0.0", CmdBlpop));
  t.Add(Cmd("brpop", -3, kWrite | kNoscript | kBlocking, 1, -2, 1, "@write @list @slow @blocking", "list", "Remove and get the last element in a list, or block until one is available", "2.0.0", CmdBrpop));
  t.Add(Cmd("blmove", 6, kWrite | kDenyOom | kNoscript | kBlocking, 1, 2, 1, "@write @list @slow @blocking", "list", "Pop an element from a list, push it to another list and return it; or block until one is available", "6.2.0", CmdBlmove));
  t.Add(Cmd("brpoplpush", 4, kWrite | kDenyOom | kNoscript | kBlocking, 1, 2, 1, "@write @list @slow @blocking", "list", "Pop an element from a list, push it to another list and return it; or block until one is available", "2.2.0", CmdBrpoplpush));
  t.Add(NumKeysAt(Cmd("blmpop", -5, kWrite | kBlocking, 0, 0, 0, "@write @list @slow @blocking", "list", "Pop elements from a list, or block until one is available", "7.0.0", CmdBlmpop), 2));
  t.Add(Cmd("bzpopmin", -3, kWrite | kNoscript | kBlocking | kFast, 1, -2, 1, "@write @sortedset @fast @blocking", "sorted-set", "Remove and return the member with the lowest score from one or more sorted sets, or block until one is available", "5.0.0", CmdBzpopmin));
  t.Add(Cmd("bzpopmax", -3, kWrite | kNoscript | kBlocking | kFast, 1, -2, 1, "@write @sortedset @fast @blocking", "sorted-set", "Remove and return the member with the highest score from one or more sorted sets, or block until one is available", "5.0.0", CmdBzpopmax));
  t.Add(NumKeysAt(Cmd("bzmpop", -5, kWrite | kBlocking, 0, 0, 0, "@write @sortedset @slow @blocking", "sorted-set", "Remove and return members with scores in a sorted set or block until one is available", "7.0.0", CmdBzmpop), 2));
}

}  // namespace ringkv::server
