#include "core/strings.h"
#include "server/server.h"

#include <sched.h>
#include <sys/time.h>

#include <chrono>
#include <csignal>
#include <cstring>

#include "absl/random/random.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "io/thread_check.h"
#include "server/errors.h"
#include "server/logging.h"
#include "server/memory_stats.h"
#include "server/scripting/scripting.h"

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

std::string RandomHex(int n) {
  absl::BitGen gen;
  static const char kHex[] = "0123456789abcdef";
  std::string s(n, '0');
  for (char& c : s) c = kHex[absl::Uniform(gen, 0, 16)];
  return s;
}

// Redis 7.0's "unknown command" error: the name and the first arguments,
// each quoted, the whole list cut at 128 characters.
std::string UnknownCommandError(Argv argv) {
  std::string args;
  for (size_t i = 1; i < argv.size() && args.size() < 128; ++i) {
    StrAppend(&args, "'", argv[i].substr(0, 128 - args.size()), "' ");
  }
  std::string name(argv[0].substr(0, 128));
  return StrCat("ERR unknown command '", name, "', with args beginning with: ", args);
}

}  // namespace

Server::Server(std::unique_ptr<Config> config)
    : config_(std::move(config)),
      keyspace_(static_cast<int>(config_->Int("databases"))),
      io_(std::make_unique<io::IoSystem>(this)) {
  RegisterAllCommands(commands_);
  exec_spec_ = commands_.Find("exec");
  run_id_ = RandomHex(40);
  rdb_ = std::make_unique<RdbSaver>(config_.get(), &keyspace_, &child_);
  aof_ = std::make_unique<Aof>(config_.get(), &keyspace_, &child_,
                               [this](int fd, uint32_t token) { io_->SubmitFsync(fd, token); });
  keyspace_.set_observer(this);
  child_.set_on_running_changed([this](bool running) {
    keyspace_.SetForkChildActive(running);
    if (running) OnForked();
  });
  rdb_->set_repl_info([this] { return ReplSaveInfo(); });
  rdb_->set_functions_source([this] { return FunctionLibraryCodes(); });
  aof_->set_functions_source([this] { return FunctionLibraryCodes(); });
  rdb_->set_latency_monitor(&latency_);
  aof_->set_latency_monitor(&latency_);
  BindConnectionConfig();
  BindListenerConfig();
  BindMemoryConfig();
  BindPersistenceConfig();
  BindReplicationConfig();
  BindOutputLimitConfig();
  BindNotifyConfig();
  BindTrackingConfig();
  BindErrorConfig();
  BindLatencyConfig();
}

Server::~Server() = default;

bool Server::DeleteKey(core::Database& db, std::string_view key, int64_t now_ms, bool async) {
  RINGKV_DCHECK_MAIN_THREAD();
  core::Entry* e = db.Find(key, now_ms);
  if (e == nullptr) return false;
  constexpr size_t kLazyFreeThreshold = 64;
  if (async && e->value.FreeEffort() > kLazyFreeThreshold) {
    lazy_freer_.Free(std::make_unique<core::Value>(std::move(e->value)), 1);
  }
  return db.Erase(key);
}

// Clients and the cron: what accept, each command and each tick read.
void Server::BindConnectionConfig() {
  Config& c = *config_;
  c.Bind("requirepass", [this] { requirepass_set_ = !config_->Str("requirepass").empty(); });
  c.Bind("maxclients", &maxclients_);
  c.Bind("timeout", &timeout_s_);
  c.Bind("hz", [this] { hz_ = static_cast<int>(std::clamp<int64_t>(config_->Int("hz"), 1, 500)); });
  c.Bind("slowlog-log-slower-than", &slowlog_threshold_us_);
  c.Bind("slowlog-max-len", [this] {
    slowlog_max_len_ = static_cast<size_t>(config_->Int("slowlog-max-len"));
    while (slowlog_.size() > slowlog_max_len_) slowlog_.pop_back();
  });
  c.Bind("loglevel", [this] { SetLogLevel(LogLevelFromName(config_->Str("loglevel"))); });
  c.Bind("proto-max-bulk-len", [this] {
    io_->limits().max_bulk_len.store(config_->Int("proto-max-bulk-len"), std::memory_order_relaxed);
  });
  c.Bind("client-query-buffer-limit", [this] {
    io_->limits().query_buffer_limit.store(config_->Int("client-query-buffer-limit"), std::memory_order_relaxed);
  });
  // Authentication state of existing clients follows requirepass, as in Redis:
  // setting a password does not log out clients that are already connected.
}

