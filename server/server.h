// Server: the main command thread's state and the dispatch gate.
//
// Implements io::CommandSink: every command parsed by any I/O thread arrives
// here, on the main thread, and passes one gate (Execute, command_gate.cc:
// named steps in Redis's order -- lookup, arity, auth, ACL, cluster slot,
// memory, persistence, replication, loading, busy script, pause, MULTI
// queueing -- then Call) before its handler runs. Owns the
// keyspace, the clients, the command table and the statistics INFO reports.
//
// Thread-safety: main thread only, except RequestShutdown() (signal-safe).
// The entry points (Execute, Call, CallFromScript, ExecuteFromAof,
// Propagation, KeyEvent, the timer and end-of-turn work, the keyspace
// observer's deletions; the primary's stream enters through
// ReplicaSide::ExecuteFromMaster) check it in debug builds
// (RINGKV_DCHECK_MAIN_THREAD).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <set>
#include <utility>
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/eviction.h"
#include "core/keyspace.h"
#include "io/io_system.h"
#include "io/thread_check.h"
#include "server/client.h"
#include "server/client_pause.h"
#include "server/clients.h"
#include "server/cluster/cluster_hooks.h"
#include "server/clock.h"
#include "server/command_table.h"
#include "server/config.h"
#include "server/error_stats.h"
#include "server/eviction_memory.h"
#include "server/latency_stats.h"
#include "server/loading.h"
#include "server/lazy_free.h"
#include "server/migrate_sockets.h"
#include "server/monitors.h"
#include "server/output_limits.h"
#include "server/held_pushes.h"
#include "server/pubsub/pubsub.h"
#include "server/reply_paths.h"
#include "server/server_stats.h"
#include "server/persistence/persistence.h"
#include "server/persistence/rdb_snapshot.h"
#include "server/primary_side/primary_side.h"
#include "server/propagation.h"
#include "server/replica_side/replica_side.h"
#include "server/wait_registry.h"
#include "server/watchdog.h"
#include "server/blocking.h"
#include "server/keyspace_events.h"
#include "server/shutdown.h"
#include "server/slowlog.h"
#include "server/tracking.h"
#include "server/transactions.h"
#include "server/unexpected_errors.h"
#include "server/scripting/script_run.h"
#include "server/scripting/scripting_side.h"
#include "replication/full_sync.h"
#include "replication/primary.h"
#include "replication/replication_info.h"

