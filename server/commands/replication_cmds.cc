// Replication commands, primary side: REPLCONF, PSYNC, SYNC, ROLE, and the
// waits on replicas and the AOF: WAIT, WAITAOF.
#include "core/strings.h"
#include "server/command_table.h"
#include "server/commands/util.h"
#include "server/errors.h"
#include "server/logging.h"
#include "server/server.h"

namespace ringkv::server {
namespace {

using namespace cmd;  // NOLINT: flag names in the table below

// Redis's getTimeoutFromObjectOrReply for millisecond timeouts: the deadline
// in µs of the wall clock (UnixUs), 0 for none.
bool ParseTimeout(ServerCommandContext& ctx, std::string_view arg, int64_t* deadline_us) {
  int64_t ms;
  if (!core::StringToInt64(arg, &ms)) {
    ctx.reply.Error("ERR timeout is not an integer or out of range");
    return false;
  }
  if (ms < 0) {
    ctx.reply.Error("ERR timeout is negative");
    return false;
  }
  const int64_t now_us = UnixUs();
  *deadline_us = ms == 0 ? 0 : (ms > (INT64_MAX - now_us) / 1000 ? INT64_MAX : now_us + ms * 1000);
  return true;
}

// WAIT numreplicas timeout: the replicas that acknowledged this client's
// last write (Redis 7.2 semantics, also what 7.0 answers).
void CmdWait(ServerCommandContext& ctx) {
  if (ctx.server.replica_side().is_replica()) {
    ctx.reply.Error(
        "ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is "
        "configured to be writable (which is not the default) writes to replicas are just local and are not "
        "propagated.");
    return;
  }
  WaitSpec spec;
  int64_t deadline_us;
  if (!ParseTimeout(ctx, ctx.argv[2], &deadline_us)) return;
  if (!ParseInt(ctx, ctx.argv[1], &spec.numreplicas)) return;
  spec.repl_target = ctx.client.repl_woff;
  ctx.server.primary_side().WaitFor(ctx.client, spec, deadline_us);
}

// WAITAOF numlocal numreplicas timeout (Redis 7.2): [numlocal, numreplicas].
void CmdWaitaof(ServerCommandContext& ctx) {
  WaitSpec spec;
  spec.aof = true;
  int64_t deadline_us;
  if (!ParseTimeout(ctx, ctx.argv[3], &deadline_us)) return;
  if (!core::StringToInt64(ctx.argv[1], &spec.numlocal) || spec.numlocal < 0 ||
      !core::StringToInt64(ctx.argv[2], &spec.numreplicas) || spec.numreplicas < 0) {
    ctx.reply.Error("ERR value is out of range, must be positive");
    return;
  }
  if (ctx.server.replica_side().is_replica()) {
    ctx.reply.Error(
        "ERR WAITAOF cannot be used with replica instances. Please also note that writes to replicas are just "
        "local and are not propagated.");
    return;
  }
  if (spec.numlocal > 0 && !ctx.server.persistence().aof().enabled()) {
    ctx.reply.Error("ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled.");
    return;
  }
  spec.aof_target = ctx.client.woff;
  spec.repl_target = ctx.client.repl_woff;
  ctx.server.primary_side().WaitFor(ctx.client, spec, deadline_us);
}

// REPLCONF <option> <value> [<option> <value> ...]
void CmdReplconf(ServerCommandContext& ctx) {
  if (ctx.argv.size() % 2 == 0) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  repl::ReplicaLink* link = nullptr;
  auto ensure_link = [&]() -> repl::ReplicaLink& {
    if (link == nullptr) link = &ctx.server.primary_side().EnsurePrimary().Attach(ctx.client.id(), ctx.client.conn);
    return *link;
  };
  for (size_t i = 1; i + 1 < ctx.argv.size(); i += 2) {
    std::string_view opt = ctx.argv[i], value = ctx.argv[i + 1];
    if (Is(opt, "ack") || Is(opt, "fack")) {
      // REPLCONF ACK <offset> [FACK <aofoffset>]: from a synced replica; no reply.
      if (!ctx.client.is_replica) return;
      int64_t offset = 0, fack = 0;
      if (!core::StringToInt64(value, &offset)) return;
      if (i + 3 < ctx.argv.size() + 1 && i + 2 < ctx.argv.size() && Is(ctx.argv[i + 2], "fack")) {
        core::StringToInt64(ctx.argv[i + 3], &fack);
      }
      ctx.server.primary_side().OnReplicaAck(ctx.client, static_cast<uint64_t>(offset),
                                             static_cast<uint64_t>(std::max<int64_t>(0, fack)), UnixMs());
      return;
    }
    if (Is(opt, "getack")) {
      if (ctx.client.is_master) ctx.server.replica_side().SendAck();  // from our primary: answer now
      return;
    }
    if (Is(opt, "listening-port")) {
      int64_t port;
      if (!ParseInt(ctx, value, &port)) return;
      ensure_link().listening_port = static_cast<int>(port);
    } else if (Is(opt, "ip-address")) {
      ensure_link().announced_ip = std::string(value);
    } else if (Is(opt, "capa")) {
      if (Is(value, "eof")) ensure_link().capa_eof = true;
      if (Is(value, "psync2")) ensure_link().capa_psync2 = true;
    } else if (Is(opt, "rdb-only")) {
      int64_t only;
      if (!core::StringToInt64(value, &only)) {
        ctx.reply.Error("ERR value is not an integer or out of range");
        return;
      }
      if (only < 0 || only > 1) {
        ctx.reply.Error("ERR value is out of range, value must between 0 and 1");
        return;
      }
      ensure_link().rdb_only = only == 1;
    } else if (Is(opt, "rdb-filter-only")) {
      // "Include" filters: by default the snapshot leaves out both the keys
      // and the functions; "functions" puts the functions back. "" is no
      // filter named: nothing but the AUX fields.
      bool functions = false;
      for (std::string_view f : Split(value, ' ', true)) {
        if (!Is(f, "functions")) {
          ctx.reply.Error(StrCat("ERR Unsupported rdb-filter-only option: ", f));
          return;
        }
        functions = true;
      }
      repl::ReplicaLink& link = ensure_link();
      link.exclude_data = true;
      link.exclude_functions = !functions;
    } else {
      ctx.reply.Error(StrCat("ERR Unrecognized REPLCONF option: ", opt));
      return;
    }
  }
  ctx.reply.Ok();
}

// PSYNC replid offset
void CmdPsync(ServerCommandContext& ctx) {
  if (ctx.client.is_replica) return;  // already one: ignored, as Redis
  // PSYNC replid offset FAILOVER: our primary hands over to us (FAILOVER on
  // its side); take over if it is really our primary's history.
  if (ctx.argv.size() > 3 && Is(ctx.argv[3], "failover")) {
    if (ctx.argv[1] != ctx.server.repl_ids().replid) {
      ctx.reply.Error("ERR PSYNC FAILOVER replid must match my replid.");
      return;
    }
    ctx.server.replica_side().ReplicaOf("", 0);
  }
  if (std::string_view(ctx.server.replica_side().failover_state()) != "no-failover") {
    ctx.reply.Error("NOMASTERLINK Can't SYNC while failing over");
    return;
  }
  if (const repl::MasterLink* m = ctx.server.replica_side().master_link();
      m != nullptr && m->state != repl::MasterLink::State::kConnected) {
    ctx.reply.Error("NOMASTERLINK Can't SYNC while not connected with my master");
    return;
  }
  int64_t offset;
  if (!core::StringToInt64(ctx.argv[2], &offset)) {
    Log(kWarning, StrCat("Replica ", ctx.client.conn->peer.ToString(),
                         " asks for synchronization but with a wrong offset"));
    ctx.reply.Error(errors::kNotInteger);
    return;
  }
  ctx.server.primary_side().StartReplicaSync(ctx.client, ctx.argv[1], offset, /*old_sync=*/false);
}

// SYNC: the pre-PSYNC protocol (an RDB, then the stream; no offsets).
void CmdSync(ServerCommandContext& ctx) {
  if (ctx.client.is_replica) return;
  ctx.server.primary_side().StartReplicaSync(ctx.client, "?", -1, /*old_sync=*/true);
}

// REPLICAOF host port | NO ONE (and SLAVEOF).
void CmdReplicaof(ServerCommandContext& ctx) {
  if (ctx.server.cluster() != nullptr) {
    ctx.reply.Error("ERR REPLICAOF not allowed in cluster mode.");
    return;
  }
  if (Is(ctx.argv[1], "no") && Is(ctx.argv[2], "one")) {
    ctx.reply.SimpleString(ctx.server.replica_side().ReplicaOf("", 0).substr(1));
    return;
  }
  int64_t port;
  if (!core::StringToInt64(ctx.argv[2], &port) || port < 0 || port > 65535) {
    ctx.reply.Error("ERR Invalid master port");
    return;
  }
  const std::string line = ctx.server.replica_side().ReplicaOf(std::string(ctx.argv[1]), static_cast<int>(port));
  ctx.reply.SimpleString(line.substr(1));
}

// FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms]
void CmdFailover(ServerCommandContext& ctx) {
  std::string host;
  int64_t port = 0, timeout = 0;
  bool force = false, abort = false, has_timeout = false;
  for (size_t i = 1; i < ctx.argv.size(); ++i) {
    std::string_view a = ctx.argv[i];
    if (Is(a, "TO") && i + 2 < ctx.argv.size() && host.empty()) {
      host = std::string(ctx.argv[++i]);
      if (!core::StringToInt64(ctx.argv[++i], &port) || port < 0 || port > 65535) {
        ctx.reply.Error("ERR Invalid port");
        return;
      }
    } else if (Is(a, "TIMEOUT") && i + 1 < ctx.argv.size() && !has_timeout) {
      if (!ParseInt(ctx, ctx.argv[++i], &timeout)) return;
      if (timeout <= 0) {
        ctx.reply.Error("ERR FAILOVER timeout must be greater than 0");
        return;
      }
      has_timeout = true;
    } else if (Is(a, "FORCE") && !force) {
      force = true;
    } else if (Is(a, "ABORT") && !abort) {
      abort = true;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  }
  if (abort) {
    if (force || has_timeout || !host.empty()) {
      ctx.reply.Error("ERR FAILOVER abort cannot be used with other options.");
      return;
    }
    std::string err = ctx.server.replica_side().AbortFailover();
    if (err.empty()) {
      ctx.reply.Ok();
    } else {
      ctx.reply.Error(err);
    }
    return;
  }
  if (force && (!has_timeout || host.empty())) {
    ctx.reply.Error("ERR FAILOVER with force option requires both a timeout and target HOST and IP.");
    return;
  }
  std::string err = ctx.server.replica_side().StartFailover(host, static_cast<int>(port), timeout, force);
  if (err.empty()) {
    ctx.reply.Ok();
  } else {
    ctx.reply.Error(err);
  }
}

void CmdRole(ServerCommandContext& ctx) {
  io::ReplyBuilder& rb = ctx.reply;
  if (const repl::MasterLink* m = ctx.server.replica_side().master_link()) {
    using S = repl::MasterLink::State;
    rb.ArrayHeader(5);
    rb.Bulk("slave");
    rb.Bulk(m->host);
    rb.Integer(m->port);
    rb.Bulk(ctx.server.replica_side().replica()->LinkStateName());
    rb.Integer(m->state == S::kConnected ? static_cast<int64_t>(ctx.server.master_repl_offset()) : -1);
    return;
  }
  rb.ArrayHeader(3);
  rb.Bulk("master");
  rb.Integer(static_cast<int64_t>(ctx.server.master_repl_offset()));
  const repl::Primary* p = ctx.server.primary_side().primary();
  int64_t n = 0;
  if (p != nullptr) {
    for (const auto& r : p->replicas()) n += r->state != repl::ReplicaState::kHandshake;
  }
  rb.ArrayHeader(n);
  if (p == nullptr) return;
  for (const auto& r : p->replicas()) {
    if (r->state == repl::ReplicaState::kHandshake) continue;
    rb.ArrayHeader(3);
    const std::string ip = r->ip();
    rb.Bulk(ip);
    rb.Bulk(StrCat(r->listening_port));
    rb.Bulk(StrCat(r->ack_offset));
  }
}

}  // namespace

void RegisterReplicationCommands(CommandTable& t) {
  t.Add(Cmd("wait", 3, kNoscript, 0, 0, 0, "@slow @connection", "generic",
            "Blocks until the asynchronous replication of all preceding write commands sent by the connection is "
            "completed.", "3.0.0", CmdWait));
  t.Add(Cmd("waitaof", 4, kNoscript, 0, 0, 0, "@slow @connection", "generic",
            "Blocks until all of the preceding write commands sent by the connection are written to the "
            "append-only file of the master and/or replicas.", "7.2.0", CmdWaitaof));
  t.Add(Cmd("replconf", -1, kAdmin | kNoscript | kLoading | kStale | kAllowBusy, 0, 0, 0, "@admin @slow @dangerous",
            "server", "An internal command for configuring the replication stream.", "3.0.0", CmdReplconf));
  t.Add(Cmd("psync", -3, kAdmin | kNoscript | kNoAsyncLoading | kNoMulti, 0, 0, 0, "@admin @slow @dangerous",
            "server", "An internal command used in replication.", "2.8.0", CmdPsync));
  t.Add(Cmd("sync", 1, kAdmin | kNoscript | kNoAsyncLoading | kNoMulti, 0, 0, 0, "@admin @slow @dangerous", "server",
            "An internal command used in replication.", "1.0.0", CmdSync));
  t.Add(Cmd("replicaof", 3, kAdmin | kNoscript | kStale | kNoAsyncLoading, 0, 0, 0, "@admin @slow @dangerous",
            "server", "Configures a server as replica of another, or promotes it to a master.", "5.0.0",
            CmdReplicaof));
  t.Add(Cmd("slaveof", 3, kAdmin | kNoscript | kStale | kNoAsyncLoading, 0, 0, 0, "@admin @slow @dangerous",
            "server", "Sets a Redis server as a replica of another, or promotes it to being a master.", "1.0.0",
            CmdReplicaof));
  t.Add(Cmd("failover", -1, kAdmin | kNoscript | kStale, 0, 0, 0, "@admin @slow @dangerous", "server",
            "Starts a coordinated failover from a server to one of its replicas.", "6.2.0", CmdFailover));
  t.Add(Cmd("role", 1, kNoscript | kLoading | kStale | kFast, 0, 0, 0, "@admin @fast @dangerous", "server",
            "Returns the replication role.", "2.8.12", CmdRole));
}

}  // namespace ringkv::server