// CONFIG SET port / bind rebinds at once (only once the server is listening,
// not at start-up); tcp-keepalive applies to new connections.
void Server::BindListenerConfig() {
  config_->OnChange("tcp-keepalive", [this] {
    io_->set_tcp_keepalive(static_cast<int>(config_->Int("tcp-keepalive")));
    return absl::OkStatus();
  });
  auto rebind = [this](const char* reason) {
    return [this, reason]() -> absl::Status {
      if (start_time_ms_ == 0) return absl::OkStatus();
      std::vector<std::string> bind;
      for (std::string_view b : Split(config_->Str("bind"), ' ', true)) bind.emplace_back(b);
      absl::Status s = io_->Rebind(bind, static_cast<int>(config_->Int("port")));
      if (!s.ok()) {
        Log(kWarning, StrCat("Rebinding failed: ", ToStd(s.message())));
        return absl::UnavailableError(reason);
      }
      for (const std::string& addr : io_->listening_addresses()) Log(kNotice, StrCat("Listening on ", addr));
      return absl::OkStatus();
    };
  };
  config_->OnChange("port", rebind("Unable to listen on this port"));
  config_->OnChange("bind", rebind("Failed to bind to specified addresses."));
}

// maxmemory and eviction, the collections' encodings, lazy frees of DEL and
// implicit deletions.
void Server::BindMemoryConfig() {
  Config& c = *config_;
  c.Bind("replica-ignore-maxmemory", &replica_ignore_maxmemory_);
  // As Redis's updateMaxmemory: a limit below what is used evicts at once,
  // not at the next command.
  c.Bind("maxmemory", [this] {
    maxmemory_ = config_->Int("maxmemory");
    // At start-up (no client yet) eviction waits for the first command.
    if (maxmemory_ <= 0 || clients_.empty() || pause_until_ms_ > 0 || (master_ && replica_ignore_maxmemory_)) return;
    if (const size_t used = AllocatedBytes(); static_cast<size_t>(maxmemory_) < used) {
      Log(kWarning, StrCat("WARNING: the new maxmemory value set via CONFIG SET (", maxmemory_,
                           ") is smaller than the current memory usage (", used,
                           "). This will result in key eviction and/or the inability to accept new write commands "
                           "depending on the maxmemory-policy."));
    }
    evictor_.EvictUntil(keyspace_, keyspace_.access_policy(), AllocatedBytes, static_cast<size_t>(maxmemory_),
                        clock_.WallMs(), &stats_.evicted_keys);
  });
  core::AccessPolicy& access = keyspace_.access_policy();
  c.Bind("maxmemory-policy", [this, &access] {
    core::ParseEvictionPolicy(config_->Str("maxmemory-policy"), &access.policy);
  });
  c.Bind("maxmemory-samples", &access.samples);
  c.Bind("lfu-log-factor", &access.lfu_log_factor);
  c.Bind("lfu-decay-time", &access.lfu_decay_time);
  core::CollectionLimits& limits = keyspace_.limits();
  c.Bind("hash-max-listpack-entries", &limits.hash.max_listpack_entries);
  c.Bind("hash-max-listpack-value", &limits.hash.max_listpack_value);
  c.Bind("list-max-listpack-size", &limits.list.fill);
  c.Bind("list-compress-depth", &limits.list.compress_depth);
  c.Bind("set-max-intset-entries", &limits.set.max_intset_entries);
  c.Bind("zset-max-listpack-entries", &limits.zset.max_listpack_entries);
  c.Bind("zset-max-listpack-value", &limits.zset.max_listpack_value);
  c.Bind("stream-node-max-bytes", &limits.stream.node_max_bytes);
  c.Bind("stream-node-max-entries", &limits.stream.node_max_entries);
  c.Bind("lazyfree-lazy-user-del", &lazy_user_del_);
  c.Bind("lazyfree-lazy-server-del", &lazy_server_del_);
}

io::IoOptions Server::ListenerOptions() const {
  io::IoOptions opts;
  opts.port = static_cast<int>(config_->Int("port"));
  opts.tcp_backlog = static_cast<int>(config_->Int("tcp-backlog"));
  opts.tcp_keepalive = static_cast<int>(config_->Int("tcp-keepalive"));
  opts.bind = absl::StrSplit(config_->Str("bind"), ' ', absl::SkipEmpty());
  return opts;
}

absl::Status Server::Listen() { return io_->Listen(ListenerOptions()); }

absl::Status Server::Start() {
  io::IoOptions opts = ListenerOptions();
  opts.threads = static_cast<int>(config_->Int("io-threads"));
  // An I/O thread without a CPU of its own only adds hand-offs: each one is a
  // context switch on the shared CPU, and measured here that costs more than
  // the thread saves. Cap at the CPUs this process may run on.
  cpu_set_t cpus;
  if (opts.threads > 1 && sched_getaffinity(0, sizeof(cpus), &cpus) == 0 && CPU_COUNT(&cpus) < opts.threads) {
    Log(kWarning, StrCat("io-threads ", opts.threads, " reduced to ", CPU_COUNT(&cpus),
                         ": this process may run on only ", CPU_COUNT(&cpus), " CPU(s) (affinity mask)"));
    opts.threads = CPU_COUNT(&cpus);
  }
  start_time_ms_ = UnixMs();
  lru_clock_ = static_cast<uint32_t>(start_time_ms_ / 1000);
  startup_allocated_ = AllocatedBytes();
  if (absl::Status s = LoadData(); !s.ok()) return s;
  start_time_ms_ = UnixMs();
  if (absl::Status s = io_->Start(opts); !s.ok()) return s;
  // replicaof in the configuration: connect once serving.
  std::vector<std::string_view> primary = Split(config_->Str("replicaof"), ' ', true);
  if (primary.size() == 2) {
    int64_t port = 0;
    core::StringToInt64(primary[1], &port);
    ReplicaOf(std::string(primary[0]), static_cast<int>(port));
    master_->db = restored_stream_db_;  // the stream after our own RDB continues there
  }
  return absl::OkStatus();
}

