// The command gate: Server::Execute, every command a client sends, as a
// fixed sequence of named steps in Redis 7.0's processCommand order, and
// Server::Call, the part shared with EXEC's queue, blocked clients' re-runs
// and scripts (the handler, propagation, limits, statistics). The AOF
// loader enters without a connection (Server::ExecuteFromAof): lookup and
// arity with Redis's load errors, then the handler alone.
//
// Execute's steps, in order (each refusal is a Reject, which also dooms an
// open MULTI, or discards it when the refused command is EXEC):
//    1. LookUp             unknown command / subcommand; the flags the
//                          checks judge by (EXEC by its queue, a script by
//                          what it declares)
//    2. CheckArity
//    3. CheckAuth          NOAUTH
//    4. CheckMultiAllowed  a no-multi command inside MULTI
//    5. CheckAcl           NOPERM: the client's user may not run the command
//                          or touch one of its keys or channels
//    6. CheckClusterSlot   cluster mode: MOVED, ASK, TRYAGAIN, CROSSSLOT,
//                          CLUSTERDOWN (EXEC: across its queue); nothing
//                          but a pointer test when standalone
//    7. CheckMemory        maxmemory: evict, then OOM
//    8. LimitTracking      tracking-table-max-keys (never refuses)
//    9. CheckPersistence   MISCONF
//   10. CheckReplication   NOREPLICAS, READONLY, RESP2 pub/sub context, MASTERDOWN
//   11. CheckLoading       LOADING
//   12. CheckBusyScript    BUSY
//   13. CheckReplicaLink   a replica's link (or a MONITOR) touching the keyspace
//   14. HoldIfPaused       CLIENT PAUSE: deferred until the pause ends
//   15. QueueIfInMulti     QUEUED
//   16. Call               execute; propagation (AOF, replicas); output
//                          limits; MONITOR; command stats, latency, slowlog
//   17. AfterCall          the client's own tracking invalidations after its
//                          reply; clients blocked on keys it made ready
// Keyspace events are raised by the writes themselves as they happen
// (Effects, KeyEvent), inside step 16.
//
// Cost: the steps are inline members of GateRun, a stack object; nothing is
// allocated and nothing is called virtually per command beyond what the
// checks did before they had names.
#include <algorithm>
#include <optional>

#include "core/strings.h"
#include "io/thread_check.h"
#include "server/acl/acl.h"
#include "server/acl/acl_clients.h"
#include "server/cluster/cluster_mode.h"
#include "server/command_table.h"
#include "server/errors.h"
#include "server/memory_stats.h"
#include "server/scripting/scripting.h"
#include "server/server.h"

namespace ringkv::server {

namespace {

// The commands MULTI does not queue: they act on the transaction itself.
bool RunsInsideMulti(const CommandSpec& spec) {
  static constexpr std::string_view kNames[] = {"exec", "discard", "multi", "watch", "quit", "reset"};
  for (std::string_view name : kNames) {
    if (spec.name == name) return true;
  }
  return false;
}

// What a RESP2 client with subscriptions may still run.
bool AllowedWhileSubscribed(const CommandSpec& spec) {
  static constexpr std::string_view kAllowed[] = {"ping",        "subscribe",    "unsubscribe", "psubscribe",
                                                  "punsubscribe", "ssubscribe", "sunsubscribe", "quit",
                                                  "reset"};
  for (std::string_view name : kAllowed) {
    if (spec.name == name) return true;
  }
  return false;
}

// Redis 7.0's "unknown command" error: the name and the first arguments,
// each quoted, the whole list cut at 128 characters.
std::string UnknownCommandError(Argv argv) {
  std::string args;
  for (size_t i = 1; i < argv.size() && args.size() < 128; ++i) {
    StrAppend(&args, "'", errors::UpToNul(argv[i].substr(0, 128 - args.size())), "' ");
  }
  std::string name(errors::UpToNul(argv[0].substr(0, 128)));
  return StrCat("ERR unknown command '", name, "', with args beginning with: ", args);
}

std::string WrongArity(const CommandSpec& spec) {
  return StrCat("ERR wrong number of arguments for '", spec.name, "' command");
}

// CLIENT REPLY: whether this command's reply is sent; moves SKIP along (the
// command after CLIENT REPLY SKIP is the one skipped). A replica's link gets
// no replies once it synced: only the stream.
bool TakeReplyMode(Client& c) {
  bool replying = c.reply_mode == ReplyMode::kOn && !c.is_replica && !c.is_master;
  if (c.reply_mode == ReplyMode::kSkipNext) {
    c.reply_mode = ReplyMode::kSkipThis;
    replying = false;
  } else if (c.reply_mode == ReplyMode::kSkipThis) {
    c.reply_mode = ReplyMode::kOn;
    replying = !c.is_replica && !c.is_master;
  }
  return replying;
}

}  // namespace

// One command's pass through Execute's steps: what they share. Each check
// returns true to go on; false when the command was refused (its error
// written), held back or queued, and the gate stops there.
struct Server::GateRun {
  Server& s;
  Client& c;
  Argv argv;
  io::ReplyBuilder& rb;
  const CommandSpec* spec;  // looked up; after LookUp, the (sub)command to run
  uint32_t flags = 0;       // what the checks judge by (after LookUp)
  int64_t now_ms;
  bool is_exec;   // EXEC of an open MULTI
  bool replying;  // CLIENT REPLY lets this command's reply through
  // The AOF loader's pass (ExecuteFromAof): a refusal is the load's error,
  // set here, not a reply. Null for every other caller.
  absl::Status* load_error = nullptr;

