// Persistence commands: SAVE, BGSAVE, LASTSAVE, BGREWRITEAOF, WAITAOF.
#include "core/strings.h"
#include "server/command_table.h"
#include "server/commands/util.h"
#include "server/errors.h"
#include "server/server.h"

namespace ringkv::server {
namespace {

using namespace cmd;  // NOLINT: flag names in the table below

void CmdSave(CommandContext& ctx) {
  if (ctx.server.child().type() == ChildType::kRdb) {
    ctx.reply.Error("ERR Background save already in progress");
    return;
  }
  if (ctx.server.rdb().Save(ctx.now_ms, &ctx.server.stats().dirty).ok()) {
    ctx.reply.Ok();
  } else {
    ctx.reply.Error("ERR");
  }
}

void CmdBgsave(CommandContext& ctx) {
  bool schedule = false;
  if (ctx.argv.size() == 2) {
    if (!Is(ctx.argv[1], "SCHEDULE")) {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
    schedule = true;
  } else if (ctx.argv.size() > 2) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  ChildProcess& child = ctx.server.child();
  if (child.type() == ChildType::kRdb) {
    ctx.reply.Error("ERR Background save already in progress");
  } else if (child.running()) {
    if (schedule) {
      ctx.server.rdb().Schedule();
      ctx.reply.SimpleString("Background saving scheduled");
    } else {
      ctx.reply.Error(
          "ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE in order to "
          "schedule a BGSAVE whenever possible.");
    }
  } else if (ctx.server.rdb().BackgroundSave(ctx.now_ms, ctx.server.stats().dirty).ok()) {
    ctx.reply.SimpleString("Background saving started");
  } else {
    ctx.reply.Error("ERR");
  }
}

void CmdLastsave(CommandContext& ctx) { ctx.reply.Integer(ctx.server.rdb().lastsave_s()); }

void CmdBgrewriteaof(CommandContext& ctx) {
  ChildProcess& child = ctx.server.child();
  if (child.type() == ChildType::kAof) {
    ctx.reply.Error("ERR Background append only file rewriting already in progress");
  } else if (child.running()) {
    ctx.server.aof().ScheduleRewrite();
    ctx.reply.SimpleString("Background append only file rewriting scheduled");
  } else if (ctx.server.aof().StartRewrite(ctx.now_ms).ok()) {
    ctx.reply.SimpleString("Background append only file rewriting started");
  } else {
    ctx.reply.Error(
        "ERR Can't execute an AOF background rewriting. Please check the server logs for more information.");
  }
}

// WAITAOF numlocal numreplicas timeout (Redis 7.2's reply: [numlocal, numreplicas]).
void CmdWaitaof(CommandContext& ctx) {
  int64_t numlocal, numreplicas, timeout;
  if (!ParseInt(ctx, ctx.argv[1], &numlocal) || !ParseInt(ctx, ctx.argv[2], &numreplicas)) return;
  if (!core::StringToInt64(ctx.argv[3], &timeout)) {
    ctx.reply.Error("ERR timeout is not an integer or out of range");
    return;
  }
  if (timeout < 0) {
    ctx.reply.Error("ERR timeout is negative");
    return;
  }
  Aof& aof = ctx.server.aof();
  if (numlocal > 0 && !aof.enabled()) {
    ctx.reply.Error("ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled.");
    return;
  }
  const uint64_t target = ctx.client.woff;
  const int64_t local = aof.enabled() && aof.synced_offset() >= target ? 1 : 0;
  if (numlocal <= local && numreplicas <= 0) {
    ctx.reply.ArrayHeader(2);
    ctx.reply.Integer(local);
    ctx.reply.Integer(0);
    return;
  }
  ctx.server.BlockForAof(ctx.client, target, numlocal, numreplicas, timeout > 0 ? ctx.now_ms + timeout : 0);
}

}  // namespace

void RegisterPersistenceCommands(CommandTable& t) {
  t.Add(Cmd("save", 1, kAdmin | kNoscript | kNoAsyncLoading | kNoMulti, 0, 0, 0, "@admin @slow @dangerous", "server",
            "Synchronously saves the database(s) to disk.", "1.0.0", CmdSave));
  t.Add(Cmd("bgsave", -1, kAdmin | kNoscript | kNoAsyncLoading, 0, 0, 0, "@admin @slow @dangerous", "server",
            "Asynchronously saves the database(s) to disk.", "1.0.0", CmdBgsave));
  t.Add(Cmd("lastsave", 1, kLoading | kStale | kFast, 0, 0, 0, "@admin @fast @dangerous", "server",
            "Returns the Unix timestamp of the last successful save to disk.", "1.0.0", CmdLastsave));
  t.Add(Cmd("bgrewriteaof", 1, kAdmin | kNoscript | kNoAsyncLoading, 0, 0, 0, "@admin @slow @dangerous", "server",
            "Asynchronously rewrites the append-only file to disk.", "1.0.0", CmdBgrewriteaof));
  t.Add(Cmd("waitaof", 4, kNoscript, 0, 0, 0, "@slow @connection", "generic",
            "Blocks until all of the preceding write commands sent by the connection are written to the "
            "append-only file of the master and/or replicas.", "7.2.0", CmdWaitaof));
}

}  // namespace ringkv::server
