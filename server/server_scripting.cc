// Server: the command gate's entrance for scripts (redis.call without a
// connection, with Redis's script refusals), and its side of
// ScriptingSide's hooks (server/scripting/scripting_side.h). The scripts,
// their state and the busy state of a long script: server/scripting/.
#include "server/acl/acl.h"
#include "server/cluster/cluster_mode.h"
#include "server/command_table.h"
#include "server/acl/acl_clients.h"
#include "core/strings.h"
#include "io/thread_check.h"
#include "server/scripting/scripting.h"
#include "server/server.h"

namespace ringkv::server {

void Server::CallFromScript(Client& sc, scripting::ScriptRun& run, const CommandSpec* command, Argv argv,
                            io::ReplyBuilder& rb) {
  RINGKV_DCHECK_MAIN_THREAD();
  const CommandSpec* spec = command;
  // A container called with an unknown subcommand is an unknown command
  // (alone, it fails its arity).
  if (spec != nullptr && !spec->subcommands.empty() && argv.size() >= 2) spec = CommandTable::FindSub(*spec, argv[1]);
  // A refusal is a rejected call of the command (when it exists), and the
  // script's command after it starts a new count of failures (Redis's
  // incrCommandStatsOnError after scriptCall's errors).
  auto refuse = [&](std::string_view error) {
    if (spec != nullptr) ++spec->rejected_calls;
    rb.Error(error);
    errors_mark_ = stats_.total_error_replies;
  };
  if (spec == nullptr) {
    refuse("ERR Unknown Redis command called from script");
    return;
  }
  const int argc = static_cast<int>(argv.size());
  if ((spec->arity > 0 && argc != spec->arity) || argc < -spec->arity || spec->container()) {
    refuse("ERR Wrong number of args calling Redis command from script");
    return;
  }
  if ((spec->flags & cmd::kNoscript) && !scripting_.noscript_allowed()) {
    refuse("ERR This Redis command is not allowed from script");
    return;
  }
  // ACL: the script runs as its caller's user (Redis's scriptVerifyACL).
  if (Client* caller = current_client_; caller != nullptr && caller->conn != nullptr && !caller->is_master) {
    // The TSC clock's wall time (as the gate's): only a denial logs it.
    const acl::Verdict v = AclCheck(*this, *caller, *spec, argv, acl::LogContext::kLua, clock_.WallMs());
    if (!v.ok()) {
      refuse(v.denied == acl::Denied::kCommand
                 ? "ERR The user executing the script can't run this command or subcommand"
             : v.denied == acl::Denied::kKey
                 ? "ERR The user executing the script can't access at least one of the keys mentioned in the "
                   "command arguments"
                 : "ERR The user executing the script can't publish to the channel mentioned in the command");
      return;
    }
  }
  // What the primary's stream or the AOF runs is never refused.
  const bool obey = sc.is_master || loading_.active();
  if (!obey && replica_side_.refuses_stale(spec->flags)) {
    refuse("ERR Can not execute the command on a stale replica. The allow-stale flag must be set on the script to "
           "enable it.");
    return;
  }
  const bool write = spec->flags & cmd::kWrite;
  if (run.read_only && (spec->flags & (cmd::kWrite | cmd::kMayReplicate))) {
    refuse("ERR Write commands are not allowed from read-only scripts.");
    return;
  }
  // Once a script wrote, it is never failed on the server's state: it could
  // not be undone (Redis's SCRIPT_WRITE_DIRTY).
  if (write && !run.wrote && !obey) {
    if (replica_side_.refuses_writes()) {
      refuse("READONLY You can't write against a read only replica.");
      return;
    }
    if (!persistence_.ok()) {
      if (std::string misconf = persistence_.Error(); !misconf.empty()) {
        refuse(misconf);
        return;
      }
    }
    if (!replica_side_.is_replica() && primary_side_.TooFewGoodReplicas(UnixMs())) {
      refuse("NOREPLICAS Not enough good replicas to write.");
      return;
    }
  }
  if (!(run.flags & scripting::kAllowOom) && maxmemory_ > 0 && !obey && !run.wrote && run.oom_at_start &&
      (spec->flags & cmd::kDenyOom)) {
    refuse("OOM command not allowed when used memory > 'maxmemory'.");
    return;
  }
  // Cluster mode: the script's own calls stay on this node's slots (and in
  // one slot, but for a plain EVAL or allow-cross-slot-keys), as Redis
  // 7.0's scriptVerifyClusterState; the caller's ASKING and READONLY apply.
  if (cluster_ != nullptr && !obey && (spec->first_key > 0 || spec->find_keys != nullptr)) {
    RouteQuery q;
    q.write = write;
    if (Client* caller = current_client_; caller != nullptr && caller->conn != nullptr) {
      q.asking = cluster_->asking(caller->id());
      q.readonly = cluster_->readonly(caller->id());
    }
    core::Database& db0 = keyspace_.db(0);
    const int64_t now_ms = run.now_ms;
    int slot = -1;
    std::string error = cluster_->ScriptCallError(
        CommandKeys(*spec, argv), q, [&](std::string_view key) { return db0.FindNoTouch(key, now_ms) != nullptr; },
        &slot);
    // Keys of one slot, unless a plain EVAL or allow-cross-slot-keys.
    if (error.empty() && slot != -1 && !(run.flags & (scripting::kAllowCrossSlotKeys | scripting::kEvalCompat))) {
      if (run.slot == -1) {
        run.slot = slot;
      } else if (run.slot != slot) {
        error = "ERR Script attempted to access keys that do not hash to the same slot";
      }
    }
    if (!error.empty()) {
      refuse(error);
      return;
    }
  }
  if (write) run.wrote = true;
  propagation_.set_targets(run.repl);
  // Time stands still inside a script: its keys expire as of its start.
  Call(sc, *spec, argv, rb, run.now_ms, Clock::Ticks());
  propagation_.set_targets(scripting::kReplAll);
  // A read tracks the keys the script declared, for its caller (Redis's
  // call() tracks the caller's command); a script that reads nothing,
  // EVAL_RO included, tracks nothing (Server::Call skips script commands).
  Client* caller = current_client_;
  if ((spec->flags & cmd::kReadonly) && caller != nullptr && caller->tracking && !run.command.empty()) {
    if (const CommandSpec* script_spec = commands_.Find(run.command[0])) tracking_.TrackRead(*caller, *script_spec, run.command);
  }
}

// ---- ScriptingSide::Hooks ------------------------------------------------------------

void Server::RunScriptCommand(Client& script_client, scripting::ScriptRun& run, const CommandSpec* command, Argv argv,
                              io::OutBuffer& out) {
  // The script's client counts its errors as any client does (Redis's Lua
  // client is a client like the others).
  ClientErrors errors(*this, script_client);
  io::ReplyBuilder rb(&out, run.resp, &errors);
  CallFromScript(script_client, run, command, argv, rb);
}

bool Server::CallerMayRun(const CommandSpec& spec, Argv argv) {
  const acl::User& u = current_client_ != nullptr ? AclUserOf(*this, *current_client_) : acl_->default_user();
  return u.unrestricted || acl_->Check(u, spec, argv).ok();
}

void Server::ServeWhileBusy() {
  if (current_client_ == nullptr || current_client_->conn == nullptr) return;  // AOF loading: no clients yet
  io_->ProcessEventsWhileBusy(current_client_->conn);
}

}  // namespace ringkv::server
