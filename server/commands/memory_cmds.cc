// MEMORY USAGE / PURGE / HELP.
#ifdef RINGKV_WITH_MIMALLOC
#include <mimalloc.h>
#endif

#include "server/command_table.h"
#include "server/commands/util.h"
#include "server/errors.h"
#include "server/server.h"

namespace ringkv::server {
namespace {

// MEMORY USAGE key [SAMPLES count]: the bytes this key costs in ringkv: its
// table node (key inline up to 23 bytes, entry, chain link), heap bytes of a
// long key and of the value, one bucket slot, and its expiry record if any.
// (SAMPLES is accepted for compatibility: strings need no sampling.)
void CmdMemoryUsage(CommandContext& ctx) {
  if (ctx.argv.size() != 3 && !(ctx.argv.size() == 5 && Is(ctx.argv[3], "SAMPLES"))) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  if (ctx.argv.size() == 5) {
    int64_t samples;
    if (!ParseInt(ctx, ctx.argv[4], &samples)) return;
    if (samples < 0) {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  }
  core::Database& db = ctx.server.db(ctx.client);
  core::Entry* e = db.FindNoTouch(ctx.argv[2], ctx.now_ms);
  if (e == nullptr) {
    ctx.reply.Null();
    return;
  }
  std::string_view key = ctx.argv[2];
  size_t bytes = sizeof(core::Dict<core::Entry>::Node) + sizeof(void*) + e->value.heap_bytes() +
                 (key.size() > core::Key::kInlineMax ? key.size() : 0);
  if (db.GetExpire(e) >= 0) bytes += sizeof(core::ExpireRecord) + (key.size() > 15 ? key.size() + 1 : 0);
  ctx.reply.Integer(static_cast<int64_t>(bytes));
}

void CmdMemoryPurge(CommandContext& ctx) {
#ifdef RINGKV_WITH_MIMALLOC
  mi_collect(true);  // return freed pages to the OS, as jemalloc's purge does for Redis
#endif
  ctx.reply.Ok();
}

void CmdMemoryHelp(CommandContext& ctx) {
  static const char* kLines[] = {
      "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "PURGE",
      "    Attempt to purge dirty pages for reclamation by the allocator.",
      "USAGE <key> [SAMPLES <count>]",
      "    Return memory in bytes used by <key> and its value. Nested values are",
      "    sampled up to <count> times (default: 5, 0 means sample all).",
      "HELP",
      "    Print this help.",
  };
  ReplyHelp(ctx, kLines);
}

}  // namespace

void RegisterMemoryCommands(CommandTable& t) {
  using namespace cmd;
  std::vector<CommandSpec> subs;
  subs.push_back(Cmd("memory|usage", -3, kReadonly, 2, 2, 1, "@read @slow", "server", "Estimates the memory usage of a key.", "4.0.0", CmdMemoryUsage));
  subs.push_back(Cmd("memory|purge", 2, 0, 0, 0, 0, "@slow", "server", "Asks the allocator to release memory.", "4.0.0", CmdMemoryPurge));
  subs.push_back(Cmd("memory|help", 2, kLoading | kStale, 0, 0, 0, "@slow", "server", "Returns helpful text about the different subcommands.", "4.0.0", CmdMemoryHelp));
  t.Add(Cmd("memory", -2, 0, 0, 0, 0, "@slow", "server", "A container for memory diagnostics commands.", "4.0.0", nullptr, std::move(subs)));
}

}  // namespace ringkv::server
