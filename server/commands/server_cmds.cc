// Server commands: TIME, SHUTDOWN, SLOWLOG.
#include <unistd.h>

#include <thread>

#include "core/strings.h"
#include "absl/strings/str_cat.h"
#include "server/command_table.h"
#include "server/commands/util.h"
#include "server/errors.h"
#include "server/logging.h"
#include "server/scripting/scripting.h"
#include "server/server.h"

namespace ringkv::server {
namespace {

void CmdTime(ServerCommandContext& ctx) {
  int64_t us = UnixUs();
  ctx.reply.ArrayHeader(2);
  ctx.reply.Bulk(StrCat(us / 1000000));
  ctx.reply.Bulk(StrCat(us % 1000000));
}

void CmdShutdown(ServerCommandContext& ctx) {
  // SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT]
  ShutdownFlags flags;
  bool nosave = false, save = false, abort = false;
  for (size_t i = 1; i < ctx.argv.size(); ++i) {
    std::string_view a = ctx.argv[i];
    if (Is(a, "NOSAVE")) {
      nosave = true;
    } else if (Is(a, "SAVE")) {
      save = true;
    } else if (Is(a, "FORCE")) {
      flags.force = true;
    } else if (Is(a, "NOW")) {
      flags.now = true;
    } else if (Is(a, "ABORT")) {
      abort = true;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  }
  // ABORT goes alone; SAVE and NOSAVE exclude each other (Redis's checks).
  if ((abort && ctx.argv.size() != 2) || (save && nosave)) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  if (abort) {
    if (ctx.server.shutdown().Abort()) {
      ctx.reply.Ok();
    } else {
      ctx.reply.Error("ERR No shutdown in progress.");
    }
    return;
  }
  flags.save = nosave ? ShutdownSave::kNoSave : save ? ShutdownSave::kSave : ShutdownSave::kDefault;
  if (!flags.now && !ctx.server.MayBlock(ctx.client)) {
    ctx.reply.Error("ERR SHUTDOWN without NOW or ABORT isn't allowed for DENY BLOCKING client");
    return;
  }
  // A script past busy-reply-threshold: only SHUTDOWN NOSAVE, which stops
  // it (its writes are neither saved nor propagated).
  if (ctx.server.scripting().busy()) {
    if (!nosave) {
      ctx.reply.Error(ctx.server.scripting()->BusyError());
      return;
    }
    ctx.server.scripting()->KillForShutdown();
  }
  // Blocked until the server stops (no reply: the connection closes) or the
  // shutdown fails or is aborted (the error comes then). A shutdown waiting
  // for replicas already keeps its own options: this client waits with it.
  auto state = std::make_unique<BlockState>();
  state->kind = BlockKind::kShutdown;
  state->db = ctx.client.db;
  ctx.server.blocking().Block(ctx.client, std::move(state));
  if (ctx.server.shutdown().Initiate(flags) == Shutdown::Result::kDone) ctx.server.CloseClient(ctx.client);
}

void CmdSlowlogGet(ServerCommandContext& ctx) {
  int64_t count = 10;
  if (ctx.argv.size() == 3) {
    if (!core::StringToInt64(ctx.argv[2], &count) || count < -1) {
      ctx.reply.Error("ERR count should be greater than or equal to -1");
      return;
    }
    if (count == -1) count = INT64_MAX;
  } else if (ctx.argv.size() > 3) {
    ReplySubcommandSyntaxError(ctx);
    return;
  }
  const auto& log = ctx.server.slowlog().entries();
  int64_t n = std::min<int64_t>(count, static_cast<int64_t>(log.size()));
  ctx.reply.ArrayHeader(n);
  for (int64_t i = 0; i < n; ++i) {
    const SlowlogEntry& e = log[i];
    ctx.reply.ArrayHeader(6);
    ctx.reply.Integer(static_cast<int64_t>(e.id));
    ctx.reply.Integer(e.time_s);
    ctx.reply.Integer(e.duration_us);
    ctx.reply.ArrayHeader(static_cast<int64_t>(e.argv.size()));
    for (const std::string& a : e.argv) ctx.reply.Bulk(a);
    ctx.reply.Bulk(e.peer);
    ctx.reply.Bulk(e.name);
  }
}

void CmdSlowlogLen(ServerCommandContext& ctx) { ctx.reply.Integer(static_cast<int64_t>(ctx.server.slowlog().entries().size())); }

void CmdSlowlogReset(ServerCommandContext& ctx) {
  ctx.server.slowlog().Reset();
  ctx.reply.Ok();
}

void CmdSlowlogHelp(ServerCommandContext& ctx) {
  static const char* kLines[] = {
      "GET [<count>]",
      "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
      "    Entries are made of:",
      "    id, timestamp, time in microseconds, arguments array, client IP and port,",
      "    client name",
      "LEN",
      "    Return the length of the slowlog.",
      "RESET",
      "    Reset the slowlog.",
  };
  ReplyHelp(ctx, kLines);
}

}  // namespace

void RegisterServerCommands(CommandTable& t) {
  using namespace cmd;
  t.Add(Cmd("time", 1, kLoading | kStale | kFast, 0, 0, 0, "@fast", "server", "Returns the server time.", "2.6.0", CmdTime));
  t.Add(Cmd("shutdown", -1, kAdmin | kNoscript | kLoading | kStale | kNoMulti | kSentinel | kAllowBusy, 0, 0, 0, "@admin @slow @dangerous", "server", "Synchronously saves the database(s) to disk and shuts down the Redis server.", "1.0.0", CmdShutdown));
  std::vector<CommandSpec> subs;
  subs.push_back(Cmd("slowlog|get", -2, kAdmin | kLoading | kStale, 0, 0, 0, "@admin @slow @dangerous", "server", "Returns the slow log's entries.", "2.2.12", CmdSlowlogGet));
  subs.push_back(Cmd("slowlog|len", 2, kAdmin | kLoading | kStale, 0, 0, 0, "@admin @slow @dangerous", "server", "Returns the number of entries in the slow log.", "2.2.12", CmdSlowlogLen));
  subs.push_back(Cmd("slowlog|reset", 2, kAdmin | kLoading | kStale, 0, 0, 0, "@admin @slow @dangerous", "server", "Clears all entries from the slow log.", "2.2.12", CmdSlowlogReset));
  subs.push_back(Cmd("slowlog|help", 2, kLoading | kStale, 0, 0, 0, "@slow", "server", "Show helpful text about the different subcommands", "6.2.0", CmdSlowlogHelp));
  t.Add(Cmd("slowlog", -2, 0, 0, 0, 0, "@slow", "server", "A container for slow log commands.", "2.2.12", nullptr, std::move(subs)));
}

}  // namespace ringkv::server