int Server::Run() {
  io_->Run();
  io_->Shutdown();
  const std::string& pidfile = config_->Str("pidfile");
  if (!pidfile.empty()) {
    Log(kNotice, "Removing the pid file.");
    unlink(pidfile.c_str());
  }
  Log(kWarning, "ringkv is now ready to exit, bye bye...");
  return 0;
}

void Server::RequestShutdown(int signal) {
  // The main loop does the shutdown work (saving may fail and cancel it).
  shutdown_signal_ = signal;
  io_->WakeMain();
}

Client* Server::FindClient(uint64_t id) {
  auto it = clients_.find(id);
  return it == clients_.end() ? nullptr : it->second.get();
}

std::string Server::OnAccept(const io::SocketAddress& peer) {
  if (static_cast<int64_t>(clients_.size()) >= maxclients_) {
    ++stats_.rejected_connections;
    return StrCat("-", errors::kMaxClients, "\r\n");
  }
  // Protected mode (Redis 7.0): no password for the default user and a
  // non-loopback peer, whatever `bind` says.
  if (config_->Bool("protected-mode") && !requirepass_set_ && !peer.IsLoopback()) {
    ++stats_.rejected_connections;
    return errors::kProtectedMode;
  }
  return {};
}

void Server::OnOpen(io::Connection* conn) {
  auto client = std::make_unique<Client>();
  client->conn = conn;
  client->created_s = client->last_interaction_s = static_cast<uint32_t>(UnixMs() / 1000);
  client->authenticated = !requirepass_set_;
  client->loopback = conn->peer.IsLoopback();
  conn->owner = client.get();
  io_->SetAuthenticated(conn, client->authenticated);
  ++stats_.total_connections;
  clients_[client->id()] = std::move(client);
}

void Server::OnClose(io::Connection* conn) {
  auto* c = static_cast<Client*>(conn->owner);
  if (c == nullptr) return;
  conn->owner = nullptr;
  if (c->held_replies) durable_.Drop(c->id());
  ResetClientState(*c);
  if (c->pubsub) pubsub_.RemoveClient(c->id());
  if (c->over_soft_limit) over_soft_limit_since_.erase(c->id());
  ForgetReplica(c->id());  // replicas, and links still in their handshake
  if (c->is_master && master_ && master_->client_id == c->id()) OnMasterLinkClosed(*c);
  clients_.erase(c->id());
}

void Server::CloseClient(Client& c) {
  c.closing = true;
  io_->CloseAfterReply(c.conn);
}

void Server::OnProtocolError(io::Connection* conn, std::string_view message) {
  auto* c = static_cast<Client*>(conn->owner);
  if (c == nullptr || c->closing) return;
  ClientErrors errors(*this, *c);
  io::ReplyBuilder rb(&io_->PrepareWrite(conn), c->resp, &errors);
  rb.Error(StrCat("ERR ", message));
  Log(kVerbose, StrCat("Protocol error (", message, ") from client: id=", c->id(), " addr=", conn->peer.ToString(),
                             ". Closing the client."));
  CloseClient(*c);
}

void Server::OnCommand(io::Connection* conn, std::span<const std::string_view> argv) {
  auto* c = static_cast<Client*>(conn->owner);
  if (c == nullptr || c->closing) return;
  if (c->deferred) {  // keep order behind commands held back by CLIENT PAUSE
    Defer(*c, argv);
    return;
  }
  if (c->is_master) {
    if (script_busy_ || (master_ && !master_->held.empty())) {
      if (master_) master_->held.emplace_back(argv.begin(), argv.end());
      return;
    }
    ExecuteFromMaster(*c, argv);
    return;
  }
  if (c->is_replica) {
    ExecuteFromReplica(*c, argv);
    return;
  }
  Execute(*c, argv);
}