  // A refused command (counted as a rejected call of `refused` when there is
  // one); inside MULTI it also dooms the transaction (EXECABORT). A refused
  // EXEC, MULTI open or not, discards it at once and answers EXECABORT with
  // the refusal (Redis's execCommandAbort), whose own refusals carry no
  // "ERR " there (rejectCommandFormat's text).
  void Reject(std::string_view error, const CommandSpec* refused) {
    if (refused != nullptr) ++refused->rejected_calls;
    if (is_exec || (refused != nullptr && refused == s.exec_spec_)) {
      if (error.starts_with("ERR ")) error.remove_prefix(4);
      rb.Error(StrCat("EXECABORT Transaction discarded because of: ", error));
      s.transactions_.Discard(c);
    } else {
      rb.Error(error);
    }
    if (c.in_multi) s.transactions_.Abort(c);
  }

  // LookUp's refusals. The AOF loader's is Redis's load error, whatever
  // was not found (loadSingleAppendOnlyFile's "Unknown command"): an
  // unknown command or subcommand, or a container without one. Uncounted:
  // the load stops there. Out of line, as CheckArity's: the checks that
  // pass stay small enough to inline.
  [[gnu::cold, gnu::noinline]] bool RefuseLookUp(std::string_view error, const CommandSpec* refused) {
    if (load_error != nullptr) {
      *load_error = absl::DataLossError(StrCat("Unknown command '", argv[0].substr(0, 128), "'"));
    } else {
      Reject(error, refused);
    }
    return false;
  }

  // 1. As Redis's lastcmd, the command looked up is remembered even when
  // refused (CLIENT LIST, the log line of an error sent to the primary). A
  // container resolves its subcommand; one with a handler of its own
  // (COMMAND) runs that handler when called alone.
  //
  // The steps are inlined into Execute down to the test that lets an
  // ordinary command through (a plain command, no cluster, no maxmemory, no
  // MULTI, ...); the rest of each is out of line (`...Slow`, `gnu::noinline`),
  // so that a passing step costs its test and no call.
  [[gnu::always_inline]] bool LookUp() {
    c.last_command = spec;
    if (spec != nullptr && spec->subcommands.empty() && !is_exec && spec->script == CommandSpec::Script::kNone) {
      flags = spec->flags;
      return true;
    }
    return LookUpSlow();
  }
  [[gnu::noinline]] bool LookUpSlow() {
    if (spec == nullptr) return RefuseLookUp(UnknownCommandError(argv), nullptr);
    if (!spec->subcommands.empty() && (spec->container() || argv.size() >= 2)) {
      if (argv.size() < 2) return RefuseLookUp(WrongArity(*spec), spec);
      const CommandSpec* sub = CommandTable::FindSub(*spec, argv[1]);
      c.last_command = sub;
      if (sub == nullptr) {
        return RefuseLookUp(
            StrCat("ERR unknown subcommand '", errors::UpToNul(argv[1].substr(0, 128)), "'. Try ", AsciiUpper(spec->name), " HELP."),
            nullptr);
      }
      spec = sub;
    }
    // The checks judge EXEC by what it will run, EVAL & co. and FCALL & co.
    // by what their script declares.
    flags = spec->flags;
    if (is_exec) flags = s.transactions_.ExecFlags(c, flags);
    if (spec->script != CommandSpec::Script::kNone) {
      flags = s.scripting_ ? s.scripting_->GateFlags(*spec, argv, flags)
                           : scripting::Scripting::ShebangGateFlags(*spec, argv, flags);
    }
    return true;
  }

