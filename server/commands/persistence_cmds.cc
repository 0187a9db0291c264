// Persistence commands: SAVE, BGSAVE, LASTSAVE, BGREWRITEAOF.
#include "core/strings.h"
#include "server/command_table.h"
#include "server/commands/util.h"
#include "server/errors.h"
#include "server/server.h"

namespace ringkv::server {
namespace {

using namespace cmd;  // NOLINT: flag names in the table below

void CmdSave(ServerCommandContext& ctx) {
  Persistence& persistence = ctx.server.persistence();
  if (persistence.child().type() == ChildType::kRdb) {
    ctx.reply.Error("ERR Background save already in progress");
    return;
  }
  if (persistence.Save(ctx.now_ms).ok()) {
    ctx.reply.Ok();
  } else {
    ctx.reply.Error("ERR");
  }
}

void CmdBgsave(ServerCommandContext& ctx) {
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
  Persistence& persistence = ctx.server.persistence();
  const ChildProcess& child = persistence.child();
  if (child.type() == ChildType::kRdb) {
    ctx.reply.Error("ERR Background save already in progress");
  } else if (child.running()) {
    if (schedule) {
      persistence.rdb().Schedule();
      ctx.reply.SimpleString("Background saving scheduled");
    } else {
      ctx.reply.Error(
          "ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE in order to "
          "schedule a BGSAVE whenever possible.");
    }
  } else if (persistence.BackgroundSave(ctx.now_ms).ok()) {
    ctx.reply.SimpleString("Background saving started");
  } else {
    ctx.reply.Error("ERR");
  }
}

void CmdLastsave(ServerCommandContext& ctx) { ctx.reply.Integer(ctx.server.persistence().rdb().lastsave_s()); }

void CmdBgrewriteaof(ServerCommandContext& ctx) {
  Persistence& persistence = ctx.server.persistence();
  const ChildProcess& child = persistence.child();
  if (child.type() == ChildType::kAof) {
    ctx.reply.Error("ERR Background append only file rewriting already in progress");
  } else if (child.running()) {
    persistence.aof().ScheduleRewrite();
    ctx.reply.SimpleString("Background append only file rewriting scheduled");
  } else if (persistence.aof().StartRewrite(ctx.now_ms).ok()) {
    ctx.reply.SimpleString("Background append only file rewriting started");
  } else {
    ctx.reply.Error(
        "ERR Can't execute an AOF background rewriting. Please check the server logs for more information.");
  }
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
}

}  // namespace ringkv::server
