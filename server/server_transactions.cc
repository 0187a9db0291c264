// Server: EXEC's run. The transaction's state -- the queue MULTI built, the
// watched keys -- is the Transactions component (transactions.h); what is
// here is the gate's part: the queue runs as one unit through Call (no other
// client runs in between, nothing blocks) and what it wrote propagates as
// one MULTI ... EXEC block when that is more than one command, as Redis 7.0.
#include "server/acl/acl.h"
#include "server/acl/acl_clients.h"
#include "core/strings.h"
#include "server/server.h"

namespace ringkv::server {

void Server::Exec(CommandContext& ctx) {
  Client& c = ctx.client;
  const int64_t now_ms = ctx.now_ms;
  bool dirty = false;
  std::unique_ptr<MultiState> m = transactions_.TakeForExec(
      c, [&](int db, std::string_view key) { return keyspace_.db(db).IsLogicallyExpired(key, now_ms); }, &dirty);
  if (m->aborted) {
    ctx.reply.Error("EXECABORT Transaction discarded because of previous errors.");
    return;
  }
  if (dirty) {
    ctx.reply.NullArray();
    return;
  }
  ctx.reply.ArrayHeader(static_cast<int64_t>(m->commands.size()));
  propagation_.BeginBlock();
  transactions_.BeginExec(c, *m);
  // A transaction runs whole, as in Redis, even when its client is closed
  // half-way (its output limit, client eviction: Server::CloseNow turns its
  // replies off): the rest of its replies go nowhere.
  io::OutBuffer dropped_out;
  io::ReplyBuilder dropped(&dropped_out, ctx.reply.resp(), ctx.reply.error_listener());
  for (const QueuedCommand& q : m->commands) {
    io::ReplyBuilder& reply = c.closed_at_once() ? dropped : ctx.reply;
    if (&reply == &dropped) dropped_out.Clear();  // the previous command's, unsent
    std::vector<std::string_view> argv(q.argv.begin(), q.argv.end());
    // The rules may have changed since the command was queued (Redis checks
    // again at EXEC).
    if (c.conn != nullptr && !c.is_master) {
      if (const acl::Verdict v = AclCheck(*this, c, *q.spec, argv, acl::LogContext::kMulti, now_ms); !v.ok()) {
        reply.Error(StrCat("NOPERM ACLs rules changed between the moment the transaction was accumulated and the "
                               "EXEC call. This command is no longer allowed for the following reason: ",
                               v.denied == acl::Denied::kCommand ? "no permission to execute the command or subcommand"
                               : v.denied == acl::Denied::kKey   ? "no permission to touch the specified keys"
                                   : "no permission to access one of the channels used as arguments"));
        continue;
      }
    }
    Call(c, *q.spec, argv, reply, now_ms, Clock::Ticks());  // one clock for the whole transaction, as Redis
    if (c.resp != ctx.reply.resp()) {  // a HELLO: the next replies in its protocol
      ctx.reply.set_resp(c.resp);
      dropped.set_resp(c.resp);
    }
  }
  transactions_.EndExec();
  propagation_.EndBlock();
  c.last_command = exec_spec_;
  c.woff = persistence_.aof().fed_offset();
  c.repl_woff = master_repl_offset();
}

}  // namespace ringkv::server