void Server::ExecuteFromReplica(Client& c, Argv argv) {
  // The link carries the stream one way: a replica's command that answers
  // anything (REPLCONF ACK answers nothing) is a rogue replica's, and it is
  // disconnected, as Redis does.
  replica_replies_.Clear();
  Execute(c, argv);
  if (replica_replies_.empty() || c.closing) return;
  const std::string reply = replica_replies_.ToString();
  replica_replies_.Clear();
  // The command as looked up (Redis's lastcmd), whether it ran or was refused.
  const CommandSpec* spec = commands_.Find(argv[0]);
  if (spec != nullptr && !spec->subcommands.empty() && argv.size() >= 2) spec = CommandTable::FindSub(*spec, argv[1]);
  const std::string name = spec != nullptr ? spec->name : std::string("<unknown>");
  Log(kWarning, StrCat("Replica generated a reply to command '", name, "', disconnecting it: ",
                       ClientInfoLine(c, UnixMs())));
  if (reply[0] == '-') {
    Log(kWarning, StrCat("== CRITICAL == This master is sending an error to its replica: '",
                         std::string_view(reply).substr(1, reply.find("\r\n") - 1), "' after processing the command '",
                         name, "'"));
  }
  DropReplica(c.id());
}

void Server::Prefetch(io::Connection* conn, std::span<const std::string_view> argv, int stage) {
  auto* c = static_cast<Client*>(conn->owner);
  if (c == nullptr || argv.size() < 2) return;
  const CommandSpec* spec = commands_.Find(argv[0]);
  if (spec == nullptr) return;
  // The first key: at its fixed position, or after a key count (EVAL &
  // co., FCALL & co.: `script numkeys key ...`; ZUNION & co.).
  size_t at = static_cast<size_t>(spec->first_key);
  if (spec->first_key <= 0) {
    const size_t count_at = spec->numkeys_index;
    if (count_at == 0 || argv.size() <= count_at + 1 || argv[count_at] == "0") return;
    at = count_at + 1;
  }
  if (argv.size() <= at) return;
  keyspace_.db(c->db).Prefetch(argv[at], stage);
}

bool Server::ShouldPause(uint32_t flags) const {
  if (pause_until_ms_ == 0) return false;
  if (pause_all_) return true;
  return (flags & (cmd::kWrite | cmd::kMayReplicate)) != 0;
}

void Server::Defer(Client& c, Argv argv) {
  if (!c.deferred) c.deferred = std::make_unique<DeferredCommands>();
  c.deferred->commands.emplace_back(argv.begin(), argv.end());
  if (!c.paused_wait && !c.blocked) {  // a blocked client resumes on unblocking
    c.paused_wait = true;
    paused_clients_.push_back(c.id());
  }
}

