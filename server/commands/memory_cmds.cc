// MEMORY USAGE / STATS / DOCTOR / MALLOC-STATS / PURGE / HELP.
#ifdef RINGKV_WITH_MIMALLOC
#include <mimalloc.h>
#endif

#include "server/command_table.h"
#include "server/commands/util.h"
#include "server/errors.h"
#include "server/memory_overhead.h"
#include "server/memory_stats.h"
#include "server/server.h"

namespace ringkv::server {
namespace {

// MEMORY USAGE key [SAMPLES count]: the bytes this key costs in ringkv: its
// table node (key inline up to 23 bytes, entry, chain link), heap bytes of a
// long key and of the value, one bucket slot, and its expiry record if any.
// (SAMPLES is accepted for compatibility: strings need no sampling.)
void CmdMemoryUsage(ServerCommandContext& ctx) {
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
  core::Database& db = ctx.db;
  core::Entry* e = db.FindNoTouch(ctx.argv[2], ctx.now_ms);
  if (e == nullptr) {
    ctx.reply.Null();
    return;
  }
  ctx.reply.Integer(static_cast<int64_t>(core::Database::EntryMemory(ctx.argv[2], *e)));
}

// MEMORY STATS: Redis 7.0's fields in its order (a map in RESP3).
void CmdMemoryStats(ServerCommandContext& ctx) {
  const MemoryOverhead mh = GatherMemoryOverhead(ctx.server);
  io::ReplyBuilder& rb = ctx.reply;
  auto integer = [&](std::string_view name, uint64_t v) {
    rb.Bulk(name);
    rb.Integer(static_cast<int64_t>(v));
  };
  auto signed_integer = [&](std::string_view name, int64_t v) {
    rb.Bulk(name);
    rb.Integer(v);
  };
  auto ratio = [&](std::string_view name, float v) {
    rb.Bulk(name);
    rb.Double(static_cast<double>(v));
  };
  rb.MapHeader(27 + static_cast<int64_t>(mh.dbs.size()));
  integer("peak.allocated", mh.peak_allocated);
  integer("total.allocated", mh.total_allocated);
  integer("startup.allocated", mh.startup_allocated);
  integer("replication.backlog", mh.repl_backlog);
  integer("clients.slaves", mh.clients_slaves);
  integer("clients.normal", mh.clients_normal);
  integer("cluster.links", 0);
  integer("aof.buffer", mh.aof_buffer);
  integer("lua.caches", mh.lua_caches);
  integer("functions.caches", mh.functions_caches);
  for (const MemoryOverhead::Db& db : mh.dbs) {
    rb.Bulk(StrCat("db.", db.index));
    rb.MapHeader(3);
    integer("overhead.hashtable.main", db.overhead_ht_main);
    integer("overhead.hashtable.expires", db.overhead_ht_expires);
    integer("overhead.hashtable.slot-to-keys", 0);
  }
  integer("overhead.total", mh.overhead_total);
  integer("keys.count", mh.total_keys);
  integer("keys.bytes-per-key", mh.bytes_per_key);
  integer("dataset.bytes", mh.dataset);
  ratio("dataset.percentage", mh.dataset_perc);
  ratio("peak.percentage", mh.peak_perc);
  integer("allocator.allocated", mh.allocator.allocated);
  integer("allocator.active", mh.allocator.active);
  integer("allocator.resident", mh.allocator.resident);
  ratio("allocator-fragmentation.ratio", mh.allocator_frag);
  signed_integer("allocator-fragmentation.bytes", mh.allocator_frag_bytes);
  ratio("allocator-rss.ratio", mh.allocator_rss);
  signed_integer("allocator-rss.bytes", mh.allocator_rss_bytes);
  ratio("rss-overhead.ratio", mh.rss_extra);
  signed_integer("rss-overhead.bytes", mh.rss_extra_bytes);
  ratio("fragmentation", mh.total_frag);
  signed_integer("fragmentation.bytes", mh.total_frag_bytes);
}

void CmdMemoryDoctor(ServerCommandContext& ctx) {
  ctx.reply.Verbatim(MemoryDoctorReport(GatherMemoryOverhead(ctx.server), ReadMemoryStats().allocator));
}

// MEMORY MALLOC-STATS: mimalloc's own report (Redis prints jemalloc's).
void CmdMemoryMallocStats(ServerCommandContext& ctx) {
  const std::string text = AllocatorStatsText();
  if (text.empty()) {
    ctx.reply.Bulk("Stats not supported for the current allocator");
    return;
  }
  ctx.reply.Verbatim(text);
}

void CmdMemoryPurge(ServerCommandContext& ctx) {
#ifdef RINGKV_WITH_MIMALLOC
  mi_collect(true);  // return freed pages to the OS, as jemalloc's purge does for Redis
#endif
  ctx.reply.Ok();
}

void CmdMemoryHelp(ServerCommandContext& ctx) {
  static const char* kLines[] = {
      "DOCTOR",
      "    Return memory problems reports.",
      "MALLOC-STATS",
      "    Return internal statistics report from the memory allocator.",
      "PURGE",
      "    Attempt to purge dirty pages for reclamation by the allocator.",
      "STATS",
      "    Return information about the memory usage of the server.",
      "USAGE <key> [SAMPLES <count>]",
      "    Return memory in bytes used by <key> and its value. Nested values are",
      "    sampled up to <count> times (default: 5, 0 means sample all).",
  };
  ReplyHelp(ctx, kLines);
}

}  // namespace

void RegisterMemoryCommands(CommandTable& t) {
  using namespace cmd;
  std::vector<CommandSpec> subs;
  subs.push_back(Cmd("memory|doctor", 2, 0, 0, 0, 0, "@slow", "server", "Outputs memory problems report", "4.0.0", CmdMemoryDoctor));
  subs.push_back(Cmd("memory|help", 2, kLoading | kStale, 0, 0, 0, "@slow", "server", "Show helpful text about the different subcommands", "4.0.0", CmdMemoryHelp));
  subs.push_back(Cmd("memory|malloc-stats", 2, 0, 0, 0, 0, "@slow", "server", "Show allocator internal stats", "4.0.0", CmdMemoryMallocStats));
  subs.push_back(Cmd("memory|purge", 2, 0, 0, 0, 0, "@slow", "server", "Ask the allocator to release memory", "4.0.0", CmdMemoryPurge));
  subs.push_back(Cmd("memory|stats", 2, 0, 0, 0, 0, "@slow", "server", "Show memory usage details", "4.0.0", CmdMemoryStats));
  subs.push_back(Cmd("memory|usage", -3, kReadonly, 2, 2, 1, "@read @slow", "server", "Estimate the memory usage of a key", "4.0.0", CmdMemoryUsage));
  t.Add(Cmd("memory", -2, 0, 0, 0, 0, "@slow", "server", "A container for memory diagnostics commands", "4.0.0", nullptr, std::move(subs)));
}

}  // namespace ringkv::server
