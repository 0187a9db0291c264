// FLUSHDB, FLUSHALL, SWAPDB: the commands that empty or swap whole
// databases. Server-level (unlike the key family): besides the keyspace they
// tell WATCH and the blocked clients (SignalFlushingDb / SignalSwappedDbs),
// client-side caching (every tracked key is invalidated), the lazy-free
// thread, and persistence (FLUSHALL saves when save points are set).
#include <string>
#include <vector>

#include "core/strings.h"
#include "server/command_table.h"
#include "server/commands/util.h"
#include "server/errors.h"
#include "server/server.h"

namespace ringkv::server {
namespace {

// FLUSHDB / FLUSHALL [ASYNC|SYNC]; without a flag, lazyfree-lazy-user-flush
// decides. *async tells which; false on a syntax error (already replied).
bool ParseFlushMode(ServerCommandContext& ctx, bool* async) {
  if (ctx.argv.size() > 2 || (ctx.argv.size() == 2 && !Is(ctx.argv[1], "ASYNC") && !Is(ctx.argv[1], "SYNC"))) {
    ctx.reply.Error(errors::kSyntax);
    return false;
  }
  *async = ctx.argv.size() == 2 ? Is(ctx.argv[1], "ASYNC") : ctx.server.config().Bool("lazyfree-lazy-user-flush");
  return true;
}

// Empties one database: inline, or in O(1) with the freeing on the lazy-free thread.
void FlushDatabase(ServerCommandContext& ctx, core::Database& db, bool async) {
  ctx.server.SignalFlushingDb(db.index());
  ctx.effects.Dirty(db.size());
  if (async && db.size() > 0) {
    size_t keys = db.size();
    std::unique_ptr<core::DetachedData> detached = db.Detach();
    // Empty when a snapshot without fork took the table: it frees it later.
    if (detached->dict.size() > 0) ctx.server.lazy_freer().Free(std::move(detached), keys);
  } else {
    db.Clear();
  }
}

void CmdFlushdb(ServerCommandContext& ctx) {
  bool async;
  if (!ParseFlushMode(ctx, &async)) return;
  FlushDatabase(ctx, ctx.db, async);
  ctx.server.tracking().Flushed(ctx.server.current_client_id());
  // Propagated even when the database was empty, as Redis 7.0 forces it.
  ctx.effects.PropagateAs(std::vector<std::string>(ctx.argv.begin(), ctx.argv.end()));
  ctx.reply.Ok();
}

void CmdFlushall(ServerCommandContext& ctx) {
  bool async;
  if (!ParseFlushMode(ctx, &async)) return;
  ctx.server.persistence().BeforeFlushAll();  // a snapshot of what is flushed stops first
  for (int i = 0; i < ctx.keyspace.count(); ++i) FlushDatabase(ctx, ctx.keyspace.db(i), async);
  ctx.server.tracking().Flushed(ctx.server.current_client_id());
  ctx.server.persistence().AfterFlushAll(ctx.now_ms);  // with save points, saves (dirty back to 0, as Redis 7.0)
  ctx.effects.PropagateAs(std::vector<std::string>(ctx.argv.begin(), ctx.argv.end()));
  ctx.reply.Ok();
}

void CmdSwapdb(ServerCommandContext& ctx) {
  if (ctx.server.cluster() != nullptr) {
    ctx.reply.Error("ERR SWAPDB is not allowed in cluster mode");
    return;
  }
  int32_t a, b;
  if (!ParseInt32(ctx, ctx.argv[1], &a, "ERR invalid first DB index") ||
      !ParseInt32(ctx, ctx.argv[2], &b, "ERR invalid second DB index")) {
    return;
  }
  if (a < 0 || a >= ctx.keyspace.count() || b < 0 || b >= ctx.keyspace.count()) {
    ctx.reply.Error(errors::kDbIndexRange);
    return;
  }
  if (a != b) {
    ctx.keyspace.SwapDb(a, b);
    ctx.server.SignalSwappedDbs(a, b);
  }
  ctx.effects.Dirty(1);
  ctx.reply.Ok();
}

}  // namespace

void RegisterFlushCommands(CommandTable& t) {
  using namespace cmd;
  t.Add(Cmd("flushdb", -1, kWrite, 0, 0, 0, "@keyspace @write @slow @dangerous", "server", "Remove all keys from the current database.", "1.0.0", CmdFlushdb));
  t.Add(Cmd("flushall", -1, kWrite, 0, 0, 0, "@keyspace @write @slow @dangerous", "server", "Removes all keys from all databases.", "1.0.0", CmdFlushall));
  t.Add(Cmd("swapdb", 3, kWrite | kFast, 0, 0, 0, "@keyspace @write @fast @dangerous", "server", "Swaps two Redis databases.", "4.0.0", CmdSwapdb));
}

}  // namespace ringkv::server