void Server::Execute(Client& c, Argv argv) {
  RINGKV_DCHECK_MAIN_THREAD();
  const int64_t now_ms = clock_.WallMs();
  c.last_interaction_s = static_cast<uint32_t>(now_ms / 1000);
  io::OutBuffer discard;
  // A replica's link gets no replies once it synced: only the stream.
  bool replying = c.reply_mode == ReplyMode::kOn && !c.is_replica && !c.is_master;
  if (c.reply_mode == ReplyMode::kSkipNext) {
    c.reply_mode = ReplyMode::kSkipThis;
    replying = false;
  } else if (c.reply_mode == ReplyMode::kSkipThis) {
    c.reply_mode = ReplyMode::kOn;
    replying = !c.is_replica && !c.is_master;
  }
  const CommandSpec* spec = commands_.Find(argv[0]);
  // appendfsync always: replies that may depend on unsynced AOF bytes wait
  // for the fsync (DurableReplies); so does everything after them.
  // EXEC is taken for a write: its replies may depend on the writes it runs.
  const bool is_exec = c.in_multi && spec == exec_spec_;
  // A command queued by MULTI only answers QUEUED: no write yet.
  const bool writes = spec != nullptr && (is_exec || ((spec->flags & cmd::kWrite) && !c.in_multi));
  // Errors are counted as they are written (INFO errorstats); the listener
  // costs nothing until one is.
  ClientErrors errors(*this, c);
  io::ReplyBuilder rb(replying ? &ReplyTarget(c, writes) : c.is_replica ? &replica_replies_ : &discard, c.resp,
                      &errors);
  // A refused command (counted as a rejected call of the command when there
  // is one); inside MULTI it also dooms the transaction (EXECABORT), and a
  // refused EXEC discards it at once.
  auto reject = [&](std::string_view error, const CommandSpec* refused) {
    if (refused != nullptr) ++refused->rejected_calls;
    if (is_exec) {
      rb.Error(StrCat("EXECABORT Transaction discarded because of: ", error));
      DiscardMulti(c);
    } else {
      rb.Error(error);
    }
    if (c.in_multi) multi_[c.id()]->aborted = true;
  };

  // As Redis's lastcmd: the command looked up, even when refused (CLIENT
  // LIST, the log line of an error sent to the primary).
  c.last_command = spec;
  if (spec == nullptr) {
    reject(UnknownCommandError(argv), nullptr);
    return;
  }
  // A container resolves its subcommand; one with a handler of its own
  // (COMMAND) runs that handler when called alone.
  if (!spec->subcommands.empty() && (spec->handler == nullptr || argv.size() >= 2)) {
    if (argv.size() < 2) {
      reject(StrCat("ERR wrong number of arguments for '", spec->name, "' command"), spec);
      return;
    }
    const CommandSpec* sub = CommandTable::FindSub(*spec, argv[1]);
    c.last_command = sub;
    if (sub == nullptr) {
      reject(StrCat("ERR unknown subcommand '", argv[1].substr(0, 128), "'. Try ", AsciiUpper(spec->name), " HELP."),
             nullptr);
      return;
    }
    spec = sub;
  }
  // The gates judge EXEC by what it will run.
  uint32_t flags = spec->flags;
  if (is_exec) {
    const MultiState& m = *multi_[c.id()];
    flags |= m.flags & (cmd::kWrite | cmd::kDenyOom | cmd::kMayReplicate);
    flags &= ~(m.inv_flags & cmd::kStale);  // one command not allowed on a stale replica: EXEC is not
  }
  // EVAL & co. and FCALL & co. are judged by what their script declares.
  if (spec->script != CommandSpec::Script::kNone) {
    flags = scripting_ ? scripting_->GateFlags(*spec, argv, flags) : scripting::Scripting::ShebangGateFlags(*spec, argv, flags);
  }
  const int argc = static_cast<int>(argv.size());
  if ((spec->arity > 0 && argc != spec->arity) || argc < -spec->arity) {
    reject(StrCat("ERR wrong number of arguments for '", spec->name, "' command"), spec);
    return;
  }
  if (!c.authenticated && !(spec->flags & cmd::kNoAuth)) {
    reject(errors::kNoAuth, spec);
    return;
  }
  if (c.in_multi && (spec->flags & cmd::kNoMulti)) {
    reject("ERR Command not allowed inside a transaction", spec);
    return;
  }
  // maxmemory: evict first; refuse commands that may grow memory when nothing
  // more can be evicted (Redis's order: after AUTH, before CLIENT PAUSE).
  // A replica is an exact copy of its primary: with replica-ignore-maxmemory
  // it evicts nothing of its own (the primary's DELs do), nothing is evicted
  // during CLIENT PAUSE (Redis's isSafeToPerformEvictions), and a command of
  // its primary's stream is never refused, whatever the setting.
  pre_command_oom_ = false;
  if (maxmemory_ > 0 && !(master_ && replica_ignore_maxmemory_) && !script_busy_ && pause_until_ms_ == 0) {
    const uint64_t evict_start = latency_.threshold_ms() > 0 ? Clock::Ticks() : 0;
    const uint64_t evicted_before = stats_.evicted_keys;
    bool fits = evictor_.EvictUntil(keyspace_, keyspace_.access_policy(), AllocatedBytes,
                                    static_cast<size_t>(maxmemory_), now_ms, &stats_.evicted_keys);
    if (evict_start != 0) NoteEvictionLatency(evict_start, evicted_before, fits);
    pre_command_oom_ = !fits;
    if (!fits && (flags & cmd::kDenyOom) && !c.is_master) {
      reject("OOM command not allowed when used memory > 'maxmemory'.", spec);
      return;
    }
  }
  LimitTrackingTable();
  // Persistence failing: writes (and PING, as in Redis) are refused -- but
  // not the primary's: a replica panics rather than diverge, unless
  // replica-ignore-disk-write-errors.
  if (!persistence_ok() && ((flags & cmd::kWrite) || spec->name == "ping")) {
    if (std::string misconf = PersistenceError(); !misconf.empty()) {
      if (!c.is_master) {
        reject(misconf, spec);
        return;
      }
      ApplyDespiteDiskError(*spec);
    }
  }
  // Replication's gates and RESP2's subscribed mode, in Redis's order:
  // NOREPLICAS, READONLY, the pub/sub context, MASTERDOWN.
  const bool repl_gated = (master_ || min_replicas_to_write_ > 0) && !c.is_master;
  const bool pubsub_refused = c.pubsub && c.resp == 2 && !AllowedWhileSubscribed(*spec);
  if (repl_gated || pubsub_refused) {
    const char* err = repl_gated ? ReplicationGate(flags) : nullptr;
    std::string refusal;
    if (pubsub_refused && (err == nullptr || std::string_view(err).starts_with("MASTERDOWN"))) {
      refusal = StrCat("ERR Can't execute '", spec->name,
                       "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context");
      err = refusal.c_str();
    }
    if (err != nullptr) {
      reject(err, spec);
      return;
    }
  }
  // Loading -- a replica loading its primary's payload synchronously, or
  // DEBUG LOADAOF / RELOAD while a slow script of the file serves others
  // from its hook: only commands flagged `loading` run (for EXEC, every
  // queued one must be; Redis's order: before BUSY). During an async
  // (swapdb) load, what is flagged `no-async-loading` waits for its end.
  if ((((loading_ && !async_loading()) || sync_loading()) &&
       (!(flags & cmd::kLoading) || (is_exec && !QueueRunsWhileLoading(c)))) ||
      (async_loading() && (flags & cmd::kNoAsyncLoading))) {
    reject(errors::kLoading, spec);
    return;
  }
  // A script ran too long: only what may run beside it does (SCRIPT KILL,
  // FUNCTION KILL, SHUTDOWN NOSAVE, connection and transaction commands).
  if (script_busy_ && !(spec->flags & cmd::kAllowBusy)) {
    reject(scripting_->BusyError(), spec);
    return;
  }
  // A replica's link (and a MONITOR, which Redis treats as one) may not
  // touch the keyspace.
  if ((c.is_replica || c.monitor) && (flags & (cmd::kWrite | cmd::kReadonly | cmd::kMayReplicate))) {
    reject("ERR Replica can't interact with the keyspace", spec);
    return;
  }
  // CLIENT PAUSE WRITE holds back what may write: EXEC by its queue, a
  // script by what it declares.
  if (ShouldPause(flags) && !c.is_master) {
    if (!replying) c.reply_mode = ReplyMode::kSkipNext;  // the skip applies when it runs
    Defer(c, argv);
    return;
  }
  if (c.in_multi && !RunsInsideMulti(*spec)) {
    MultiState& m = *multi_[c.id()];
    QueuedCommand& q = m.commands.emplace_back(QueuedCommand{spec, {argv.begin(), argv.end()}});
    for (const std::string& a : q.argv) m.bytes += a.size();
    m.flags |= flags;  // a script as it declares itself, as Redis's queueMultiCommand
    m.inv_flags |= ~flags;
    rb.SimpleString("QUEUED");
    return;
  }
  Call(c, *spec, argv, rb, now_ms);
  if (c.tracking) {
    if (!pending_invalidations_.empty() || flush_invalidation_pending_) FlushPendingInvalidations(c);
    // CLIENT CACHING applies to the next command only (CLIENT commands and
    // queued ones do not use it up), as in Redis.
    if (ClientTracking* t = tracking_.Find(c.id()); t != nullptr && !c.in_multi && !spec->name.starts_with("client|")) {
      tracking_.EndCommand(*t);
    }
  }
  if (key_waiters_.has_ready() && !serving_ready_) ServeReadyKeys();
}

