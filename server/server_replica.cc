// Server: its side of a replica's replication. The link to the primary,
// the sync worker, the held commands and the acknowledgements are
// repl::ReplicaSide's (replication/replica_side.h), created by REPLICAOF host
// port; here are the role changes (REPLICAOF, FAILOVER) and what ReplicaSide
// asks of the server (repl::ReplicaHost): the sync settings and the diskless
// loader, loading a full sync's payload into the dataset, the primary's
// client and running its commands through the gate -- with their replies
// suppressed, every byte going to this server's own backlog (for its
// replicas and a later PSYNC after a promotion), writes also to its AOF.
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <optional>

#include "absl/strings/str_format.h"
#include "core/strings.h"
#include "io/thread_check.h"
#include "server/logging.h"
#include "server/persistence/rdb_snapshot.h"
#include "server/server.h"
#include "server/cluster/cluster_mode.h"
#include "server/supervision.h"
#include "server/replica_glue.h"

namespace ringkv::server {
// The replica side's write gates (READONLY, MASTERDOWN) read these.
void Server::BindReplicaConfig() {
  config_->Bind("replica-read-only", &replica_read_only_);
  config_->Bind("replica-serve-stale-data", &serve_stale_data_);
}

RdbSaveOptions Server::ReplSaveInfo() const {
  RdbSaveOptions o;
  if (primary_side_.primary() || replica_) {
    o.repl_id = repl_ids_.replid;
    o.repl_offset = static_cast<int64_t>(master_repl_offset());
    o.repl_stream_db = SnapshotStreamDb();
  }
  return o;
}

int Server::SnapshotStreamDb() const {
  // A primary's stream after a snapshot starts with SELECT (ForceSelect).
  return replica_ ? replica_->StreamDb() : 0;
}

std::string Server::ReplicaOf(const std::string& host, int port) {
  if (host.empty()) {  // REPLICAOF NO ONE
    if (!replica_) return "+OK";
    replica_->CloseLink();
    replica_.reset();  // with the keys its own clients gave a deadline
    keyspace_.set_expiry_mode(core::ExpiryMode::kDelete);  // every key expires here now
    if (repl::Primary* primary = primary_side_.primary()) {
      // Our own writes follow the primary's stream: the first one selects
      // its database (the stream's last SELECT was the old primary's).
      primary->ForceSelect();
      // Keep the history: the old primary's id becomes the secondary one, so
      // its other replicas can continue here with a partial resync.
      repl_ids_.replid2 = repl_ids_.replid;
      repl_ids_.second_offset = static_cast<int64_t>(master_repl_offset()) + 1;
      repl_ids_.replid = repl::ReplicationIds::Fresh().replid;
      // Our replicas reconnect and continue with PSYNC under the new id.
      primary_side_.DisconnectReplicas();
    }
    SetLogRoleReplica(false);
    Log(kNotice, "MASTER MODE enabled");
    return "+OK";
  }
  if (replica_ && replica_->link().host == host && replica_->link().port == port) {
    return "+OK Already connected to specified master";
  }
  // Our replicas stay, as Redis 7.0 keeps them: if the new primary
  // continues our history they miss nothing; they are disconnected (and
  // resync with us) only when our history changes -- a partial resync under
  // another id, or a full sync once its payload has arrived (LoadFullSync).
  if (replica_) {
    // A replica moving to another primary keeps its link's database, as
    // Redis keeps its cached master.
    replica_->Retarget(host, port);
  } else {
    // Clients blocked here would be served by the new primary's writes and
    // diverge from it: they are told and disconnected, as in Redis.
    blocking_.DisconnectAll(
        "UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)");
    // A primary turning replica starts from db 0 (the new primary's stream
    // starts with SELECT: it promoted itself).
    if (!replica_glue_) replica_glue_ = std::make_unique<ReplicaGlue>(*this);
    replica_ = std::make_unique<repl::ReplicaSide>(*replica_glue_, host, port, /*db=*/0);
  }
  // Expired keys stay until the primary's DEL (reads do not see them).
  keyspace_.set_expiry_mode(core::ExpiryMode::kHide);
  SetLogRoleReplica(true);
  Log(kNotice, StrCat("Connecting to MASTER ", host, ":", port));
  if (start_time_ms_ != 0) replica_->StartSync();  // at start-up: once listening
  return "+OK";
}

void Server::OnNotify() {
  RINGKV_DCHECK_MAIN_THREAD();
  if (cluster_) cluster_->OnBusEvents();  // the cluster bus's thread has news
  if (replica_) replica_->PollSync();
}

repl::SyncRequest Server::NewSyncRequest() {
  repl::SyncRequest req;
  req.masterauth = config_->Str("masterauth");
  req.masteruser = config_->Str("masteruser");
  // With tls-replication the primary is told our TLS port (as Redis).
  const bool tls = config_->Bool("tls-replication");
  const int64_t own_port = tls && config_->Int("tls-port") != 0 ? config_->Int("tls-port") : config_->Int("port");
  req.listening_port =
      static_cast<int>(config_->Int("replica-announce-port") > 0 ? config_->Int("replica-announce-port") : own_port);
  if (tls) req.tls_ctx = io_->tls().client_ctx();
  req.announce_ip = config_->Str("replica-announce-ip");
  req.timeout_s = static_cast<int>(config_->Int("repl-timeout"));
  req.bind_source_addr = config_->Str("bind-source-addr");
  req.rdb_path = absl::StrFormat("temp-%d.%d.rdb", static_cast<int>(UnixMs() / 1000), static_cast<int>(getpid()));
  // Diskless load: the worker parses the payload from the socket into a
  // staging keyspace, swapped in when complete -- meanwhile this server keeps
  // serving its current data. on-empty-db does so only when we hold no keys
  // (as Redis); otherwise, and with `disabled`, the payload goes to a file.
  const std::string& load_mode = config_->Str("repl-diskless-load");
  bool empty = true;
  for (int i = 0; i < keyspace_.count() && empty; ++i) empty = keyspace_.db(i).size() == 0;
  sync_staging_.reset();
  if (load_mode == "swapdb" || (load_mode == "on-empty-db" && empty)) {
    sync_staging_ = std::make_unique<core::Keyspace>(keyspace_.count());
    sync_staging_->set_expiry_mode(core::ExpiryMode::kHide);  // keeps expired keys, as a replica loads
    sync_staging_->limits() = keyspace_.limits();
    sync_staging_->access_policy() = keyspace_.access_policy();
    core::Keyspace* staging = sync_staging_.get();
    RdbLoadStats* stats = &sync_staging_stats_;
    // As Redis 7.0: a payload of the history this server already follows
    // (the same primary replication id) is loaded while the current data
    // keeps being served (async_loading); one of another history loads
    // "synchronously" -- clients get -LOADING meanwhile -- though still
    // aside, so a failed load leaves the current data in place.
    std::atomic<bool>* flag_async = &async_loading_;
    std::atomic<bool>* flag_sync = &sync_loading_;
    const std::string own_replid = repl_ids_.replid;
    req.load_payload = [staging, stats, flag_async, flag_sync, own_replid](
                           core::ByteSource* src, const std::string& primary_replid) -> absl::Status {
      const bool async = primary_replid == own_replid;
      std::atomic<bool>* loading = async ? flag_async : flag_sync;
      Log(kNotice, "MASTER <-> REPLICA sync: Loading DB in memory");
      // Clients wait on a load of another history (-LOADING): the watchdog
      // times it as it times the main thread (server/watchdog.h).
      std::optional<Watchdog::BlockingWork> watched;
      if (!async) watched.emplace();
      loading->store(true);
      absl::StatusOr<RdbLoadStats> loaded = LoadRdbInto(src, *staging, UnixMs());
      loading->store(false);
      if (!loaded.ok()) {
        Log(kNotice, "MASTER <-> REPLICA sync: Discarding the half-loaded data");
        return loaded.status();
      }
      *stats = *loaded;
      return absl::OkStatus();
    };
  }
  return req;
}

bool Server::LoadFullSync(repl::SyncResult& r, int64_t now_ms) {
  Log(kNotice, StrCat("MASTER <-> REPLICA sync: received ", r.payload_bytes, " bytes of ",
                      r.eof_payload ? "diskless (EOF-marked) " : "", "RDB payload"));
  absl::StatusOr<RdbLoadStats> loaded;
  if (r.rdb_path.empty()) {  // parsed from the socket into the staging keyspace
    Log(kNotice, "MASTER <-> REPLICA sync: Swapping the loaded data in (diskless load)");
    for (int i = 0; i < keyspace_.count(); ++i) keyspace_.db(i).Swap(sync_staging_->db(i));
    loaded = sync_staging_stats_;
    uint64_t old_keys = 0;
    for (int i = 0; i < sync_staging_->count(); ++i) old_keys += sync_staging_->db(i).size();
    lazy_freer_.Free(std::move(sync_staging_), old_keys);  // the old data, freed off the main thread
  } else {
    Log(kNotice, "MASTER <-> REPLICA sync: Flushing old data");
    // replica-lazy-flush: the old data is freed on the lazy-free thread
    // (as FLUSHALL ASYNC), or here before loading. (The diskless swap
    // above always frees it lazily, as Redis's discarded temp databases.)
    const bool lazy = config_->Bool("replica-lazy-flush");
    for (int i = 0; i < keyspace_.count(); ++i) {
      core::Database& db = keyspace_.db(i);
      if (lazy && db.size() > 0) {
        const size_t keys = db.size();
        lazy_freer_.Free(db.Detach(), keys);
      } else {
        db.Clear();
      }
    }
    Log(kNotice, "MASTER <-> REPLICA sync: Loading DB in memory");
    NotifyStatus("MASTER <-> REPLICA sync: Loading DB in memory");
    loading_ = true;
    // Clients and the cluster bus are served every
    // loading-process-events-interval-bytes, as Redis's replica loads
    // (loading-ok commands run, the others get -LOADING).
    struct stat st {};
    loading_progress_.Start(now_ms, ::stat(r.rdb_path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0);
    LoadProgressHook progress;
    progress.interval_bytes = static_cast<uint64_t>(config_->Int("loading-process-events-interval-bytes"));
    progress.serve = [this](uint64_t consumed) { return ServeWhileLoading(consumed); };
    loaded = LoadRdbFile(r.rdb_path, keyspace_, now_ms, /*replace=*/false, &progress);
    // Stopped by a shutdown: loading_ stays set, so the half-loaded data is
    // never saved, and the main loop's next turn completes the shutdown.
    if (!absl::IsCancelled(loaded.status())) loading_ = false;
    if (!loaded.ok()) {
      Log(kWarning,
          StrCat("Failed trying to load the MASTER synchronization DB from disk: ", loaded.status().message()));
      for (int i = 0; i < keyspace_.count(); ++i) keyspace_.db(i).Clear();
      ::unlink(r.rdb_path.c_str());
      ::close(r.fd);
      return false;
    }
    if (config_->Bool("rdb-del-sync-files") && persistence_.disabled()) {
      // rdb-del-sync-files: a replica without persistence keeps no copy.
      Log(kNotice, "Removing the RDB file obtained from the master. This replica has persistence disabled");
      ::unlink(r.rdb_path.c_str());
    } else if (::rename(r.rdb_path.c_str(), config_->Str("dbfilename").c_str()) != 0) {
      ::unlink(r.rdb_path.c_str());
    }
  }
  // The primary's libraries replace ours, as its keys do.
  if (absl::Status f = LoadFunctionLibraries(loaded->function_libraries); !f.ok()) {
    Log(kWarning, StrCat("MASTER <-> REPLICA sync: ", f.message()));
  }
  // Our history is replaced: replicas of ours must resync too.
  primary_side_.DropBacklog();
  persistence_.rdb().set_load_stats(*loaded);
  replica_->ForgetOwnExpiry();  // the keys it remembered are gone
  // The stream after the snapshot continues in the database it names
  // (a primary's starts with SELECT anyway; a chained replica's may not).
  replica_->set_stream_db(loaded->repl_stream_db);
  // The primary's history is ours now: its id, and a backlog from its offset.
  repl_ids_ = repl::ReplicationIds{};
  repl_ids_.replid = r.replid;
  repl_ids_.offset = r.offset;
  primary_side_.CreateBacklogAt(r.offset);
  // The AOF described the old dataset: rebuild it from the new one.
  persistence_.RestartAof(now_ms);
  return true;
}

}  // namespace ringkv::server

namespace ringkv::server {

void Server::ExecuteFromMaster(Client& c, Argv argv) {
  RINGKV_DCHECK_MAIN_THREAD();
  // The primary decided which keys are live: its commands see expired keys
  // that have not been deleted yet (its DEL comes in the stream).
  keyspace_.set_expiry_mode(core::ExpiryMode::kKeep);
  Execute(c, argv);
  keyspace_.set_expiry_mode(core::ExpiryMode::kHide);
  if (replica_) replica_->Applied(argv, c.in_multi);
}

void Server::SendAckToMaster() {
  if (replica_) replica_->SendAck();
}

void Server::OnMasterLinkClosed(const Client& link) {
  if (replica_) replica_->OnLinkClosed(link.db);
}

void Server::RememberOwnVolatileKeys(const Client& c, const CommandSpec& spec, Argv argv) {
  repl::ReplicaKeyExpiry& own = replica_->own_expiry();
  core::Database& db = keyspace_.db(c.db);
  for (std::string_view key : CommandKeys(spec, argv)) own.RememberIfVolatile(db, key);
}

void Server::ReplicaCron(int64_t now_ms) {
  if (repl::ReplicaKeyExpiry* own = replica_->own_expiry_if_any()) {
    // As Redis's expireSlaveKeys: deleted here, the DEL goes to our AOF.
    own->ExpireDue(keyspace_, now_ms, [this](int db, std::string_view key) {
      std::string k(key);
      std::string_view del[] = {"DEL", k};
      Propagate(db, del);
      KeyEvent(notify::kExpired, "expired", db, k, /*by_server=*/true);
    });
  }
  replica_->Cron(now_ms);
}

}  // namespace ringkv::server

namespace ringkv::server {

std::string Server::StartFailover(const std::string& host, int port, int64_t timeout_ms, bool force) {
  std::string refusal = repl::Failover::Refusal(replica_ != nullptr, failover_ != nullptr, primary_side_.primary(), host, port);
  if (!refusal.empty()) return refusal;
  failover_ = std::make_unique<repl::Failover>(host, port, force, timeout_ms > 0 ? UnixMs() + timeout_ms : 0);
  // No new writes while the target catches up (Redis pauses writes too).
  PauseClients(INT64_MAX / 2, /*all=*/false);
  primary_side_.RequestAcks();
  Log(kNotice, host.empty() ? std::string("FAILOVER requested to any replica.")
                            : StrCat("FAILOVER requested to ", host, ":", port, "."));
  return "";
}

std::string Server::AbortFailover() {
  if (!failover_) return "ERR No failover in progress.";
  EndFailover(false, "aborted by user");
  return "";
}

void Server::EndFailover(bool ok, std::string_view why) {
  if (!failover_) return;
  const bool demoted = failover_->in_progress();
  failover_.reset();
  if (!ok && demoted) ReplicaOf("", 0);  // the target did not take over: back to primary
  UnpauseClients();
  Log(ok ? kNotice : kWarning, ok ? std::string("Failover target accepted: this server is now a replica.")
                                  : StrCat("FAILOVER aborted: ", why));
}

void Server::FailoverCron(int64_t now_ms) {
  const repl::Failover::Step step = failover_->Cron(primary_side_.primary(), master_repl_offset(), now_ms);
  if (step.kind == repl::Failover::Step::Kind::kAbort) {
    EndFailover(false, step.why);
  } else if (step.kind == repl::Failover::Step::Kind::kHandOver) {
    const std::string host = failover_->host();
    ReplicaOf(host, failover_->port());
  }
}

}  // namespace ringkv::server