  // 2.
  bool CheckArity() {
    const int argc = static_cast<int>(argv.size());
    if ((spec->arity > 0 && argc != spec->arity) || argc < -spec->arity) return RefuseArity();
    return true;
  }

  // The AOF loader's refusal is its load error (uncounted). Redis's loader
  // checks no arity; ringkv's handlers rely on it, so a file holding such a
  // command (which no Redis writes) stops the load.
  [[gnu::cold, gnu::noinline]] bool RefuseArity() {
    if (load_error != nullptr) {
      *load_error = absl::DataLossError(StrCat("Wrong number of arguments for '", spec->name, "'"));
    } else {
      Reject(WrongArity(*spec), spec);
    }
    return false;
  }

  // 2b. DEBUG and MODULE LOAD / LOADEX / UNLOAD where enable-debug-command /
  // enable-module-command does not allow them (no; local: loopback clients
  // and Unix sockets only), as Redis's processCommand refuses them.
  [[gnu::always_inline]] bool CheckProtected() { return !(spec->flags & cmd::kProtected) || CheckProtectedSlow(); }
  [[gnu::noinline]] bool CheckProtectedSlow() {
    const bool debug = spec->name == "debug";
    const std::string& mode = s.config().Str(debug ? "enable-debug-command" : "enable-module-command");
    if (mode == "yes" || (mode == "local" && c.loopback)) return true;
    Reject(StrCat("ERR ", debug ? "DEBUG" : "MODULE", " command not allowed. If the ",
                  debug ? "enable-debug-command" : "enable-module-command",
                  " option is set to \"local\", you can run it from a local connection, otherwise you need to set "
                  "this option in the configuration file, and then restart the server."),
           spec);
    return false;
  }

  // 3. As Redis's authRequired: a default user without a password (and
  // enabled) lets every connection in.
  bool CheckAuth() {
    if (!c.authenticated && !(spec->flags & cmd::kNoAuth) && !s.acl_->DefaultAuthenticates()) {
      Reject(errors::kNoAuth, spec);
      return false;
    }
    return true;
  }

  // 4.
  bool CheckMultiAllowed() {
    if (c.in_multi && (spec->flags & cmd::kNoMulti)) {
      Reject("ERR Command not allowed inside a transaction", spec);
      return false;
    }
    return true;
  }

  // 5. ACL's permission check (commands, keys, channels), as Redis's
  // ACLCheckAllPerm: after NOAUTH and no-multi, before anything that evicts
  // or looks at the server's state. A user allowed everything (the default
  // user unless configured otherwise) costs a load and a branch. The
  // primary's link and the AOF loader run as no user.
  bool CheckAcl() {
    if (c.is_master || c.conn == nullptr) return true;
    if (c.meta == nullptr || c.meta->user == nullptr) {
      if (s.acl_->default_user().unrestricted) return true;
    } else if (c.meta->user->unrestricted) {
      return true;
    }
    const acl::Verdict v = AclCheck(s, c, *spec, argv, c.in_multi ? acl::LogContext::kMulti : acl::LogContext::kToplevel,
                                    now_ms);
    if (v.ok()) return true;
    Reject(acl::Acl::NoPermError(v.denied, *spec), spec);
    return false;
  }

