#include "core/strings.h"
#include "server/server.h"

#include <sched.h>
#include <sys/time.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "io/thread_check.h"
#include "server/acl/acl.h"
#include "server/cluster/cluster_mode.h"
#include "server/signalled_shutdown.h"
#include "server/closing_client.h"
#include "server/errors.h"
#include "server/logging.h"
#include "server/memory_stats.h"
#include "server/oom_score.h"
#include "server/scripting/scripting.h"
#include "server/tls_config.h"

namespace ringkv::server {

namespace {

std::string RandomHex(int n) {
  absl::BitGen gen;
  static const char kHex[] = "0123456789abcdef";
  std::string s(n, '0');
  for (char& c : s) c = kHex[absl::Uniform(gen, 0, 16)];
  return s;
}

// The I/O threads to run for `io-threads n`, at start-up and on CONFIG SET.
// An I/O thread without a CPU of its own only adds hand-offs: each one is a
// context switch on the shared CPU, and measured here that costs more than
// the thread saves. Capped at the CPUs this process may run on (logged);
// RINGKV_IO_THREADS_UNCAPPED=1 lifts the cap (tests of many threads on a
// small machine).
int CappedIoThreads(int n) {
  cpu_set_t cpus;
  const char* uncapped = getenv("RINGKV_IO_THREADS_UNCAPPED");
  if (uncapped != nullptr && std::strcmp(uncapped, "1") == 0) return n;
  if (n > 1 && sched_getaffinity(0, sizeof(cpus), &cpus) == 0 && CPU_COUNT(&cpus) < n) {
    Log(kWarning, StrCat("io-threads ", n, " reduced to ", CPU_COUNT(&cpus), ": this process may run on only ",
                         CPU_COUNT(&cpus), " CPU(s) (affinity mask)"));
    return CPU_COUNT(&cpus);
  }
  return n;
}

}  // namespace

Server::Server(std::unique_ptr<Config> config)
    : config_(std::move(config)),
      keyspace_(static_cast<int>(config_->Int("databases"))),
      io_(std::make_unique<io::IoSystem>(this)),
      output_limits_(*config_),
      slowlog_(*config_),
      latency_(*config_, evictor_),
      unexpected_errors_(*config_) {
  RegisterAllCommands(commands_);
  acl_ = std::make_unique<acl::Acl>(commands_);
  exec_spec_ = commands_.Find("exec");
  run_id_ = RandomHex(40);
  keyspace_.set_observer(this);
  // A snapshot without fork walks a FLUSHDB's table after the command; it is
  // freed on the lazy-free thread once walked.
  keyspace_.set_table_release([this](std::unique_ptr<core::DetachedData> table) {
    const uint64_t keys = table->dict.size();
    lazy_freer_.Free(std::move(table), keys);
  });
  persistence_.child().set_on_running_changed([this](bool running) {
    keyspace_.SetForkChildActive(running);
    if (running) latency_.OnForked(persistence_.child().last_fork_us(), AllocatedBytes());
  });
  persistence_.rdb().set_repl_info([this] { return ReplSaveInfo(); });
  persistence_.rdb().set_functions_source([this] { return scripting_.FunctionLibraryCodes(); });
  persistence_.aof().set_functions_source([this] { return scripting_.FunctionLibraryCodes(); });
  BindConnectionConfig();
  BindListenerConfig();
  BindTlsConfig(*config_, *io_);
  BindMemoryConfig();
  persistence_.BindConfig();
  primary_side_.BindConfig();
  replica_side_.BindConfig();
  tracking_.BindConfig(*config_);
  // oom-score-adj: CONFIG SET applies at once (a failed write fails the SET);
  // REPLICAOF applies the new role's value at once (ReplicaSide::ReplicaOf),
  // and the cron re-checks (server/oom_score.h).
  config_->OnChange("oom-score-adj", [this] {
    const OomClass role = replica_side_.is_replica() ? OomClass::kReplica : OomClass::kPrimary;
    return ApplyOomScoreAfterConfigSet(*config_, role, false);
  });
  config_->OnChange("oom-score-adj-values", [this] {
    const OomClass role = replica_side_.is_replica() ? OomClass::kReplica : OomClass::kPrimary;
    return ApplyOomScoreAfterConfigSet(*config_, role, true);
  });
}

Server::~Server() {
  // A replica's sync thread may still be loading a payload into the
  // staging keyspace: it is stopped (its socket closed, the thread joined)
  // before any member it uses is destroyed.
  replica_side_.Stop();
}

bool Server::DeleteKey(core::Database& db, std::string_view key, int64_t now_ms, bool async) {
  RINGKV_DCHECK_MAIN_THREAD();
  core::Entry* e = db.Find(key, now_ms);
  if (e == nullptr) return false;
  FreeLaterIfBig(e->value, async);
  return db.Erase(key);
}

void Server::FreeLaterIfBig(core::Value& value, bool async) {
  constexpr size_t kLazyFreeThreshold = 64;
  if (async && value.FreeEffort() > kLazyFreeThreshold) {
    lazy_freer_.Free(std::make_unique<core::Value>(std::move(value)), 1);
  }
}

// Clients and the cron: what accept, each command and each tick read.
void Server::BindConnectionConfig() {
  Config& c = *config_;
  // requirepass is the default user's password, as in Redis 7.0.
  c.Bind("requirepass", [this] { acl_->SetDefaultPassword(config_->Str("requirepass")); });
  c.Bind("acl-pubsub-default", [this] { acl_->set_pubsub_default_all(config_->Str("acl-pubsub-default") == "allchannels"); });
  c.Bind("acllog-max-len", [this] { acl_->set_log_max_len(static_cast<size_t>(config_->Int("acllog-max-len"))); });
  // Redis keeps hz within [1, 500] and a watchdog period of at least two
  // cron ticks, and shows the value it applies (CONFIG GET, INFO configured_hz).
  c.Bind("hz", [this] {
    hz_ = static_cast<int>(std::clamp<int64_t>(config_->Int("hz"), 1, 500));
    config_->StoreAppliedInt("hz", hz_);
  });
  c.Bind("watchdog-period", [this] {
    const int64_t period = config_->Int("watchdog-period");
    if (period > 0 && !watchdog_) watchdog_ = std::make_unique<Watchdog>();
    if (watchdog_) {
      watchdog_->SetPeriod(period, hz_);
      config_->StoreAppliedInt("watchdog-period", watchdog_->period_ms());
    }
  });
  c.Bind("crash-log-enabled", [this] { SetCrashLog(config_->Bool("crash-log-enabled")); });
  c.Bind("loglevel", [this] { SetLogLevel(LogLevelFromName(config_->Str("loglevel"))); });
  c.Bind("proto-max-bulk-len", [this] {
    io_->limits().max_bulk_len.store(config_->Int("proto-max-bulk-len"), std::memory_order_relaxed);
    keyspace_.limits().max_string_len = config_->Int("proto-max-bulk-len");
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
  // io-threads: I/O threads are started or retired at runtime, their
  // connections handed over between loop turns (io::IoSystem::SetThreads).
  config_->OnChange("io-threads", [this] {
    if (io_->started()) {
      const int n = CappedIoThreads(static_cast<int>(config_->Int("io-threads")));
      if (n != io_->threads()) Log(kNotice, StrCat("I/O threads: ", io_->threads(), " -> ", n));
      io_->SetThreads(n);
    }
    return absl::OkStatus();
  });
  config_->OnChange("tcp-keepalive", [this] {
    io_->set_tcp_keepalive(static_cast<int>(config_->Int("tcp-keepalive")));
    return absl::OkStatus();
  });
  auto rebind = [this](const char* reason) {
    return [this, reason]() -> absl::Status {
      if (start_time_ms_ == 0) return absl::OkStatus();
      std::vector<std::string> bind;
      for (std::string_view b : Split(config_->Str("bind"), ' ', true)) bind.emplace_back(b);
      absl::Status s =
          io_->Rebind(bind, static_cast<int>(config_->Int("port")), static_cast<int>(config_->Int("tls-port")));
      if (!s.ok()) {
        Log(kWarning, StrCat("Rebinding failed: ", ToStd(s.message())));
        return absl::UnavailableError(reason);
      }
      for (const std::string& addr : io_->listening_addresses()) Log(kNotice, StrCat("Listening on ", addr));
      return absl::OkStatus();
    };
  };
  constexpr const char* kPortError = "Unable to listen on this port. Check server logs.";  // Redis's words
  config_->OnChange("port", rebind(kPortError));
  config_->OnChange("bind", rebind("Failed to bind to specified addresses."));
  // A TLS port opened by CONFIG SET needs the certificates first (as Redis's
  // applyTLSPort).
  config_->OnChange("tls-port", [this, listen = rebind(kPortError)]() -> absl::Status {
    if (start_time_ms_ == 0) return absl::OkStatus();
    if (config_->Int("tls-port") != 0 && !io_->tls().configured() && !ConfigureTls(*config_, *io_).ok()) {
      return absl::InvalidArgumentError(kTlsConfigError);
    }
    return listen();
  });
}

// maxmemory and eviction, the collections' encodings, lazy frees of DEL and
// implicit deletions.
void Server::BindMemoryConfig() {
  Config& c = *config_;
  c.Bind("replica-ignore-maxmemory", &replica_ignore_maxmemory_);
  c.Bind("active-expire-effort", &active_expire_effort_);
  c.Bind("activerehashing", &active_rehashing_);
  c.Bind("maxmemory-eviction-tenacity",
         [this] { evictor_.set_time_limit_us(core::EvictionTimeLimitUs(config_->Int("maxmemory-eviction-tenacity"))); });
  // As Redis's updateMaxmemory: a limit below what is used evicts at once,
  // not at the next command.
  // OBJECT REFCOUNT: Redis shares small integers unless maxmemory is set
  // with an LRU or LFU policy (core::AccessPolicy::integers_shared).
  // A key table doubles only while the memory it takes stays under
  // maxmemory (Redis's dictExpandAllowed), so that growing it evicts nothing.
  c.Bind({"maxmemory", "maxmemory-policy"}, [this] {
    core::AccessPolicy& p = keyspace_.access_policy();
    core::ParseEvictionPolicy(config_->Str("maxmemory-policy"), &p.policy);
    const int64_t maxmemory = config_->Int("maxmemory");
    p.integers_shared = maxmemory == 0 || !(p.lru() || p.lfu());
    p.grow_ctx = this;
    p.grow_allowed = maxmemory == 0 ? nullptr : +[](void* ctx, size_t more_bytes) {
      auto& s = *static_cast<Server*>(ctx);
      return MemoryCountedForEvict(s) + more_bytes <= static_cast<size_t>(s.maxmemory_);
    };
  });
  c.Bind("maxmemory", [this] {
    maxmemory_ = config_->Int("maxmemory");
    // At start-up (no client yet) eviction waits for the first command; so
    // it does inside EXEC or a script (CONFIG SET in a MULTI block), whose
    // writes are propagated as one block: an eviction's DEL may not land in
    // the middle, as in Redis 7.0 (nothing evicts while a block is pending).
    if (maxmemory_ <= 0 || clients_.registry().empty() || clients_.pause().active() || propagation_.in_block() ||
        (replica_side_.is_replica() && replica_ignore_maxmemory_)) {
      return;
    }
    if (const size_t used = AllocatedBytes(); static_cast<size_t>(maxmemory_) < used) {
      Log(kWarning, StrCat("WARNING: the new maxmemory value set via CONFIG SET (", maxmemory_,
                           ") is smaller than the current memory usage (", used,
                           "). This will result in key eviction and/or the inability to accept new write commands "
                           "depending on the maxmemory-policy."));
    }
    // Counted in LATENCY as the eviction before a command is (eviction-cycle, eviction-del).
    const uint64_t start = latency_.monitor().threshold_ms() > 0 ? Clock::Ticks() : 0;
    const uint64_t evicted_before = stats_.evicted_keys;
    const bool fits = evictor_.EvictUntil(keyspace_, keyspace_.access_policy(), counted_memory_,
                                          static_cast<size_t>(maxmemory_), clock_.WallMs(), &stats_.evicted_keys);
    if (start != 0) NoteEvictionLatency(start, evicted_before, fits);
  });
  // maxmemory-clients (or the maxmemory it is a percentage of) lowered:
  // clients are evicted at once, as Redis's CONFIG SET does. Registered
  // after OutputLimits' own binding, so the new limit is in place.
  c.OnChange({"maxmemory-clients", "maxmemory"}, [this] {
    if (!clients_.registry().empty()) clients_.EvictIfNeeded(UnixMs());
    return absl::OkStatus();
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
  c.Bind("hll-sparse-max-bytes", &limits.hll_sparse_max_bytes);
  c.Bind("lazyfree-lazy-user-del", &lazy_user_del_);
  c.Bind("lazyfree-lazy-server-del", &lazy_server_del_);
  // Expired and evicted keys propagate as UNLINK (server_notify.cc).
  c.Bind("lazyfree-lazy-expire", &lazy_expire_);
  c.Bind("lazyfree-lazy-eviction", &lazy_eviction_);
}

// Goes on with an eviction cut short by its time limit, under the same
// conditions as before a command (command_gate.cc's CheckMemory).
void Server::EvictForCron(int64_t now_ms) {
  if (maxmemory_ <= 0 || (replica_side_.is_replica() && replica_ignore_maxmemory_) || scripting_.busy() ||
      clients_.pause().active()) {
    return;
  }
  const uint64_t start = latency_.monitor().threshold_ms() > 0 ? Clock::Ticks() : 0;
  const uint64_t evicted_before = stats_.evicted_keys;
  const bool fits = evictor_.EvictUntil(keyspace_, keyspace_.access_policy(), counted_memory_,
                                        static_cast<size_t>(maxmemory_), now_ms, &stats_.evicted_keys);
  if (start != 0) NoteEvictionLatency(start, evicted_before, fits);
  stats_.NoteEvictionResult(fits, static_cast<uint64_t>(clock_.TicksToMicros(Clock::Ticks())));
}

io::IoOptions Server::ListenerOptions() const {
  io::IoOptions opts;
  opts.port = static_cast<int>(config_->Int("port"));
  opts.tls_port = static_cast<int>(config_->Int("tls-port"));
  opts.tcp_backlog = static_cast<int>(config_->Int("tcp-backlog"));
  opts.tcp_keepalive = static_cast<int>(config_->Int("tcp-keepalive"));
  opts.bind = absl::StrSplit(config_->Str("bind"), ' ', absl::SkipEmpty());
  opts.unixsocket = config_->Str("unixsocket");
  // Written in octal digits, as Redis reads it ("700").
  int perm = 0;
  for (char d : std::to_string(config_->Int("unixsocketperm"))) perm = perm * 8 + (d - '0');
  opts.unixsocketperm = perm;
  io::ParseBackendChoice(config_->Str("io-backend"), &opts.backend);
  return opts;
}

absl::Status Server::Listen() { return io_->Listen(ListenerOptions()); }

// The `user` directives, or the aclfile (not both, as Redis).
absl::Status Server::LoadUsers() {
  const std::string& aclfile = config_->Str("aclfile");
  if (!aclfile.empty() && !config_->users().empty()) {
    return absl::InvalidArgumentError(
        "Configuring Redis with users defined in redis.conf and at the same setting an ACL file path is invalid. "
        "This setup is very likely to lead to configuration errors and security holes, please define either an ACL "
        "file or declare users directly in your redis.conf, but not both.");
  }
  if (absl::Status s = acl_->LoadConfiguredUsers(config_->users()); !s.ok()) return s;
  if (!aclfile.empty()) {
    std::string err;
    if (!acl_->LoadFile(aclfile, &err)) {
      return absl::InvalidArgumentError(StrCat("Aborting Redis startup because of ACL errors: ", err));
    }
  }
  for (const auto& [name, u] : acl_->users()) {
    if (!u->enabled) {
      Log(kNotice, StrCat("The user '", name, "' is disabled (there is no 'on' modifier in the user description). "
                          "Make sure this is not a configuration error."));
    }
  }
  config_->set_user_lines([this] { return acl_->UserLines(); });
  return absl::OkStatus();
}

absl::Status Server::Init() {
  start_time_ms_ = UnixMs();
  lru_clock_ = static_cast<uint32_t>(start_time_ms_ / 1000);
  startup_allocated_ = AllocatedBytes();
  // Cluster mode: the node's identity and slots before any key is loaded
  // (the load fills the slot index as it inserts).
  if (config_->Bool("cluster-enabled")) {
    absl::StatusOr<std::unique_ptr<ClusterMode>> cluster = ClusterMode::Start(*config_, static_cast<int>(config_->Int("port")));
    if (!cluster.ok()) return cluster.status();
    cluster_ = std::move(*cluster);
    cluster_->state().set_on_slot_unassigned([this](int slot, const cluster::Node& owner) {
      if (cluster_->state().SharesShardWithMyself(owner)) pubsub_.UnsubscribeShardChannelsInSlot(slot);
    });
    keyspace_.EnableSlotIndexes();
  }
  return absl::OkStatus();
}

absl::Status Server::Start() {
  // rename-command, before the users' rules name commands: Redis renames
  // while it reads the configuration, so its ACL rules see the new names.
  for (const auto& [from, to] : config_->command_renames()) {
    if (absl::Status s = commands_.Rename(from, to); !s.ok()) {
      return absl::InvalidArgumentError(StrCat("rename-command ", from, " ", to, ": ", s.message()));
    }
  }
  // Users before anything is served (aclfile / user directives), after the
  // pidfile and the banner as in Redis.
  if (absl::Status s = LoadUsers(); !s.ok()) return s;
  io::IoOptions opts = ListenerOptions();
  opts.threads = CappedIoThreads(static_cast<int>(config_->Int("io-threads")));
  // Serving starts before the load, as in Redis: clients connecting during
  // a long load are answered (-LOADING, INFO, ...) instead of left queued.
  if (absl::Status s = io_->Start(opts); !s.ok()) return s;
  if (cluster_) {  // the cluster bus: its listener and links on the I/O layer (server/cluster/bus_net.h)
    std::vector<std::string> bind;
    for (std::string_view b : Split(config_->Str("bind"), ' ', true)) bind.emplace_back(b);
    if (absl::Status s = cluster_->StartBus(bind, MakeClusterHooks()); !s.ok()) {
      io_->Shutdown();
      return s;
    }
  }
  if (absl::Status s = loading_.LoadAtStartup(); absl::IsCancelled(s)) {
    Log(kWarning, "Loading stopped by a shutdown request: the dataset is not saved.");
    return absl::OkStatus();  // the first turn of Run() shuts down
  } else if (!s.ok()) {
    io_->Shutdown();
    return s;
  }
  start_time_ms_ = UnixMs();
  // replicaof in the configuration: connect once serving.
  std::vector<std::string_view> primary = Split(config_->Str("replicaof"), ' ', true);
  if (primary.size() == 2) {
    int64_t port = 0;
    core::StringToInt64(primary[1], &port);
    replica_side_.ReplicaOf(std::string(primary[0]), static_cast<int>(port));
    replica_side_.replica()->set_stream_db(restored_stream_db_);  // the stream after our own RDB continues there
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
  if (!io_->unix_socket().empty()) {
    Log(kNotice, "Removing the unix socket file.");
    unlink(io_->unix_socket().c_str());
  }
  Log(kWarning, "ringkv is now ready to exit, bye bye...");
  return 0;
}

void Server::RequestShutdown(int signal) {
  // Redis's "You insist": SIGINT while a signalled shutdown is under way
  // (saving the final snapshot, waiting for replicas) exits now.
  if (signal == SIGINT && SignalledShutdownUnderWay()) ExitOnInsistentSignal();
  // The main loop does the shutdown work (saving may fail and cancel it).
  shutdown_.Signal(signal);
  io_->WakeMain();
}

std::string Server::OnAccept(const io::SocketAddress& peer) {
  if (clients_.Full()) {
    ++stats_.rejected_connections;
    return StrCat("-", errors::kMaxClients, "\r\n");
  }
  // Protected mode (Redis 7.0): no password for the default user and a
  // non-loopback peer, whatever `bind` says.
  if (config_->Bool("protected-mode") && acl_->default_user().nopass && !peer.IsLoopback()) {
    ++stats_.rejected_connections;
    return errors::kProtectedMode;
  }
  return {};
}

void Server::OnOpen(io::Connection* conn) {
  auto client = std::make_unique<Client>();
  client->conn = conn;
  client->created_s = client->last_interaction_s = static_cast<uint32_t>(UnixMs() / 1000);
  client->authenticated = acl_->DefaultAuthenticates();
  client->loopback = conn->peer.IsLoopback();
  conn->owner = client.get();
  io_->SetAuthenticated(conn, client->authenticated);
  ++stats_.total_connections;
  clients_.registry().Add(std::move(client));
}

void Server::OnClose(io::Connection* conn) {
  auto* c = static_cast<Client*>(conn->owner);
  if (c == nullptr) return;
  conn->owner = nullptr;
  if (c->held_replies) persistence_.DropHeldReplies(c->id());
  ResetClientState(*c);
  if (c->pubsub) pubsub_.RemoveClient(c->id());
  output_limits_.Forget(*c);
  clients_.ForgetMemory(*c);
  primary_side_.ForgetReplica(c->id());  // replicas, and links still in their handshake
  replica_side_.OnClientClosed(*c);  // the primary's link: a retry planned
  clients_.registry().Erase(c->id());
}

void Server::CloseClient(Client& c) {
  MarkClosing(pubsub_, blocking_, c);
  io_->CloseAfterReply(c.conn);
}

void Server::KillClient(Client& c, const Client& caller) {
  if (&c == &caller) {
    CloseClient(c);
  } else if (c.is_replica) {
    primary_side_.DropReplica(c.id());  // "Connection with replica ... lost."
  } else {
    CloseNow(c);
  }
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

// A big argument arriving in parts: maxmemory-clients weighs the client as
// its query buffer grows (Redis evicts before its next turn), not only
// after its command or at the cron.
void Server::OnLargeInputHeld(io::Connection* conn) {
  auto* c = static_cast<Client*>(conn->owner);
  if (c == nullptr || c->closing || c->is_master || c->is_replica) return;
  if (output_limits_.client_eviction_limit() != 0) clients_.Weigh(*c, UnixMs());
}

void Server::OnCommand(io::Connection* conn, std::span<const std::string_view> argv) {
  static const io::PrefetchSlot kNothingKnown;
  OnPrefetchedCommand(conn, argv, kNothingKnown);
}

void Server::OnPrefetchedCommand(io::Connection* conn, std::span<const std::string_view> argv,
                                 const io::PrefetchSlot& slot) {
  auto* c = static_cast<Client*>(conn->owner);
  if (c == nullptr || c->closing) return;
  if (c->defers_commands()) {
    clients_.Defer(*c, argv);
    return;
  }
  if (c->is_master) {
    replica_side_.OnMasterCommand(*c, argv);
    return;
  }
  if (c->is_replica) {
    ExecuteFromReplica(*c, argv);
    return;
  }
  Execute(*c, argv, &slot);
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
  primary_side_.DropReplica(c.id());
}

void Server::PrefetchBatch(io::Connection* conn, std::span<const std::span<const std::string_view>> argvs,
                           std::span<io::PrefetchSlot> slots) {
  // Each round apart, so that none pays for the registers another needs:
  // the second is a load and a prefetch.
  for (size_t i = 0; i < slots.size(); ++i) PrefetchLookUp(conn, argvs[i], slots[i]);
  for (io::PrefetchSlot& slot : slots) {
    // An empty bucket: the key is not there, no value to hint.
    if (slot.stages > 1 && !core::Database::PrefetchChain(static_cast<core::Database::PrefetchedBucket>(slot.where))) {
      slot.stages = 1;
    }
  }
  for (size_t i = 0; i < slots.size(); ++i) {
    if (slots[i].stages > 2) PrefetchValue(argvs[i], slots[i]);
  }
}

void Server::PrefetchValue(std::span<const std::string_view> argv, io::PrefetchSlot& slot) {
  // Only commands with a prefetch_value take this round.
  const auto* spec = static_cast<const CommandSpec*>(slot.what);
  const auto bucket = static_cast<core::Database::PrefetchedBucket>(slot.where);
  const core::Entry* e = core::Database::PeekPrefetched(bucket, argv[slot.arg]);
  if (e == nullptr) return;
  spec->prefetch_value(e->value, argv);
  // Found: the command's lookup of the key takes it, unless a command
  // before it removed a node from the table (Execute; core::KnownEntry).
  const core::KnownEntry found = static_cast<const core::Database*>(slot.found_in)->Found(e);
  slot.found = found.entry;
  slot.found_stamp = found.removals;
}

void Server::PrefetchLookUp(io::Connection* conn, std::span<const std::string_view> argv, io::PrefetchSlot& slot) {
  auto* c = static_cast<Client*>(conn->owner);
  if (c == nullptr) return;
  const core::Database& db = keyspace_.db(c->db);
  // The one command lookup of the batch's prefetch, which the command's
  // Execute takes over (OnPrefetchedCommand).
  const CommandSpec* spec = commands_.Find(argv[0]);
  if (spec == nullptr) return;
  slot.what = spec;
  if (argv.size() < 2) return;
  // The first key: at its fixed position, or after a key count (EVAL &
  // co., FCALL & co.: `script numkeys key ...`; ZUNION & co.).
  size_t at = static_cast<size_t>(spec->first_key);
  if (spec->first_key <= 0) {
    const size_t count_at = spec->numkeys_index;
    if (count_at == 0 || argv.size() <= count_at + 1 || argv[count_at] == "0") return;
    at = count_at + 1;
  }
  if (argv.size() <= at) return;
  // Hashed once: the command's lookups of this key take the hash (Execute).
  slot.hash = core::Database::KeyHash(argv[at]);
  slot.arg = static_cast<uint32_t>(at);
  slot.where = db.PrefetchBucketHashed(slot.hash);
  if (slot.where == nullptr) return;  // an empty database
  slot.found_in = &db;  // for the last round (PrefetchValue)
  slot.stages = spec->prefetch_value != nullptr ? 3 : 2;
}

size_t Server::blocked_clients() const { return blocking_.size() + clients_.held_waiting(); }

void Server::ResetClientState(Client& c) {
  if (c.blocked) blocking_.Unblock(c, UnblockReason::kClosed);
  transactions_.Forget(c);
  monitors_.Remove(c);
  tracking_.Disable(c);
  if (cluster_) cluster_->ForgetClient(c.id());  // ASKING, READONLY
}

void Server::ResumeClient(Client& c) {
  std::unique_ptr<DeferredCommands> held = std::move(c.deferred);
  if (!held || held->commands.empty()) return;
  // The commands resumed here run inside whatever resumed them (CLIENT
  // UNPAUSE, CLIENT UNBLOCK, a served client's turn), which Redis runs
  // them after: the errors they and the clients they serve get are not
  // that command's failure, and the errors it had before are still its own.
  const uint64_t outer_errors = stats_.total_error_replies - errors_mark_;
  while (!held->commands.empty()) {
    std::vector<std::string> args = std::move(held->commands.front());
    held->commands.pop_front();
    std::vector<std::string_view> views(args.begin(), args.end());
    if (c.closing) break;
    if (c.defers_commands()) {  // paused or blocked again: the rest waits behind
      clients_.Defer(c, views);
      continue;
    }
    Execute(c, views);
  }
  errors_mark_ = stats_.total_error_replies - outer_errors;
}

int64_t Server::OnTimer() {
  RINGKV_DCHECK_MAIN_THREAD();
  const int64_t now_us = UnixUs();
  const int64_t now_ms = now_us / 1000;
  // Deadlines of blocked clients (BLPOP, WAIT, ...) fire on time, not on
  // the next cron tick -- and before the cron's own work.
  if (blocking_.has_deadlines()) blocking_.ExpireDue(now_us);
  if (now_ms >= next_cron_ms_) {
    Cron(now_ms);
    next_cron_ms_ = now_ms + 1000 / hz_;
  }
  // The cron and a pause's end keep whole milliseconds (at least 1 ms
  // ahead, as before); deadlines are kept to the microsecond.
  int64_t wake_ms = next_cron_ms_;
  wake_ms = clients_.NextWakeMs(wake_ms);
  int64_t wake_us = std::max(wake_ms * 1000, (now_ms + 1) * 1000);
  if (blocking_.has_deadlines()) wake_us = std::min(wake_us, blocking_.next_deadline_us());
  return std::clamp<int64_t>(wake_us - now_us, 1, 1'000'000);
}

void Server::Cron(int64_t now_ms) {
  clock_.Anchor();
  lru_clock_ = static_cast<uint32_t>(now_ms / 1000);
  if (cron_paused_) return;  // DEBUG PAUSE-CRON: the clocks still advance
  if (watchdog_) watchdog_->Feed();
  if (migrate_sockets_) migrate_sockets_->CloseIdle(now_ms);
  stats_.ops.Sample(now_ms, stats_.total_commands);
  const io::NetTotals net = io_->net_totals();
  stats_.net_input.Sample(now_ms, net.input_bytes);
  stats_.net_output.Sample(now_ms, net.output_bytes);
  stats_.net_repl_input.Sample(now_ms, net.repl_input_bytes);
  stats_.net_repl_output.Sample(now_ms, net.repl_output_bytes);
  clients_.Cron(now_ms);  // a pause's end, idle clients, client eviction
  tracking_.LimitTable();
  persistence_.ReapChild(now_ms);
  primary_side_.AfterChildReaped();
  persistence_.Cron(now_ms);
  primary_side_.Cron(now_ms);
  replica_side_.Cron(now_ms);
  if (shutdown_.waiting()) shutdown_.Cron(now_ms);
  if (cluster_) {
    if (deferred_cluster_master_ && !loading_.active()) {
      const auto [host, port] = *std::exchange(deferred_cluster_master_, std::nullopt);
      (void)replica_side_.ReplicaOf(host, port);
    }
    cluster_->Cron(now_ms);
    RedirectBlockedClients();
  }
  // Logs its own failure.
  (void)ApplyOomScore(*config_, replica_side_.is_replica() ? OomClass::kReplica : OomClass::kPrimary);
  ReadMemoryStats();  // keeps used_memory_peak current
  // Active expiry: at most 25% of each cron period, as Redis's slow cycle.
  // Replicas do not expire keys on their own: the primary's DELs do it.
  if (active_expire_ && !replica_side_.is_replica() && !clients_.pause().active()) {
    const uint64_t start = Clock::Ticks();
    // active-expire-effort raises the share of the period by 2% a step
    // (25% to 43%), as Redis's ACTIVE_EXPIRE_CYCLE_SLOW_TIME_PERC.
    const int effort = active_expire_effort_ - 1;
    keyspace_.ActiveExpireCycle(now_ms, (25 + 2 * effort) * 10000 / hz_, effort);
    const int64_t took_us = clock_.TicksToMicros(Clock::Ticks() - start);
    stats_.expire_cycle_us += static_cast<uint64_t>(took_us);
    if (latency_.monitor().threshold_ms() > 0) latency_.monitor().AddIfNeeded("expire-cycle", took_us / 1000);
  }
  if (active_rehashing_) keyspace_.RehashCron(1000);  // 1 ms per tick, as Redis's activerehashing
  // An eviction cut short by maxmemory-eviction-tenacity goes on from the
  // cron too (Redis's evictionTimeProc), not only before the next command.
  if (evictor_.running()) EvictForCron(now_ms);
}

void Server::OnNotify() {
  RINGKV_DCHECK_MAIN_THREAD();
  if (cluster_) cluster_->OnBusEvents();  // the cluster bus has news (BusNet's events)
  replica_side_.PollSync();              // the sync worker's
}

RdbSaveOptions Server::ReplSaveInfo() const {
  RdbSaveOptions o;
  if (primary_side_.primary() || replica_side_.is_replica()) {
    o.repl_id = repl_ids_.replid;
    o.repl_offset = static_cast<int64_t>(master_repl_offset());
    o.repl_stream_db = replica_side_.StreamDb();
  }
  return o;
}

void Server::BeforeFlush() {
  RINGKV_DCHECK_MAIN_THREAD();
  // As Redis's serverCron takes the signal: not while DEBUG PAUSE-CRON
  // holds the cron (SHUTDOWN ABORT may still cancel it then).
  if (shutdown_.signal_pending() && !shutdown_.requested() && !cron_paused_) shutdown_.HandleSignal();
  primary_side_.BeforeFlush();
  replica_side_.ApplyHeld();
  persistence_.BeforeSleep();  // the AOF written; held replies that need no fsync sent
  if (tracking_.has_broadcasts()) tracking_.Broadcast();
  replica_side_.NoteAofFed();
  persistence_.EndTurn();
  if (shutdown_.requested()) io_->RequestStop();
}

}  // namespace ringkv::server