void Server::Call(Client& c, const CommandSpec& spec_ref, Argv argv, io::ReplyBuilder& rb, int64_t now_ms) {
  RINGKV_DCHECK_MAIN_THREAD();
  const CommandSpec* spec = &spec_ref;
  c.last_command = spec;  // CLIENT LIST shows the command being run, as Redis does
  const uint64_t start = Clock::Ticks();
  CommandContext ctx{*this, c, rb, argv, now_ms};
  const uint64_t dirty_before = stats_.dirty;
  const bool was_blocked = c.blocked;
  // EVAL & co. and FCALL & co. (skip_monitor) are shown before the
  // commands their script runs, as Redis's evalCommand feeds them first.
  if (spec->script != CommandSpec::Script::kNone && !monitors_.empty()) FeedMonitors(c, argv, UnixUs());
  Client* const outer_client = current_client_;
  if (c.conn != nullptr || outer_client == nullptr) current_client_ = &c;
  errors_mark_ = stats_.total_error_replies;
  spec->handler(ctx);
  current_client_ = outer_client;
  // Failed: an error was counted since the last command that ran inside
  // this one (EXEC's queue, a script's calls) or since the start -- Redis's
  // rule, so EXEC and EVAL are not failed by their commands' errors.
  if (stats_.total_error_replies > errors_mark_) ++spec->failed_calls;
  errors_mark_ = stats_.total_error_replies;
  // A script's keys are tracked when it calls a read command (CallFromScript).
  if (c.tracking && (spec->flags & cmd::kReadonly) && spec->script == CommandSpec::Script::kNone) {
    TrackReadKeys(c, *spec, argv);
  }
  // EXEC and scripts propagate what their commands wrote themselves.
  if ((stats_.dirty > dirty_before || !propagate_as_.empty()) && spec != exec_spec_) {  // a reset (SAVE) is no write
    if (spec->script != CommandSpec::Script::kNone) {
      propagate_as_.clear();
    } else if (propagate_as_.empty()) {
      Propagate(c.db, argv);
    } else {
      if (propagate_as_.size() > 1) BeginPropagationBlock();
      for (const std::vector<std::string>& argv_as : propagate_as_) {
        std::vector<std::string_view> views(argv_as.begin(), argv_as.end());
        Propagate(c.db, views);
      }
      if (propagate_as_.size() > 1) EndPropagationBlock(false);
      propagate_as_.clear();
    }
    c.woff = aof_->fed_offset();
    c.repl_woff = master_repl_offset();
    // A writable replica's own writes: the deadlines they set are its to keep.
    if (master_ && !c.is_master) RememberOwnVolatileKeys(c, *spec, argv);
  }
  if (c.held_replies) durable_.Require(c.id(), aof_->fed_offset());
  // client-output-buffer-limit normal / pubsub (replicas: the replication
  // component bounds their lag). One cached flag when no limit is set.
  if ((c.pubsub ? obuf_pubsub_on_ : obuf_normal_on_) && !c.is_replica && !c.is_master && c.conn != nullptr) {
    if (OverOutputLimit(c, c.pubsub ? obuf_pubsub_ : obuf_normal_, now_ms)) CloseForOutputLimit(c, now_ms);
  }
  if (client_eviction_limit_ != 0 && !c.closing && c.conn != nullptr) EvictClientsIfNeeded(now_ms, &c);
  const int64_t duration = clock_.TicksToMicros(Clock::Ticks() - start);
  if (!monitors_.empty() && !(spec->flags & (cmd::kSkipMonitor | cmd::kAdmin))) FeedMonitors(c, argv, UnixUs());
  // A command that blocked is counted when it unblocks, as Redis does.
  if (c.blocked && !was_blocked) {
    if (auto it = blocked_.find(c.id()); it != blocked_.end()) {
      it->second->first_call_us = duration;
      return;
    }
  }
  ++spec->calls;
  spec->usec += static_cast<uint64_t>(duration);
  ++stats_.total_commands;
  RecordCommandLatency(*spec, duration);
  // A script's own commands are not logged: the script is (as Redis).
  if (slowlog_threshold_us_ >= 0 && duration >= slowlog_threshold_us_ && !(spec->flags & cmd::kSkipSlowlog) &&
      c.conn != nullptr) {
    Slowlog(c, argv, duration, now_ms);
  }
}