  // 6. Cluster mode's slot check, as Redis's processCommand and
  // getNodeByQuery: a command with keys (or EXEC, by its queue) is served
  // here only when this node serves their one slot. Its primary's link and
  // the AOF loader are obeyed. A redirect is not an EXECABORT: EXEC is
  // discarded and answers the redirect itself, as in Redis.
  [[gnu::always_inline]] bool CheckClusterSlot() {
    return s.cluster_ == nullptr || c.is_master || c.conn == nullptr || CheckClusterSlotSlow();
  }
  [[gnu::noinline]] bool CheckClusterSlotSlow() {
    if (!is_exec && spec->first_key <= 0 && spec->find_keys == nullptr) return true;
    ClusterMode& cm = *s.cluster_;
    RouteQuery q;
    q.write = (flags & cmd::kWrite) != 0;
    // RESTORE-ASKING (the kAsking flag) enters an importing slot as if
    // ASKING had been sent, as Redis's getNodeByQuery.
    q.asking = cm.asking(c.id()) || (!is_exec && (flags & cmd::kAsking) != 0);
    q.readonly = cm.readonly(c.id());
    core::Database& db0 = s.keyspace_.db(0);
    auto exists = [&](std::string_view key) { return db0.FindNoTouch(key, now_ms) != nullptr; };
    auto is_shard_pubsub = [](const CommandSpec& cs) {
      return cs.name == "spublish" || cs.name == "ssubscribe" || cs.name == "sunsubscribe";
    };
    RouteBuilder b;
    if (is_exec) {
      const MultiState* ms = s.transactions_.Find(c);
      if (ms == nullptr) return true;
      std::vector<std::string_view> views;
      for (const QueuedCommand& qc : ms->commands) {
        views.assign(qc.argv.begin(), qc.argv.end());
        q.shard_pubsub = is_shard_pubsub(*qc.spec);
        q.migrate = false;
        cm.AddKeys(CommandKeys(*qc.spec, views), q, exists, &b);
      }
    } else {
      q.shard_pubsub = is_shard_pubsub(*spec);
      q.migrate = spec->name == "migrate";
      cm.AddKeys(CommandKeys(*spec, argv), q, exists, &b);
    }
    const Route r = cm.Finish(b, q);
    if (r.redirect == Redirect::kNone) return true;
    ++spec->rejected_calls;
    if (is_exec) {
      s.transactions_.Discard(c);
    } else if (c.in_multi) {
      s.transactions_.Abort(c);
    }
    rb.Error(cm.RedirectError(r, c.on_plain_connection()));
    if (!c.in_multi) cm.ClearAsking(c.id());
    return false;
  }

  // 7. maxmemory: evict first; refuse commands that may grow memory when
  // nothing more can be evicted. A replica is an exact copy of its primary:
  // with replica-ignore-maxmemory it evicts nothing of its own (the
  // primary's DELs do), nothing is evicted during CLIENT PAUSE (Redis's
  // isSafeToPerformEvictions), and a command of its primary's stream is
  // never refused, whatever the setting.
  [[gnu::always_inline]] bool CheckMemory() {
    s.pre_command_oom_ = false;
    return s.maxmemory_ <= 0 || CheckMemorySlow();
  }
  [[gnu::noinline]] bool CheckMemorySlow() {
    if (s.maxmemory_ > 0 && !(s.replica_side_.is_replica() && s.replica_ignore_maxmemory_) && !s.scripting_.busy() &&
        !s.clients_.pause().active()) {
      const uint64_t evict_start = s.latency_.monitor().threshold_ms() > 0 ? Clock::Ticks() : 0;
      const uint64_t evicted_before = s.stats_.evicted_keys;
      bool fits = s.evictor_.EvictUntil(s.keyspace_, s.keyspace_.access_policy(), s.counted_memory_,
                                        static_cast<size_t>(s.maxmemory_), now_ms, &s.stats_.evicted_keys);
      if (evict_start != 0) s.NoteEvictionLatency(evict_start, evicted_before, fits);
      s.stats_.NoteEvictionResult(fits, static_cast<uint64_t>(s.clock_.TicksToMicros(Clock::Ticks())));
      // Cut short by maxmemory-eviction-tenacity: not refused (Redis's
      // EVICT_RUNNING); the cron and the next command evict on.
      const bool oom = !fits && !s.evictor_.running();
      s.pre_command_oom_ = oom;
      // Inside MULTI every command but EXEC, DISCARD, QUIT and RESET is
      // refused too, as in Redis: the queue itself would grow without bound.
      if (oom && !c.is_master &&
          ((flags & cmd::kDenyOom) || (c.in_multi && spec != s.exec_spec_ && spec->name != "discard" &&
                                       spec->name != "quit" && spec->name != "reset"))) {
        Reject("OOM command not allowed when used memory > 'maxmemory'.", spec);
        return false;
      }
    }
    return true;
  }

