// Transactions: MULTI EXEC DISCARD WATCH UNWATCH (the state is the
// Transactions component, EXEC's run is server_transactions.cc), and MONITOR.
#include "server/command_table.h"
#include "server/commands/util.h"
#include "server/server.h"

namespace ringkv::server {
namespace {

void CmdMulti(ServerCommandContext& ctx) {
  if (ctx.client.in_multi) {
    ctx.reply.Error("ERR MULTI calls can not be nested");
    return;
  }
  ctx.server.transactions().Start(ctx.client);
  ctx.reply.Ok();
}

void CmdExec(ServerCommandContext& ctx) {
  if (!ctx.client.in_multi) {
    ctx.reply.Error("ERR EXEC without MULTI");
    return;
  }
  ctx.server.Exec(ctx);
}

void CmdDiscard(ServerCommandContext& ctx) {
  if (!ctx.client.in_multi) {
    ctx.reply.Error("ERR DISCARD without MULTI");
    return;
  }
  ctx.server.transactions().Discard(ctx.client);
  ctx.reply.Ok();
}

void CmdWatch(ServerCommandContext& ctx) {
  if (ctx.client.in_multi) {
    ctx.reply.Error("ERR WATCH inside MULTI is not allowed");
    return;
  }
  ctx.server.transactions().Watch(ctx.client, ctx.client.db, ctx.server.db(ctx.client), ctx.argv.subspan(1), ctx.now_ms);
  ctx.reply.Ok();
}

void CmdUnwatch(ServerCommandContext& ctx) {
  ctx.server.transactions().Unwatch(ctx.client);
  ctx.reply.Ok();
}

void CmdMonitor(ServerCommandContext& ctx) {
  // A client that expects one reply per command (inside EXEC) cannot.
  if (!ctx.server.MayBlock(ctx.client)) {
    ctx.reply.Error("ERR MONITOR isn't allowed for DENY BLOCKING client");
    return;
  }
  if (ctx.client.is_replica) return;  // a replica's link is already fed
  ctx.server.monitors().Add(ctx.client);
  ctx.reply.Ok();
}

}  // namespace

void RegisterTransactionCommands(CommandTable& t) {
  using namespace cmd;
  const uint32_t kControl = kNoscript | kLoading | kStale | kFast | kAllowBusy;
  t.Add(Cmd("multi", 1, kControl, 0, 0, 0, "@fast @transaction", "transactions", "Mark the start of a transaction block", "1.2.0", CmdMulti));
  t.Add(Cmd("exec", 1, kNoscript | kLoading | kStale | kSkipSlowlog, 0, 0, 0, "@slow @transaction", "transactions", "Execute all commands issued after MULTI", "1.2.0", CmdExec));
  t.Add(Cmd("discard", 1, kControl, 0, 0, 0, "@fast @transaction", "transactions", "Discard all commands issued after MULTI", "2.0.0", CmdDiscard));
  t.Add(Cmd("watch", -2, kControl, 1, -1, 1, "@fast @transaction", "transactions", "Watch the given keys to determine execution of the MULTI/EXEC block", "2.2.0", CmdWatch));
  t.Add(Cmd("unwatch", 1, kControl, 0, 0, 0, "@fast @transaction", "transactions", "Forget about all watched keys", "2.2.0", CmdUnwatch));
  t.Add(Cmd("monitor", 1, kAdmin | kNoscript | kLoading | kStale, 0, 0, 0, "@admin @slow @dangerous", "server", "Listen for all requests received by the server in real time", "1.0.0", CmdMonitor));
}

}  // namespace ringkv::server