void Server::Slowlog(const Client& c, Argv argv, int64_t duration_us, int64_t now_ms) {
  if (slowlog_max_len_ == 0) return;
  // As Redis: at most 32 arguments (the last says how many more), each at
  // most 128 bytes (with how many more bytes).
  SlowlogEntry e;
  e.id = slowlog_next_id_++;
  e.time_s = now_ms / 1000;
  e.duration_us = duration_us;
  size_t n = std::min<size_t>(argv.size(), 32);
  for (size_t i = 0; i < n; ++i) {
    if (n == 32 && i == 31 && argv.size() > 32) {
      e.argv.push_back(StrCat("... (", argv.size() - 31, " more arguments)"));
    } else if (argv[i].size() > 128) {
      e.argv.push_back(StrCat(argv[i].substr(0, 128), "... (", argv[i].size() - 128, " more bytes)"));
    } else {
      e.argv.emplace_back(argv[i]);
    }
  }
  e.peer = c.conn->peer.ToString();
  e.name = c.meta ? c.meta->name : "";
  slowlog_.push_front(std::move(e));
  while (slowlog_.size() > slowlog_max_len_) slowlog_.pop_back();
}

void Server::PauseClients(int64_t until_ms, bool all) {
  // A later pause extends, never shortens; ALL wins over WRITE (Redis 7.0).
  if (until_ms > pause_until_ms_) pause_until_ms_ = until_ms;
  pause_all_ = pause_all_ || all;
  // As Redis: nothing expires or is evicted while paused (a failover may be
  // under way); expired keys look missing until the pause ends.
  if (keyspace_.expiry_mode() == core::ExpiryMode::kDelete) {
    keyspace_.set_expiry_mode(core::ExpiryMode::kHide);
    expiry_paused_ = true;
  }
}

size_t Server::blocked_clients() const {
  size_t paused = 0;
  for (uint64_t id : paused_clients_) {
    auto it = clients_.find(id);
    if (it != clients_.end() && it->second->paused_wait && !it->second->closing) ++paused;
  }
  return blocked_.size() + paused;
}

void Server::UnpauseClients() {
  pause_until_ms_ = 0;
  pause_all_ = false;
  if (expiry_paused_) {
    expiry_paused_ = false;
    if (keyspace_.expiry_mode() == core::ExpiryMode::kHide && !master_) keyspace_.set_expiry_mode(core::ExpiryMode::kDelete);
  }
  ReplayDeferred();
}

void Server::ReplayDeferred() {
  std::vector<uint64_t> ids;
  ids.swap(paused_clients_);
  for (uint64_t id : ids) {
    Client* c = FindClient(id);
    if (c == nullptr) continue;
    c->paused_wait = false;
    if (c->blocked) continue;  // resumes when it is unblocked
    ResumeClient(*c);
  }
}

void Server::ResumeClient(Client& c) {
  std::unique_ptr<DeferredCommands> held = std::move(c.deferred);
  while (held && !held->commands.empty()) {
    std::vector<std::string> args = std::move(held->commands.front());
    held->commands.pop_front();
    std::vector<std::string_view> views(args.begin(), args.end());
    if (c.closing) break;
    if (c.deferred) {  // paused or blocked again: the rest waits behind
      Defer(c, views);
      continue;
    }
    Execute(c, views);
  }
}