  // 8. tracking-table-max-keys, as Redis's trackingLimitUsedSlots.
  bool LimitTracking() {
    s.tracking_.LimitTable();
    return true;
  }

  // 9. Persistence failing: writes (and PING, as in Redis) are refused --
  // but not the primary's: a replica panics rather than diverge, unless
  // replica-ignore-disk-write-errors.
  bool CheckPersistence() {
    if (!s.persistence_.ok() && ((flags & cmd::kWrite) || spec->name == "ping")) {
      if (std::string misconf = s.persistence_.Error(); !misconf.empty()) {
        if (!c.is_master) {
          Reject(misconf, spec);
          return false;
        }
        s.unexpected_errors_.ApplyDespiteDiskError(*spec);
      }
    }
    return true;
  }

  // 10. Replication's checks and RESP2's subscribed mode, in Redis's order:
  // NOREPLICAS, READONLY, the pub/sub context, MASTERDOWN.
  [[gnu::always_inline]] bool CheckReplication() {
    // Neither a replica, nor min-replicas set, nor a subscriber: nothing to check.
    return (!s.replica_side_.is_replica() && !s.primary_side_.min_replicas_set() && !c.pubsub) ||
           CheckReplicationSlow();
  }
  [[gnu::noinline]] bool CheckReplicationSlow() {
    const bool repl_gated = (s.replica_side_.is_replica() || s.primary_side_.min_replicas_set()) && !c.is_master;
    const bool pubsub_refused = c.pubsub && c.resp == 2 && !AllowedWhileSubscribed(*spec);
    if (!repl_gated && !pubsub_refused) return true;
    const char* err = repl_gated ? s.ReplicationGate(flags) : nullptr;
    std::string refusal;
    if (pubsub_refused && (err == nullptr || std::string_view(err).starts_with("MASTERDOWN"))) {
      refusal = StrCat("ERR Can't execute '", spec->name,
                       "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context");
      err = refusal.c_str();
    }
    if (err != nullptr) {
      Reject(err, spec);
      return false;
    }
    return true;
  }

  // 11. Loading -- a replica loading its primary's payload synchronously, or
  // DEBUG LOADAOF / RELOAD while a slow script of the file serves others
  // from its hook: only commands flagged `loading` run (for EXEC, every
  // queued one must be; Redis's order: before BUSY). During an async
  // (swapdb) load, what is flagged `no-async-loading` waits for its end.
  bool CheckLoading() {
    if ((((s.loading_.active() && !s.replica_side_.async_loading()) || s.replica_side_.sync_loading()) &&
         (!(flags & cmd::kLoading) || (is_exec && !s.transactions_.QueueRunsWhileLoading(c)))) ||
        (s.replica_side_.async_loading() && (flags & cmd::kNoAsyncLoading))) {
      Reject(errors::kLoading, spec);
      return false;
    }
    return true;
  }

  // 12. A script ran too long: only what may run beside it does (SCRIPT
  // KILL, FUNCTION KILL, SHUTDOWN NOSAVE, connection and transaction
  // commands).
  bool CheckBusyScript() {
    if (s.scripting_.busy() && !(spec->flags & cmd::kAllowBusy)) {
      Reject(s.scripting_->BusyError(), spec);
      return false;
    }
    return true;
  }

  // 13. A replica's link (and a MONITOR, which Redis treats as one) may not
  // touch the keyspace.
  bool CheckReplicaLink() {
    if ((c.is_replica || c.monitor) && (flags & (cmd::kWrite | cmd::kReadonly | cmd::kMayReplicate))) {
      Reject("ERR Replica can't interact with the keyspace", spec);
      return false;
    }
    return true;
  }