namespace ringkv::server {

namespace acl {
class Acl;
}  // namespace acl
class ClusterMode;

// Final: the hooks it implements for its components (private bases) are
// called directly, not through a vtable, from its own code.
class Server final : public io::CommandSink, public core::KeyspaceObserver,
                     private BlockedClients::Hooks, private Tracking::Delivery, private Shutdown::Hooks,
                     private Persistence::Hooks, private PrimarySide::Hooks, private ReplicaSide::Hooks,
                     private PubSub::Hooks, private scripting::ScriptingSide::Hooks, private Clients::Hooks,
                     private Loading::Hooks {
 public:
  explicit Server(std::unique_ptr<Config> config);
  ~Server() override;

  // Binds the listening sockets (port, bind), before anything is loaded, as
  // Redis does. Errors name the cause.
  absl::Status Listen();
  // port, bind, tcp-backlog and tcp-keepalive as the I/O layer takes them.
  io::IoOptions ListenerOptions() const;
  // What Redis's initServer does after listening and before the pidfile is
  // written: in cluster mode, the node's nodes.conf, locked -- so that a
  // second node refused the lock never touches the first one's pidfile.
  absl::Status Init();
  // Loads the dataset (AOF when appendonly is on, else the RDB file), then
  // starts the rings and serves the listeners (opened here unless Listen
  // did). Errors name the cause. REQUIRES: Init succeeded.
  absl::Status Start();
  // Serves until SHUTDOWN or a signal; returns the process exit code.
  int Run();
  // Async-signal-safe.
  void RequestShutdown(int signal);

  // ---- io::CommandSink ---------------------------------------------------------
  std::string OnAccept(const io::SocketAddress& peer) override;
  void OnOpen(io::Connection* conn) override;
  void OnCommand(io::Connection* conn, std::span<const std::string_view> argv) override;
  void OnPrefetchedCommand(io::Connection* conn, std::span<const std::string_view> argv,
                           const io::PrefetchSlot& slot) override;
  // Three rounds over the batch: each command's first key's bucket
  // (PrefetchLookUp), the bucket's first node, then the key's entry and what
  // the command's prefetch_value asks of its value (PrefetchValue). A round
  // loads what the previous one asked for, so a batch's misses overlap.
  void PrefetchBatch(io::Connection* conn, std::span<const std::span<const std::string_view>> argvs,
                     std::span<io::PrefetchSlot> slots) override;
  void OnProtocolError(io::Connection* conn, std::string_view message) override;
  void OnLargeInputHeld(io::Connection* conn) override;
  // PrefetchBatch's first round: the command, its first key, the key's hash
  // and bucket; `slot.stages`, the rounds the command takes.
  [[gnu::noinline]] void PrefetchLookUp(io::Connection* conn, std::span<const std::string_view> argv,
                                        io::PrefetchSlot& slot);
  // PrefetchBatch's last round: the command's prefetch_value on the key's
  // value; the entry found goes in the slot for the command's lookup
  // (core::KnownEntry).
  [[gnu::noinline]] static void PrefetchValue(std::span<const std::string_view> argv, io::PrefetchSlot& slot);
  void OnClose(io::Connection* conn) override;
  int64_t OnTimer() override;
  void BeforeFlush() override;
  void OnFsyncDone(uint32_t token, int result) override { persistence_.OnFsyncDone(token, result); }
  void OnReadable(uint32_t token, int /*result*/) override { primary_side_.OnReadable(token); }
  void OnNotify() override;

  // ---- core::KeyspaceObserver: expired and evicted keys propagate as DEL --------
  void OnKeyExpired(int db, std::string_view key) override;
  void OnKeyEvicted(int db, std::string_view key) override;
  void OnKeyCreated(int db, std::string_view key) override;
  void OnKeyMiss(int db, std::string_view key) override;

  // ---- for command handlers ----------------------------------------------------
  Config& config() { return *config_; }
  // Users, permissions, ACL LOG (server/acl/).
  acl::Acl& acl() { return *acl_; }
  // The client whose command is running (a script's: its caller).
  Client* current_client() { return current_client_; }
  uint64_t current_client_id() const { return current_client_ != nullptr ? current_client_->id() : 0; }
  const CommandTable& commands() const { return commands_; }
  CommandTable& mutable_commands() { return commands_; }
  core::Keyspace& keyspace() { return keyspace_; }
  core::Database& db(const Client& c) { return keyspace_.db(c.db); }
  // Deletes a live key; its value is freed on the lazy-free thread when
  // `async` and freeing it would take real work (more than 64 elements, as
  // Redis's LAZYFREE_THRESHOLD). False when the key did not exist.
  bool DeleteKey(core::Database& db, std::string_view key, int64_t now_ms, bool async);
  // Takes `value` (left empty) to the lazy-free thread when `async` and
  // freeing it would take real work, as DeleteKey does; otherwise leaves it.
  void FreeLaterIfBig(core::Value& value, bool async);
  bool lazy_user_del() const { return lazy_user_del_; }
  bool lazy_server_del() const { return lazy_server_del_; }
  io::IoSystem& io() { return *io_; }
  ServerStats& stats() { return stats_; }
  ErrorStats& error_stats() { return error_stats_; }
  // An error reply to `c` (through its ClientErrors): counts it in
  // total_error_replies and INFO errorstats, or -- `update_stats` false, an
  // error counted where it arose -- only as a failed call of the running
  // command. An error to the primary's link, a replica or the AOF loader
  // is also unexpected: logged, and a panic where propagation-error-behavior
  // says so.
  void CountErrorReply(Client& c, std::string_view msg, bool update_stats);
  const ClientRegistry& clients() const { return clients_.registry(); }
  Client* FindClient(uint64_t id) { return clients_.Find(id); }
  const Client* FindClient(uint64_t id) const { return clients_.Find(id); }
  // Closes a client after the replies already queued for it are sent.
  void CloseClient(Client& c) override;
  // CLIENT KILL: `c` goes now, its unsent replies dropped (Redis's
  // freeClient), a replica's share of the stream released with it -- a
  // stalled client or replica is not waited for. The caller itself (SKIPME
  // no) still gets this command's reply.
  void KillClient(Client& c, const Client& caller);
  SlowLog& slowlog() { return slowlog_; }
  int64_t start_time_ms() const { return start_time_ms_; }
  uint32_t lru_clock() const { return lru_clock_; }
  const Clock& clock() const { return clock_; }
  int hz() const { return hz_; }
  LazyFreer& lazy_freer() { return lazy_freer_; }
  // Subscriptions, PUBLISH's delivery, keyspace notifications
  // (server/pubsub/pubsub.h; its hook: CloseSlowSubscriber, below).
  PubSub& pubsub() { return pubsub_; }
  // The registry, CLIENT PAUSE, and the closes the server decides on its
  // own: timeout, output limits, client eviction (server/clients.h; its
  // hooks: server_hooks.cc).
  Clients& client_control() { return clients_; }
  // DEBUG SET-ACTIVE-EXPIRE.
  void set_active_expire(bool on) { active_expire_ = on; }
  // DEBUG PAUSE-CRON: the cron (hz) does nothing while paused.
  void set_cron_paused(bool on) { cron_paused_ = on; }
  uint64_t instantaneous_ops() const { return stats_.ops.rate(); }
  bool paused_all() const { return clients_.pause().paused_all(); }
  // ---- SHUTDOWN and SIGTERM / SIGINT (shutdown.h; its hooks: server_hooks.cc) ------
  Shutdown& shutdown() { return shutdown_; }
  std::string run_id() const { return run_id_; }
  const char* executable() const { return executable_.c_str(); }
  void set_executable(std::string path) { executable_ = std::move(path); }
  // CLIENT LIST's line for `c`; `running`: the command `c` is running (the
  // caller of CLIENT LIST / INFO), counted in qbuf and argv-mem as Redis does.
  std::string ClientInfoLine(const Client& c, int64_t now_ms, Argv running = {}) const;
  // What a client holds (CLIENT LIST's qbuf, omem, tot-mem; client eviction).
  struct ClientMemoryUse {
    uint64_t qbuf = 0, qbuf_cap = 0, obuf = 0, omem = 0, total = 0;
  };
  ClientMemoryUse MemoryOf(const Client& c) const;

  // ---- persistence and propagation -------------------------------------------------
  // Writes to the AOF and the replicas' stream, EXEC's and scripts' blocks,
  // the running command's replayable forms (server/propagation.h).
  Propagation& propagation() { return propagation_; }
  // MIGRATE's cached connections, created on the first MIGRATE.
  MigrateSockets& migrate_sockets() {
    if (!migrate_sockets_) migrate_sockets_ = std::make_unique<MigrateSockets>();
    return *migrate_sockets_;
  }
  size_t migrate_cached_sockets() const { return migrate_sockets_ ? migrate_sockets_->size() : 0; }
  // RDB snapshots, the AOF, the fork child, replies held for an fsync
  // (server/persistence/persistence.h; its hooks: server_hooks.cc).
  Persistence& persistence() { return persistence_; }
  // The dataset's loads (start-up, a replica's sync file, DEBUG RELOAD /
  // LOADAOF) and the `loading` state (server/loading.h; its hooks:
  // server_hooks.cc).
  Loading& loading() { return loading_; }
  const Loading& loading() const { return loading_; }
  // Whether a command setting a deadline already past deletes the key at
  // once (Redis's checkAlreadyExpired): not while loading, nor on a replica.
  bool DeletesPastDeadlines() const { return keyspace_.expiry_mode() == core::ExpiryMode::kDelete; }
  // SHUTDOWN's persistence work (Persistence::PrepareForShutdown).
  absl::Status PrepareForShutdown(ShutdownSave save, bool force) override {
    return persistence_.PrepareForShutdown(save, force);
  }
  void StopAccepting() override { io_->StopAccepting(); }

  // ---- keys changed: WATCH, blocked clients, keyspace notifications (server_notify.cc) ----
  // A command wrote `key`: watchers of it become dirty, clients blocked on
  // it get a chance to be served, and the keyspace event (class `type`,
  // name `event`) is published when notify-keyspace-events enables it.
  // `by_server`: the server deleted it on its own (expiry, eviction), not
  // the running command (BCAST NOLOOP clients are told).
  void KeyEvent(uint32_t type, std::string_view event, int db, std::string_view key, bool by_server = false) {
    RINGKV_DCHECK_MAIN_THREAD();
    SignalModifiedKey(db, key, by_server);
    NotifyKeyspaceEvent(type, event, db, key);
  }
  // The server deleted `key` on its own (expiry, eviction): as KeyEvent
  // with by_server, but the event is published before the key's readers
  // are told (Redis's deleteExpiredKeyAndPropagate and performEvictions
  // notify, then signal), which a connection getting both sees.
  void KeyDeletedByServer(uint32_t type, std::string_view event, int db, std::string_view key) {
    RINGKV_DCHECK_MAIN_THREAD();
    NotifyKeyspaceEvent(type, event, db, key);
    SignalModifiedKey(db, key, /*by_server=*/true);
  }
  // Redis's signalModifiedKey (WATCH, blocking, client-side caching).
  void SignalModifiedKey(int db, std::string_view key, bool by_server = false) {
    // by_server: a deletion (told before the entry goes).
    transactions_.watched().Touch(db, key, [&] { return !by_server && keyspace_.db(db).Peek(key) != nullptr; });
    blocking_.SignalWrite(db, key);
    if (!tracking_.idle()) tracking_.KeyWritten(key, current_client_id(), by_server);
  }
  void NotifyKeyspaceEvent(uint32_t type, std::string_view event, int db, std::string_view key) {
    pubsub_.NotifyKeyspaceEvent(type, event, db, key);
  }
  // A command's own pushes after the point where Redis writes its reply
  // (server/held_pushes.h): HoldPushes opens a segment for `c` (nothing
  // for a client without a connection, or one no push can reach);
  // ReleasePushes sends the oldest one after what `c`'s reply holds so
  // far; the command's end (ReleaseAllPushes, in Call) sends the rest.
  void HoldPushes(Client& c) {
    // No push can reach a client without subscriptions while nobody tracks:
    // the common write holds nothing.
    if (c.conn != nullptr && (c.pubsub || !tracking_.idle())) held_pushes_.Hold(c);
  }
  void ReleasePushes(Client& c) {
    if (held_pushes_.holder() != &c) return;
    held_pushes_.ReleaseNext(c.closing ? nullptr : &FanoutTargetOf(c, persistence_, *io_));
  }
  void ReleaseAllPushes(Client& c) {
    if (held_pushes_.holder() != &c) [[likely]] return;
    held_pushes_.ReleaseAll(c.closing ? nullptr : &FanoutTargetOf(c, persistence_, *io_));
  }
  // FLUSHDB / FLUSHALL (before emptying `db`), SWAPDB (after swapping):
  // watched keys that existed are touched; for SWAPDB, keys clients block
  // on may have arrived.
  void SignalFlushingDb(int db);
  void SignalSwappedDbs(int a, int b);

  // ---- client-side caching (tracking.h; its Delivery: below) ----------------------
  // CLIENT TRACKING clients, what they read, and their invalidations.
  Tracking& tracking() { return tracking_; }

  // MONITOR's clients (monitors.h); FeedMonitors delivers to them.
  Monitors& monitors() { return monitors_; }

  // ---- scripting (EVAL, FUNCTION; server/scripting/) ---------------------------------
  // The component's owner: Ensure() makes it on the first script command.
  scripting::ScriptingSide& scripting() { return scripting_; }

  // ---- cluster mode (server/cluster/): null unless cluster-enabled yes ----------------
  ClusterMode* cluster() { return cluster_.get(); }
  // What the cluster bus asks of this server (server_cluster.cc).
  ClusterHooks MakeClusterHooks();
  // Cluster mode: clients blocked on keys whose slot moved away (or with
  // the cluster down) are answered with the redirect and unblocked, as
  // Redis's clientsCron does (clusterRedirectBlockedClientIfNeeded).
  void RedirectBlockedClients();
  // A PUBLISH / SPUBLISH run here: in cluster mode, sent over the bus
  // (Redis 7.0 then does not propagate it to replicas); else to replicas.
  void PropagatePublish(PubSub::Kind kind, Argv argv, int db);
  // The command gate for redis.call / redis.pcall (server_scripting.cc): a
  // part of the gate, not of scripting -- lookup, arity, what scripts may
  // not run, ACL, the read-only / OOM / replica / persistence / cluster
  // refusals with Redis's script errors, then Call on the script's client
  // (no connection). The reply is written to `rb`.
  void CallFromScript(Client& script_client, scripting::ScriptRun& run, const CommandSpec* command, Argv argv,
                      io::ReplyBuilder& rb);

  // ---- latency monitoring and tracking (server_latency.cc) ----------------------------
  // LATENCY's events (latency-monitor-threshold).
  LatencyMonitor& latency() { return latency_.monitor(); }
  // latency-tracking and its percentiles (INFO latencystats), the fork rate.
  const LatencyStats& latency_stats() const { return latency_; }
  // What LATENCY DOCTOR weighs besides the events.
  LatencyDoctorInput LatencyDoctorInputs() const;
  // MEMORY STATS' startup.allocated: used memory once the server was set up,
  // before the dataset loaded.
  uint64_t startup_allocated() const { return startup_allocated_; }

  // ---- blocking commands (blocking.h; the Server's hooks: server_hooks.cc) ----------
  // Whether the running command may block `c` (not inside EXEC, not the
  // primary's link or the AOF loader); when not, it answers as on timeout.
  bool MayBlock(const Client& c) const { return !transactions_.in_exec() && !c.is_master && c.conn != nullptr; }
  // Blocked clients: BLPOP & co., WAIT / WAITAOF, SHUTDOWN.
  BlockedClients& blocking() { return blocking_; }
  // INFO's blocked_clients: blocked on keys or WAIT, and held by CLIENT
  // PAUSE (Redis blocks those too).
  size_t blocked_clients() const;

  // ---- MULTI / EXEC / WATCH (transactions.h; EXEC's run: server_transactions.cc) ----
  Transactions& transactions() { return transactions_; }
  // EXEC: runs the queued commands as one unit, propagated as MULTI ... EXEC
  // when more than one of them writes.
  void Exec(CommandContext& ctx);
  // Drops the client's blocking, MULTI, WATCH and MONITOR state (closing,
  // RESET).
  void ResetClientState(Client& c);
  // What the client owns beyond its base struct: the names of its allocated
  // components (DEBUG CLIENT-COMPONENTS).
  std::vector<std::string> ClientComponents(const Client& c) const;

  // ---- replication (primary side: server/primary_side/primary_side.h) ------------------
  // The backlog, replicas, SYNC / PSYNC, REPLCONF ACK, WAIT / WAITAOF, the
  // min-replicas gate; its heavy parts are made on first use.
  PrimarySide& primary_side() { return primary_side_; }
  const PrimarySide& primary_side() const { return primary_side_; }
  repl::ReplicationIds& repl_ids() { return repl_ids_; }
  uint64_t master_repl_offset() const {
    const repl::Primary* p = primary_side_.primary();
    return p != nullptr ? p->offset() : repl_ids_.offset;
  }
  // The offset the cluster bus announces and CLUSTER SHARDS shows for
  // myself (Redis's replicationGetSlaveOffset on a replica): 0 during a full
  // sync -- the others then see this replica `loading` -- else
  // master_repl_offset.
  uint64_t announced_repl_offset() const {
    return replica_side_.full_sync_in_progress() ? 0 : master_repl_offset();
  }

  // ---- replication (replica side) -----------------------------------------------------
  // REPLICAOF, the link to the primary, the READONLY / MASTERDOWN gates,
  // FAILOVER (server/replica_side/replica_side.h; its hooks: server_hooks.cc).
  ReplicaSide& replica_side() { return replica_side_; }
  const ReplicaSide& replica_side() const { return replica_side_; }
  // Replication info saved in RDB files (so a restart can PSYNC).
  RdbSaveOptions ReplSaveInfo() const;
  // Where a reply to `c` goes: its connection, or -- with appendfsync always,
  // when the reply may depend on AOF bytes not yet fsynced (`writes`: the
  // command is a write) or replies are already held -- a held segment
  // (DurableReplies). On the path of every reply: inlined.
  // (server/reply_paths.h, shared with PubSub's delivery).
  [[gnu::always_inline]] inline io::OutBuffer& ReplyTarget(Client& c, bool writes = false) {
    return ReplyTargetOf(c, persistence_, *io_, writes);
  }

 private:
  // WATCH on FLUSH, SWAPDB and a replaced dataset (server_notify.cc).
  void TouchWatchedDb(int db, core::Database& emptied, core::Database* replacement);
  // The command gate (command_gate.cc): its steps, in order, are members of
  // GateRun, one command's pass, which lives on Execute's stack.
  struct GateRun;
  // `prefetched`: what a pipelined batch's Prefetch found for this command
  // (its CommandSpec in `what`, when found; its first key's index and hash
  // in `arg` and `hash`, when `arg` is not 0), taken instead of finding it
  // again. Null: nothing known.
  void Execute(Client& c, Argv argv, const io::PrefetchSlot* prefetched = nullptr);
  // The part of Execute after the checks: the handler, propagation, output
  // limits, MONITOR, stats, slowlog. Also runs EXEC's queued commands and
  // re-runs a blocked client's command when a key is ready. `start_ticks`
  // (Clock::Ticks()) starts the command's duration: Execute passes the one
  // reading it derived now_ms from, so a command reads the TSC twice (start
  // and end), not three times.
  void Call(Client& c, const CommandSpec& spec, Argv argv, io::ReplyBuilder& rb, int64_t now_ms,
            uint64_t start_ticks);
  // Call's steps: propagating what the command wrote (its own argv or the
  // form it asked for; not EXEC's or a script's, which propagate their
  // commands), client-output-buffer-limit and maxmemory-clients, and the
  // command's statistics and slowlog entry. PropagateCall runs only for a
  // command that wrote (dirty moved, or forms queued) and is not EXEC:
  // Call tests that inline.
  void PropagateCall(Client& c, const CommandSpec& spec, Argv argv);
  // `new_call` false: a served blocked command's final run, counted when it
  // blocked (its time and histogram entry only). Inlined into Call, its
  // only caller.
  [[gnu::always_inline]] inline void RecordCall(const Client& c, const CommandSpec& spec, Argv argv,
                                                int64_t duration_us, int64_t now_ms, bool new_call);
  // ---- BlockedClients::Hooks (server_hooks.cc) ----------------------------------
  Client* BlockedClient(uint64_t id) override { return clients_.Find(id); }
  const core::Value* PeekValue(int db, std::string_view key) override;
  void WakeTimerInUs(int64_t us) override;
  void ReplyUnblockError(Client& c, std::string_view msg) override;
  void ReplyBlockTimeout(Client& c) override;
  void RerunBlocked(Client& c, std::span<const std::string_view> argv, int64_t first_call_us,
                    std::string_view served_key) override;
  void RecordUnblockedLatency(const CommandSpec& spec, int64_t latency_us) override;
  void KeyWaitersPresent(bool present) override { WatchCreatedKeys(BlockedClients::kWatchCreatedKeys, present); }
  // ---- Tracking::Delivery ------------------------------------------------------
  Client* TrackingClient(uint64_t id) override { return clients_.Find(id); }
  io::OutBuffer& PushTarget(Client& c) override {
    if (io::OutBuffer* held = held_pushes_.TargetFor(&c)) [[unlikely]] return *held;
    return ReplyTarget(c);
  }
  void PushedToRedirect(Client& target) override { clients_.LimitOutput(target, UnixMs()); }
  void FeedMonitors(const Client& c, Argv argv, int64_t now_us);

  // Apply callbacks: each binds one concern's cached settings to the config
  // (set now, refreshed by CONFIG SET), in the file that owns that state.
  void BindConnectionConfig();   // server.cc: auth, limits, cron, log level
  void BindListenerConfig();     // server.cc: port, bind, tcp-keepalive
  void BindMemoryConfig();       // server.cc: maxmemory, eviction, encodings, lazy frees
  // After the eviction a command triggered (started at `start_ticks`):
  // "eviction-cycle" when there was something to do, "eviction-del".
  void NoteEvictionLatency(uint64_t start_ticks, uint64_t evicted_before, bool fits);
  void EvictForCron(int64_t now_ms);
  // aclfile / user directives, at start-up.
  absl::Status LoadUsers();
  // The command gate's entrance for the AOF loader (command_gate.cc): one
  // command of the file on `c`, its fake client (no connection). Only
  // LookUp and CheckArity judge it; their refusals are the load's error
  // (DataLoss: "Unknown command 'X'" as Redis's loadSingleAppendOnlyFile;
  // "Wrong number of arguments for 'x'" is ringkv's own: Redis's loader
  // does not check arity, but no Redis writes such a command and ringkv's
  // handlers rely on the check). The file is otherwise obeyed, as the
  // primary's link is, and the handler runs as Redis's loader runs a
  // command: without propagation, commandstats, MONITOR or slowlog. Errors
  // in its reply do not stop the load (unexpected_error_replies).
  // `in_transaction`: a command of a MULTI block, run at its EXEC
  // (AofApply).
  absl::Status ExecuteFromAof(Client& c, Argv argv, bool in_transaction);
  void ReplyToWaiter(Client& c, const WaitSpec& spec) override { primary_side_.ReplyToWaiter(c, spec); }
  void Cron(int64_t now_ms);
  // The error a command gets from replication's rules (NOREPLICAS, READONLY,
  // MASTERDOWN), or nullptr (command_gate.cc).
  // `flags`: the command's (a script's: as it declares), or for EXEC those of
  // what it will run.
  const char* ReplicationGate(uint32_t flags) const;
  // A command on a replica's link (REPLCONF ACK): one that replies is a
  // rogue replica's, which is dropped.
  void ExecuteFromReplica(Client& c, Argv argv);
  void ResumeClient(Client& c) override;
  // ---- Shutdown::Hooks (server_hooks.cc; PrepareForShutdown: above) -------------------
  bool LoadingDataset() override { return loading_.active(); }
  bool ReplicasCaughtUp() override;
  ClientPause::Window PauseWritesForShutdown() override;
  void RestorePause(const ClientPause::Window& before) override;
  void LogReplicasAtShutdown() override;
  void FailShutdownWaiters() override;
  // ---- Persistence::Hooks (server_hooks.cc) ---------------------------------------------
  void SubmitFsync(int fd, uint32_t token) override { io_->SubmitFsync(fd, token); }
  void WakeInUs(int64_t us) override { io_->WakeTimerInUs(us); }
  void DeliverHeldReplies(uint64_t id, io::OutBuffer& out) override;
  void HeldRepliesReleased(uint64_t id) override;
  void OnAofDurable() override;
  bool DisklessTransferRunning() override;
  void OnDisklessTransferExited(bool ok) override;
  void AbortDisklessTransfer(std::string_view why) override;
  void OnRdbFileDone(bool ok) override;
  void UnlinkInBackground(std::vector<std::string> paths) override { lazy_freer_.Unlink(std::move(paths)); }
  // ---- PrimarySide::Hooks (server_hooks.cc) ---------------------------------------------
  io::IoSystem& ReplicationIo() override { return *io_; }
  Client* ReplicaClient(uint64_t id) override { return clients_.Find(id); }
  void CloseReplicaNow(Client& c) override;
  std::string ReplicaInfoLine(const Client& c, int64_t now_ms) override { return ClientInfoLine(c, now_ms); }
  io::OutBuffer& WaiterReplyTarget(Client& c) override { return ReplyTarget(c); }
  bool MayBlockWaiter(const Client& c) override { return MayBlock(c); }
  bool RelaysPrimaryStream() override { return replica_side_.is_replica(); }
  bool StreamFrozen() override { return replica_side_.failover() != nullptr || cluster_mf_paused_; }
  bool MayRequestAcks() override;
  void AcksRequested() override;
  int CronHz() override { return hz_; }
  int64_t ServingSinceMs() override { return start_time_ms_; }
  int StreamDbAtSnapshot() override { return replica_side_.StreamDb(); }
  std::vector<std::string> SnapshotFunctions() override { return scripting_.FunctionLibraryCodes(); }
  // ---- ReplicaSide::Hooks (server_hooks.cc; ReplicationIo, ReplicaClient and
  // ServingSinceMs: above, shared with PrimarySide::Hooks) -------------------------------
  void ExecuteMasterCommand(Client& c, Argv argv) override { Execute(c, argv); }
  bool ScriptBusy() override { return scripting_.busy(); }
  absl::StatusOr<RdbLoadStats> LoadSyncFile(const std::string& path, int64_t now_ms) override {
    return loading_.LoadSyncFile(path, now_ms);
  }
  absl::Status ReplaceFunctions(const std::vector<std::string>& codes) override {
    return scripting_.LoadFunctionLibraries(codes);
  }
  void PauseWritesForFailover() override { clients_.Pause(INT64_MAX / 2, /*all=*/false); }
  void ResumeWritesAfterFailover() override { clients_.Unpause(); }
  void PropagateOwnExpiry(int db, std::string_view key) override;
  void DatasetReplacing(core::Keyspace* incoming) override;
  // ---- PubSub::Hooks ----------------------------------------------------------------------
  void CloseSlowSubscriber(Client& c, int64_t now_ms) override { clients_.CloseForOutputLimit(c, now_ms); }
  void WeighSubscriber(Client& c, int64_t now_ms) override { clients_.Weigh(c, now_ms); }
  // ---- Clients::Hooks (server_hooks.cc; ResumeClient: above, shared with
  // BlockedClients::Hooks) ------------------------------------------------------------------
  std::string DescribeClient(const Client& c, int64_t now_ms) override { return ClientInfoLine(c, now_ms); }
  uint64_t ClientMemory(const Client& c) override { return MemoryOf(c).total; }
  uint64_t UnsentOutput(const Client& c) override { return UnsentOutputOf(c, persistence_); }
  void CloseNow(Client& c) override;
  void PauseStarted() override;
  void PauseEnded() override;
  // ---- ScriptingSide::Hooks (server_scripting.cc) ---------------------------------------
  void RunScriptCommand(Client& script_client, scripting::ScriptRun& run, const CommandSpec* command, Argv argv,
                        io::OutBuffer& out) override;
  void BeginScriptPropagation() override { propagation_.BeginBlock(); }
  void EndScriptPropagation(bool discard) override { propagation_.EndBlock(discard); }
  bool ClusterEnabled() override { return cluster_ != nullptr; }
  bool OomAtCommandStart() override { return pre_command_oom_; }
  bool CallerMayRun(const CommandSpec& spec, Argv argv) override;
  void ServeWhileBusy() override;
  // ---- Loading::Hooks (server_hooks.cc; ReplayAofCommand: command_gate.cc) ---------------
  absl::Status ReplayAofCommand(Client& fake_client, Argv argv, bool in_transaction) override {
    return ExecuteFromAof(fake_client, argv, in_transaction);
  }
  bool ServeWhileLoading() override;
  void RestoreReplicationHistory(const RdbLoadStats& loaded, bool as_replica) override;
  void FeedExpiredAtLoad(int db, Argv argv) override;
  absl::Status LoadFunctionLibraries(const std::vector<std::string>& codes,
                                     Loading::FunctionLoadMode mode) override {
    return scripting_.LoadFunctionLibraries(codes, mode);
  }
  void DatasetReplacing() override { DatasetReplacing(nullptr); }

  std::unique_ptr<Config> config_;
  CommandTable commands_;
  std::unique_ptr<acl::Acl> acl_;
  core::Keyspace keyspace_;
  std::unique_ptr<io::IoSystem> io_;
  ServerStats stats_;
  ErrorStats error_stats_;
  // total_error_replies when the innermost Call last started or ended (Redis's
  // prev_err_count): a command failed when errors were counted since.
  uint64_t errors_mark_ = 0;
  // The first run's µs of the served blocked command RerunBlocked is running
  // again (Call reads and clears it); -1 otherwise.
  int64_t rerun_first_call_us_ = -1;
  std::string_view rerun_served_key_;  // and the key it is served on (CommandContext::served_key)
  Clock clock_;
  core::Evictor evictor_;
  // What maxmemory is compared with (server/eviction_memory.h), made once
  // so no command builds a std::function.
  const std::function<size_t()> counted_memory_{[this] { return MemoryCountedForEvict(*this); }};
  std::unique_ptr<MigrateSockets> migrate_sockets_;  // lazily: see migrate_sockets()
  std::unique_ptr<Watchdog> watchdog_;               // only once watchdog-period is set
  LazyFreer lazy_freer_;
  OutputLimits output_limits_;  // client-output-buffer-limit, maxmemory-clients
  // The clients, CLIENT PAUSE, the server's own closes (timeout, limits).
  Clients clients_{*this, *config_, output_limits_, stats_.evicted_clients};
  int64_t maxmemory_ = 0;
  SlowLog slowlog_;
  int64_t start_time_ms_ = 0;
  uint32_t lru_clock_ = 0;
  int hz_ = 10;
  bool active_expire_ = true;
  int active_expire_effort_ = 1;  // active-expire-effort, 1 to 10
  bool active_rehashing_ = true;  // activerehashing
  bool cron_paused_ = false;
  // What a replica's link was answered by the command running for it
  // (ExecuteFromReplica): empty unless the replica is a rogue one.
  io::OutBuffer replica_replies_;
  Shutdown shutdown_{*this, *config_};  // SHUTDOWN / SIGTERM: the wait for replicas, the final save
  // A cluster master's manual-failover pause (MFSTART) and the client pause
  // it replaced (put back when it ends).
  bool cluster_mf_paused_ = false;
  ClientPause::Window pause_before_cluster_mf_;
  // A REPLICAOF the cluster bus asked for while a load ran on the main
  // thread (the bus is served meanwhile): done by the cron once it ended,
  // so the load and its ReplicaSide are never swapped from under it.
  std::optional<std::pair<std::string, int>> deferred_cluster_master_;
  std::string run_id_;
  std::string executable_;
  LatencyStats latency_;  // LATENCY's events, latency-tracking, the fork rate
  uint64_t startup_allocated_ = 0;

  // RDB, AOF, the fork child, held replies: a member (not behind a
  // pointer), as the reply path reads it for every reply.
  Persistence persistence_{*this, *config_, keyspace_, stats_.dirty, latency_.monitor()};
  // The dataset's loads and the `loading` state the gate reads.
  Loading loading_{*this, *config_, keyspace_, persistence_, stats_.dirty};
  // Blocked clients (any kind): their states, deadlines, the keys BLPOP &
  // co. wait on, WAIT / WAITAOF's conditions.
  BlockedClients blocking_{*this};
  Transactions transactions_;  // MULTI queues and WATCHed keys
  const CommandSpec* exec_spec_ = nullptr;
  // Scripting: a member (the gate's busy check is a load); the component
  // behind it is made by the first script command.
  scripting::ScriptingSide scripting_{*this, *config_, clock_, commands_};
  bool pre_command_oom_ = false;
  Monitors monitors_;                // MONITOR clients, in the order they started
  // Subscriptions, their delivery, notify-keyspace-events: after what it
  // borrows (the clients, the I/O system, persistence, the output limits).
  HeldPushes held_pushes_;  // a command's own pushes after its reply point
  PubSub pubsub_{*this, *config_, *this, clients_.registry(), persistence_, *io_, output_limits_, held_pushes_};
  Tracking tracking_{*this};  // CLIENT TRACKING clients, what they read, invalidations
  // The connection whose command is running; a script's commands run on
  // behalf of its caller (Redis's server.current_client).
  Client* current_client_ = nullptr;
  int64_t next_cron_ms_ = 0;
  // Replication: ids always (INFO, PSYNC); the rest only once a replica attaches.
  repl::ReplicationIds repl_ids_ = repl::ReplicationIds::Fresh();
  // The primary side: a member (its checks on the command path are inline
  // loads, no pointer to follow); what it allocates, it allocates when a
  // replica first attaches or syncs.
  PrimarySide primary_side_{*this, *config_, repl_ids_, persistence_, blocking_, stats_, keyspace_, output_limits_};
  // The replica side: a member (the command path's is_replica() is an
  // inline load); it allocates only when REPLICAOF makes this a replica.
  ReplicaSide replica_side_{*this, *config_, repl_ids_, primary_side_, persistence_, blocking_, keyspace_, lazy_freer_};
  // Where writes go: after what it feeds (and the Loading it reads).
  Propagation propagation_{persistence_, primary_side_, replica_side_, loading_};
  int restored_stream_db_ = 0;  // AUX repl-stream-db of the RDB a replica restarted from
  std::unique_ptr<ClusterMode> cluster_;  // cluster-enabled yes only
  bool lazy_expire_ = false;      // lazyfree-lazy-expire: expiry propagates as UNLINK
  bool lazy_user_del_ = false;    // lazyfree-lazy-user-del: DEL frees as UNLINK does
  bool lazy_server_del_ = false;  // lazyfree-lazy-server-del: implicit deletions free lazily
  bool lazy_eviction_ = false;    // lazyfree-lazy-eviction: eviction propagates as UNLINK
  // Errors on the primary's stream or the AOF, a replica unable to persist.
  UnexpectedErrors unexpected_errors_;
  bool replica_ignore_maxmemory_ = true;  // cached for eviction: a replica evicts nothing of its own
};

// The error listener of the reply builders of one client's command: each
// error reply is counted for `c` (Server::CountErrorReply). Lives on the
// stack beside its builder; it costs nothing until an error is written.
class ClientErrors final : public io::ErrorReplyListener {
 public:
  ClientErrors(Server& server, Client& c) : server_(server), client_(c) {}
  void OnErrorReply(std::string_view msg, bool update_stats) override {
    server_.CountErrorReply(client_, msg, update_stats);
  }

 private:
  Server& server_;
  Client& client_;
};

}  // namespace ringkv::server