uint64_t Server::instantaneous_ops() const {
  uint64_t sum = 0;
  for (uint64_t s : stats_.ops_samples) sum += s;
  return sum / ServerStats::kSamples;
}

void Server::ClientsCron(int64_t now_ms) {
  if (timeout_s_ <= 0) return;
  std::vector<Client*> idle;
  for (auto& [id, c] : clients_) {
    if (!c->closing && now_ms / 1000 - c->last_interaction_s > timeout_s_) idle.push_back(c.get());
  }
  for (Client* c : idle) {
    Log(kVerbose, "Closing idle client");
    c->closing = true;
    io_->CloseNow(c->conn);
  }
}

int Server::OnTimer() {
  RINGKV_DCHECK_MAIN_THREAD();
  const int64_t now_ms = UnixMs();
  // Deadlines of blocked clients (BLPOP, WAIT, ...) fire on time, not on
  // the next cron tick -- and before the cron's own work.
  if (!block_deadlines_.empty()) ExpireBlocked(now_ms);
  if (now_ms >= next_cron_ms_) {
    Cron(now_ms);
    next_cron_ms_ = now_ms + 1000 / hz_;
  }
  int64_t wake = next_cron_ms_;
  if (pause_until_ms_ > 0) wake = std::min(wake, pause_until_ms_);
  if (!block_deadlines_.empty()) wake = std::min(wake, block_deadlines_.begin()->first);
  return static_cast<int>(std::clamp<int64_t>(wake - now_ms, 1, 1000));
}

void Server::Cron(int64_t now_ms) {
  clock_.Anchor();
  lru_clock_ = static_cast<uint32_t>(now_ms / 1000);
  if (cron_paused_) return;  // DEBUG PAUSE-CRON: the clocks still advance
  if (now_ms - stats_.last_sample_ms >= 100) {
    int64_t dt = now_ms - stats_.last_sample_ms;
    uint64_t ops = stats_.total_commands - stats_.last_sample_commands;
    stats_.ops_samples[stats_.sample_index] = stats_.last_sample_ms == 0 ? 0 : ops * 1000 / static_cast<uint64_t>(dt);
    stats_.sample_index = (stats_.sample_index + 1) % ServerStats::kSamples;
    stats_.last_sample_ms = now_ms;
    stats_.last_sample_commands = stats_.total_commands;
  }
  if (pause_until_ms_ > 0 && now_ms >= pause_until_ms_) UnpauseClients();
  ClientsCron(now_ms);
  EvictClientsIfNeeded(now_ms);
  LimitTrackingTable();
  ReapChild(now_ms);
  aof_->Cron(now_ms);
  rdb_->Cron(now_ms, stats_.dirty);
  if (primary_) ReplicationCron(now_ms);
  if (master_) ReplicaCron(now_ms);
  if (failover_) FailoverCron(now_ms);
  if (shutdown_deadline_ms_ != 0) ShutdownCron(now_ms);
  ReadMemoryStats();  // keeps used_memory_peak current
  // Active expiry: at most 25% of each cron period, as Redis's slow cycle.
  // Replicas do not expire keys on their own: the primary's DELs do it.
  if (active_expire_ && !master_ && pause_until_ms_ == 0) {
    const uint64_t start = latency_.threshold_ms() > 0 ? Clock::Ticks() : 0;
    keyspace_.ActiveExpireCycle(now_ms, 250000 / hz_);
    if (start != 0) latency_.AddIfNeeded("expire-cycle", clock_.TicksToMicros(Clock::Ticks() - start) / 1000);
  }
  keyspace_.RehashCron(1000);  // 1 ms per tick, as Redis's activerehashing
}

void Server::BeforeFlush() {
  RINGKV_DCHECK_MAIN_THREAD();
  if (shutdown_signal_ != 0 && !shutdown_requested_) HandleShutdownSignal();
  if (primary_) BeforeFlushReplication();
  if (master_ && !master_->held.empty() && !script_busy_) ApplyHeldMasterCommands();
  aof_->BeforeSleep();
  // Held replies whose commands wrote nothing (an error, a no-op) need no
  // fsync: they go out now rather than wait for somebody else's write.
  if (durable_.clients() > 0) ReleaseDurableReplies();
  if (tracking_.has_broadcasts()) BroadcastInvalidations();
  if (master_ && aof_->enabled() &&
      (aof_repl_marks_.empty() || aof_repl_marks_.back().second != master_repl_offset())) {
    aof_repl_marks_.emplace_back(aof_->fed_offset(), master_repl_offset());
  }
  if (aof_always_ && aof_->write_failed()) {
    // As Redis: with appendfsync always, a write that cannot reach the AOF
    // cannot be acknowledged, and held replies would wait forever.
    Log(kWarning, StrCat("Can't recover from AOF write error when the AOF fsync policy is 'always' (",
                         std::strerror(aof_->write_errno()), "). Exiting..."));
    _exit(1);
  }
  ++turn_;
  if (shutdown_requested_) io_->RequestStop();
}

}  // namespace ringkv::server
