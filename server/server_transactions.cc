// Server: MULTI / EXEC / DISCARD and WATCH. A transaction's queue is the
// client's MultiState component, its watched keys live in WatchedKeys; both
// exist only while in use. EXEC runs the queue as one unit (no other client
// runs in between, nothing blocks) and propagates what it wrote as one
// MULTI ... EXEC block when that is more than one command, as Redis 7.0.
#include "core/strings.h"
#include "server/server.h"

namespace ringkv::server {

void Server::StartMulti(Client& c) {
  multi_[c.id()] = std::make_unique<MultiState>();
  c.in_multi = true;
}

void Server::DiscardMulti(Client& c) {
  multi_.erase(c.id());
  c.in_multi = false;
  Unwatch(c);
}

void Server::Unwatch(Client& c) {
  if (!c.watching) return;
  watched_.UnwatchAll(c.id());
  c.watching = false;
}

bool Server::QueueRunsWhileLoading(const Client& c) const {
  for (const QueuedCommand& q : multi_.at(c.id())->commands) {
    if (!(q.spec->flags & cmd::kLoading)) return false;
  }
  return true;
}

void Server::Watch(CommandContext& ctx) {
  Client& c = ctx.client;
  core::Database& db = keyspace_.db(c.db);
  for (size_t i = 1; i < ctx.argv.size(); ++i) {
    watched_.Watch(c.id(), c.db, ctx.argv[i], db.IsLogicallyExpired(ctx.argv[i], ctx.now_ms));
  }
  c.watching = true;
  ctx.reply.Ok();
}

void Server::Exec(CommandContext& ctx) {
  Client& c = ctx.client;
  std::unique_ptr<MultiState> m = std::move(multi_[c.id()]);
  multi_.erase(c.id());
  c.in_multi = false;
  const int64_t now_ms = ctx.now_ms;
  const bool dirty = c.watching && watched_.Dirty(c.id(), [&](int db, std::string_view key) {
    return keyspace_.db(db).IsLogicallyExpired(key, now_ms);
  });
  Unwatch(c);
  if (m->aborted) {
    ctx.reply.Error("EXECABORT Transaction discarded because of previous errors.");
    return;
  }
  if (dirty) {
    ctx.reply.NullArray();
    return;
  }
  ctx.reply.ArrayHeader(static_cast<int64_t>(m->commands.size()));
  BeginPropagationBlock();
  in_exec_ = true;
  for (const QueuedCommand& q : m->commands) {
    std::vector<std::string_view> argv(q.argv.begin(), q.argv.end());
    Call(c, *q.spec, argv, ctx.reply, now_ms);  // one clock for the whole transaction, as Redis
    if (c.closing) break;
  }
  in_exec_ = false;
  EndPropagationBlock();
  c.last_command = exec_spec_;
  c.woff = aof_->fed_offset();
  c.repl_woff = master_repl_offset();
}

}  // namespace ringkv::server