  // 14. CLIENT PAUSE WRITE holds back what may write: EXEC by its queue, a
  // script by what it declares. The command runs when the pause ends.
  bool HoldIfPaused() {
    if (s.clients_.pause().Holds(flags) && !c.is_master) {
      if (!replying) c.reply_mode = ReplyMode::kSkipNext;  // the skip applies when it runs
      s.clients_.Defer(c, argv);
      return false;
    }
    return true;
  }

  // 15. Inside MULTI, what does not act on the transaction itself is queued
  // (a script as it declares itself, as Redis's queueMultiCommand).
  [[gnu::always_inline]] bool QueueIfInMulti() { return !c.in_multi || QueueIfInMultiSlow(); }
  [[gnu::noinline]] bool QueueIfInMultiSlow() {
    if (!RunsInsideMulti(*spec)) {
      s.transactions_.Queue(c, *spec, argv, flags);
      rb.SimpleString("QUEUED");
      return false;
    }
    return true;
  }

  // 17.
  [[gnu::always_inline]] void AfterCall() {
    if (s.cluster_ != nullptr || c.tracking || s.blocking_.has_ready() || s.tracking_.has_pending()) AfterCallSlow();
  }
  [[gnu::noinline]] void AfterCallSlow() {
    // ASKING lasts one command (or, once in MULTI, until its EXEC).
    if (s.cluster_ != nullptr && spec->name != "asking" && !c.in_multi) s.cluster_->ClearAsking(c.id());
    s.tracking_.FlushPending(c);
    if (c.tracking) {
      // CLIENT CACHING applies to the next command only (CLIENT commands and
      // queued ones do not use it up), as in Redis.
      if (ClientTracking* t = s.tracking_.Find(c.id());
          t != nullptr && !c.in_multi && !spec->name.starts_with("client|")) {
        s.tracking_.EndCommand(*t);
      }
    }
    if (s.blocking_.has_ready()) s.blocking_.ServeReadyKeys();
  }
};

// Step 10's rules: the primary side's min-replicas (NOREPLICAS), the replica
// side's READONLY and MASTERDOWN.
const char* Server::ReplicationGate(uint32_t flags) const {
  const bool write = flags & cmd::kWrite;
  if (replica_side_.is_replica()) return replica_side_.GateRefusal(flags);
  if (write && primary_side_.TooFewGoodReplicas(UnixMs())) return "NOREPLICAS Not enough good replicas to write.";
  return nullptr;
}

void Server::Execute(Client& c, Argv argv, const io::PrefetchSlot* prefetched) {
  RINGKV_DCHECK_MAIN_THREAD();
  const uint64_t start_ticks = Clock::Ticks();
  const int64_t now_ms = clock_.WallMsAt(start_ticks);
  c.last_interaction_s = static_cast<uint32_t>(now_ms / 1000);
  bool replying = TakeReplyMode(c);
  const CommandSpec* spec = prefetched != nullptr && prefetched->what != nullptr
                                ? static_cast<const CommandSpec*>(prefetched->what)
                                : commands_.Find(argv[0]);
  // RESET turns replies back on before it answers, as in Redis.
  if (!replying && spec != nullptr && spec->name == "reset") [[unlikely]] replying = true;
  // The first key's hash, from the prefetch: for this command only (its
  // argv views are what the hint is keyed by).
  std::optional<core::Keyspace::KnownKeyHashScope> known_hash;
  if (prefetched != nullptr && prefetched->arg != 0 && prefetched->arg < argv.size()) {
    known_hash.emplace(keyspace_, argv[prefetched->arg], prefetched->hash,
                       core::KnownEntry{static_cast<const core::Database*>(prefetched->found_in),
                                        prefetched->found_stamp, static_cast<const core::Entry*>(prefetched->found)});
  }
  // appendfsync always: replies that may depend on unsynced AOF bytes wait
  // for the fsync (DurableReplies); so does everything after them.
  // EXEC is taken for a write: its replies may depend on the writes it runs.
  const bool is_exec = c.in_multi && spec == exec_spec_;
  // A command queued by MULTI only answers QUEUED: no write yet.
  const bool writes = spec != nullptr && (is_exec || ((spec->flags & cmd::kWrite) && !c.in_multi));
  // Errors are counted as they are written (INFO errorstats); the listener
  // costs nothing until one is.
  io::OutBuffer discard;
  ClientErrors errors(*this, c);
  io::ReplyBuilder rb(replying ? &ReplyTarget(c, writes) : c.is_replica ? &replica_replies_ : &discard, c.resp,
                      &errors);
  GateRun run{*this, c, argv, rb, spec, 0, now_ms, is_exec, replying};
  const bool runs = run.LookUp() && run.CheckArity() && run.CheckProtected() && run.CheckAuth() && run.CheckMultiAllowed() &&
                    run.CheckAcl() && run.CheckClusterSlot() && run.CheckMemory() && run.LimitTracking() &&
                    run.CheckPersistence() && run.CheckReplication() && run.CheckLoading() &&
                    run.CheckBusyScript() && run.CheckReplicaLink() && run.HoldIfPaused() && run.QueueIfInMulti();
  if (runs) {
    Call(c, *run.spec, argv, rb, now_ms, start_ticks);
    run.AfterCall();
  }
  if (!c.authenticated) [[unlikely]] {
    if (!acl_->DefaultAuthenticates()) clients_.LimitUnauthenticatedOutput(c, now_ms);
  }
}

absl::Status Server::ExecuteFromAof(Client& c, Argv argv, bool in_transaction) {
  RINGKV_DCHECK_MAIN_THREAD();
  const int64_t now_ms = UnixMs();
  // Replies are dropped. Errors in them (wrong type & co.) do not stop the
  // load, as in Redis: they are counted and logged, or panic
  // (propagation-error-behavior; CountErrorReply knows the AOF client).
  io::OutBuffer discard;
  ClientErrors errors(*this, c);
  io::ReplyBuilder rb(&discard, 2, &errors);
  absl::Status refused;
  GateRun run{*this, c, argv, rb, commands_.Find(argv[0]), 0, now_ms, false, false, &refused};
  // The file is obeyed, as the primary's link is: after the lookup and the
  // arity, no check refuses, holds or queues it (ACL, cluster slot, OOM,
  // MISCONF, READONLY, LOADING, BUSY, pause; MULTI blocks are the reader's,
  // ReplayAofFile).
  if (!run.LookUp() || !run.CheckArity()) return refused;
  // Step 16 reduced to the handler, as Redis's loader calls cmd->proc
  // without call(): nothing is propagated (the file is what was), counted
  // in commandstats, fed to MONITOR or logged as slow.
  // A command of a MULTI block runs, at its EXEC, on a client still in
  // MULTI, as Redis's loader runs it: a nested MULTI or a WATCH answers
  // its error, logged as "after processing the command 'exec'" (the command
  // running, as in Redis).
  c.in_multi = in_transaction;
  if (in_transaction) c.last_command = exec_spec_;
  ServerCommandContext ctx{*this, c, rb, argv, now_ms, keyspace_, keyspace_.db(c.db)};
  run.spec->Run(ctx);
  c.in_multi = false;
  propagation_.DropForms();
  return absl::OkStatus();
}

void Server::RecordCall(const Client& c, const CommandSpec& spec, Argv argv, int64_t duration_us, int64_t now_ms,
                        bool new_call) {
  spec.usec += static_cast<uint64_t>(duration_us);
  if (new_call) [[likely]] {
    ++spec.calls;
    ++stats_.total_commands;
    latency_.RecordCommand(spec, duration_us);
  } else {
    latency_.RecordHistogram(spec, duration_us);  // a served blocked command: no latency event, as Redis
  }
  // A script's own commands are not logged: the script is (as Redis).
  if (slowlog_.ShouldRecord(duration_us) && !(spec.flags & cmd::kSkipSlowlog) && c.conn != nullptr) {
    slowlog_.Record(argv, duration_us, now_ms, c.conn->peer.ToString(), c.meta ? c.meta->name : "");
  }
}

void Server::Call(Client& c, const CommandSpec& spec, Argv argv, io::ReplyBuilder& rb, int64_t now_ms,
                  uint64_t start_ticks) {
  RINGKV_DCHECK_MAIN_THREAD();
  c.last_command = &spec;  // CLIENT LIST shows the command being run, as Redis does
  // A served blocked command runs again (BlockedClients::Unblock): it was
  // counted when it blocked. Only this call is that run, not the ones it makes.
  const int64_t rerun_first_call_us = std::exchange(rerun_first_call_us_, -1);
  ServerCommandContext ctx{*this, c, rb, argv, now_ms, keyspace_, keyspace_.db(c.db)};
  ctx.serving_blocked = rerun_first_call_us >= 0;
  if (ctx.serving_blocked) ctx.served_key = std::exchange(rerun_served_key_, {});  // (set only with a re-run)
  const uint64_t dirty_before = stats_.dirty;
  const bool was_blocked = c.blocked;
  // EVAL & co. and FCALL & co. (skip_monitor) are shown before the
  // commands their script runs, as Redis's evalCommand feeds them first.
  if (spec.script != CommandSpec::Script::kNone && !monitors_.empty()) FeedMonitors(c, argv, UnixUs());
  // Execute. A script's commands run on behalf of its caller.
  Client* const outer_client = current_client_;
  if (c.conn != nullptr || outer_client == nullptr) current_client_ = &c;
  errors_mark_ = stats_.total_error_replies;
  // A write command's every lookup passes a running snapshot's barrier.
  const bool outer_write = keyspace_.set_in_write_command((spec.flags & cmd::kWrite) != 0);
  spec.Run(ctx);
  ReleaseAllPushes(c);  // the pushes it made after its reply point (HeldPushes)
  keyspace_.set_in_write_command(outer_write);
  current_client_ = outer_client;
  // Failed: an error was counted since the last command that ran inside
  // this one (EXEC's queue, a script's calls) or since the start -- Redis's
  // rule, so EXEC and EVAL are not failed by their commands' errors.
  if (stats_.total_error_replies > errors_mark_) ++spec.failed_calls;
  errors_mark_ = stats_.total_error_replies;
  // A script's keys are tracked when it calls a read command (CallFromScript).
  if (c.tracking && (spec.flags & cmd::kReadonly) && spec.script == CommandSpec::Script::kNone) {
    tracking_.TrackRead(c, spec, argv);
  }
  // EXEC and scripts propagate what their commands wrote themselves; a
  // reset of dirty (SAVE) is no write.
  if ((stats_.dirty > dirty_before || propagation_.has_forms()) && &spec != exec_spec_) PropagateCall(c, spec, argv);
  if (c.held_replies) persistence_.RequireDurable(c.id());
  clients_.LimitOutput(c, now_ms);  // client-output-buffer-limit, maxmemory-clients
  const int64_t duration = clock_.TicksToMicros(Clock::Ticks() - start_ticks);
  if (!monitors_.empty() && !(spec.flags & (cmd::kSkipMonitor | cmd::kAdmin))) FeedMonitors(c, argv, UnixUs());
  // As Redis 7.0: a command that blocked is counted now (calls, usec,
  // total_commands_processed); its latency histogram waits for how it
  // unblocks (BlockedClients::Unblock).
  if (c.blocked && !was_blocked && blocking_.NoteFirstCall(c.id(), duration)) {
    if (rerun_first_call_us < 0) {
      ++spec.calls;
      spec.usec += static_cast<uint64_t>(duration);
      ++stats_.total_commands;
    }
    return;
  }
  // Served, it was counted when it blocked: the time of both runs, and no second call.
  const bool served = rerun_first_call_us >= 0;
  RecordCall(c, spec, argv, served ? rerun_first_call_us + duration : duration, now_ms, /*new_call=*/!served);
}

void Server::PropagateCall(Client& c, const CommandSpec& spec, Argv argv) {
  if (spec.script != CommandSpec::Script::kNone) {
    propagation_.DropForms();  // a script's commands propagated themselves
  } else {
    propagation_.PropagateCommand(c.db, argv);
  }
  c.woff = persistence_.aof().fed_offset();
  c.repl_woff = master_repl_offset();
  // A writable replica's own writes: the deadlines they set are its to keep.
  if (replica_side_.is_replica() && !c.is_master) replica_side_.RememberOwnVolatileKeys(c, spec, argv);
}

}  // namespace ringkv::server
