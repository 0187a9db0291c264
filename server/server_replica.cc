// Server: the replica side of replication. REPLICAOF starts a SyncWorker
// (handshake and RDB download on its own thread); the main thread loads the
// snapshot, then takes the socket over as the primary's client and applies
// the stream: commands run with their replies suppressed, every byte goes to
// this server's own backlog (for its replicas and a later PSYNC after a
// promotion), writes also to its AOF, and the offset is acknowledged every
// second and on REPLCONF GETACK.
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
#include "core/resp_command.h"

namespace ringkv::server {
RdbSaveOptions Server::ReplSaveInfo() const {
  RdbSaveOptions o;
  if (primary_ || master_) {
    o.repl_id = repl_ids_.replid;
    o.repl_offset = static_cast<int64_t>(master_repl_offset());
    o.repl_stream_db = SnapshotStreamDb();
  }
  return o;
}

int Server::SnapshotStreamDb() const {
  if (!master_) return 0;  // a primary's stream after a snapshot starts with SELECT (ForceSelect)
  // A replica's stream is its primary's, verbatim: it continues in the
  // database the primary's link has selected (Redis's rsi->repl_stream_db).
  if (const Client* m = master_->client_id != 0 ? FindClient(master_->client_id) : nullptr) return m->db;
  return master_->db;
}

void Server::DetachMasterClient(const Client& link) {
  master_->db = link.db;
  master_->open_transaction.clear();  // the partial resync sends it again
  master_->held.clear();              // not applied, not counted: sent again too
  master_->client_id = 0;
}

void Server::CloseMasterLink() {
  if (sync_worker_) sync_worker_->Cancel();
  sync_staging_.reset();  // a diskless load cut short (the worker has stopped)
  if (master_->client_id == 0) return;
  if (Client* m = FindClient(master_->client_id)) {
    DetachMasterClient(*m);
    m->closing = true;
    io_->CloseNow(m->conn);
  }
  master_->client_id = 0;
}

std::string Server::ReplicaOf(const std::string& host, int port) {
  if (host.empty()) {  // REPLICAOF NO ONE
    if (!master_) return "+OK";
    CloseMasterLink();
    master_.reset();
    keyspace_.set_expiry_mode(core::ExpiryMode::kDelete);  // every key expires here now
    replica_key_expiry_.reset();
    if (primary_) {
      // Our own writes follow the primary's stream: the first one selects
      // its database (the stream's last SELECT was the old primary's).
      primary_->ForceSelect();
      // Keep the history: the old primary's id becomes the secondary one, so
      // its other replicas can continue here with a partial resync.
      repl_ids_.replid2 = repl_ids_.replid;
      repl_ids_.second_offset = static_cast<int64_t>(master_repl_offset()) + 1;
      repl_ids_.replid = repl::ReplicationIds::Fresh().replid;
      // Our replicas reconnect and continue with PSYNC under the new id.
      DisconnectReplicas();
    }
    SetLogRoleReplica(false);
    Log(kNotice, "MASTER MODE enabled");
    return "+OK";
  }
  if (master_ && master_->host == host && master_->port == port) return "+OK Already connected to specified master";
  // A replica moving to another primary keeps its link's database, as Redis
  // keeps its cached master; a primary turning replica starts from db 0 (the
  // new primary's stream starts with SELECT: it promoted itself).
  int link_db = 0;
  if (master_) {
    CloseMasterLink();
    link_db = master_->db;
  } else {
    // Clients blocked here would be served by the new primary's writes and
    // diverge from it: they are told and disconnected, as in Redis.
    blocking_.DisconnectAll(
        "UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)");
  }
  // Our replicas stay, as Redis 7.0 keeps them: if the new primary
  // continues our history they miss nothing; they are disconnected (and
  // resync with us) only when our history changes -- a partial resync under
  // another id, or a full sync once its payload has arrived (OnSyncResult).
  master_ = std::make_unique<MasterLink>();
  master_->host = host;
  master_->port = port;
  master_->db = link_db;
  // Expired keys stay until the primary's DEL (reads do not see them).
  keyspace_.set_expiry_mode(core::ExpiryMode::kHide);
  SetLogRoleReplica(true);
  Log(kNotice, StrCat("Connecting to MASTER ", host, ":", port));
  if (start_time_ms_ != 0) StartMasterSync();  // at start-up: once listening
  return "+OK";
}

const char* Server::MasterLinkStateName() const {
  switch (master_->state) {
    case MasterLink::State::kConnect:
      return "connect";
    case MasterLink::State::kConnected:
      return "connected";
    case MasterLink::State::kSyncing:
      break;
  }
  switch (sync_worker_ ? sync_worker_->phase() : repl::SyncPhase::kTransfer) {
    case repl::SyncPhase::kConnecting:
      return "connecting";
    case repl::SyncPhase::kHandshake:
      return "handshake";
    case repl::SyncPhase::kTransfer:
      break;
  }
  return "sync";
}

int64_t Server::NextReplicationCronMs(int64_t now_ms) const {
  // Redis reconnects from replicationCron, once a second since start-up:
  // the next such second, not a full second after the loss.
  const int64_t since_start = now_ms - start_time_ms_;
  return start_time_ms_ + (since_start / 1000 + 1) * 1000;
}

void Server::StartMasterSync() {
  if (!master_) return;
  if (!sync_worker_) sync_worker_ = std::make_unique<repl::SyncWorker>([this] { io_->Notify(); });
  repl::SyncRequest req;
  req.host = master_->host;
  req.port = master_->port;
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
  req.failover = failover_ && failover_->in_progress;
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
  if (primary_) {  // we have history: ask to continue after it
    req.replid = repl_ids_.replid;
    req.psync_offset = static_cast<int64_t>(master_repl_offset()) + 1;
  }
  master_->state = MasterLink::State::kSyncing;
  Log(kNotice, StrCat("MASTER <-> REPLICA sync started; PSYNC ", req.replid, " ", req.psync_offset));
  sync_worker_->Start(req);
}

void Server::OnNotify() {
  RINGKV_DCHECK_MAIN_THREAD();
  if (cluster_) cluster_->OnBusEvents();  // the cluster bus's thread has news
  if (!sync_worker_) return;
  std::optional<repl::SyncResult> r = sync_worker_->Poll();
  if (r) OnSyncResult(std::move(*r));
}

void Server::OnSyncResult(repl::SyncResult r) {
  if (!master_) {  // REPLICAOF NO ONE meanwhile
    if (r.fd >= 0) ::close(r.fd);
    return;
  }
  const int64_t now_ms = UnixMs();
  if (r.kind == repl::SyncResult::Kind::kFailed) {
    Log(kWarning, r.error);
    sync_staging_.reset();
    if (failover_ && failover_->in_progress) {  // the target refused: stay the primary
      // An error answered to PSYNC FAILOVER is logged with Redis's reason,
      // which operators and Redis's failover test look for.
      EndFailover(false, r.psync_refused ? std::string("Failover target rejected psync request") : r.error);
      return;
    }
    master_->state = MasterLink::State::kConnect;
    master_->retry_at_ms = NextReplicationCronMs(now_ms);
    return;
  }
  if (r.kind == repl::SyncResult::Kind::kFull) {
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
      loaded = LoadRdbFile(r.rdb_path, keyspace_, now_ms);
      loading_ = false;
      if (!loaded.ok()) {
        Log(kWarning,
            StrCat("Failed trying to load the MASTER synchronization DB from disk: ", loaded.status().message()));
        for (int i = 0; i < keyspace_.count(); ++i) keyspace_.db(i).Clear();
        ::unlink(r.rdb_path.c_str());
        ::close(r.fd);
        master_->state = MasterLink::State::kConnect;
        master_->retry_at_ms = NextReplicationCronMs(now_ms);
        return;
      }
      if (config_->Bool("rdb-del-sync-files") && PersistenceDisabled()) {
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
    if (primary_) {
      DisconnectReplicas();
      primary_.reset();
    }
    rdb_->set_load_stats(*loaded);
    replica_key_expiry_.reset();  // the keys it remembered are gone
    // The stream after the snapshot continues in the database it names
    // (a primary's starts with SELECT anyway; a chained replica's may not).
    master_->db = loaded->repl_stream_db;
    // The primary's history is ours now: its id, and a backlog from its offset.
    repl_ids_ = repl::ReplicationIds{};
    repl_ids_.replid = r.replid;
    repl_ids_.offset = r.offset;
    primary_ = std::make_unique<repl::Primary>(static_cast<size_t>(config_->Int("repl-backlog-size")),
                                               static_cast<uint64_t>(r.offset));
    // The AOF described the old dataset: rebuild it from the new one.
    if (aof_->enabled()) {
      aof_->Disable();
      if (absl::Status s = aof_->Enable(now_ms); !s.ok()) Log(kWarning, std::string(s.message()));
      aof_always_ = aof_->always();
    }
  }
  // Continue or full: adopt the socket as the primary's client.
  if (r.kind == repl::SyncResult::Kind::kContinue && r.replid != repl_ids_.replid) {
    repl_ids_.replid2 = repl_ids_.replid;
    repl_ids_.second_offset = static_cast<int64_t>(master_repl_offset()) + 1;
    repl_ids_.replid = r.replid;
    // Our replicas learn the new id by reconnecting (they continue), as in Redis.
    if (primary_) DisconnectReplicas();
  }
  io::Connection* conn = io_->AdoptSocket(r.fd, std::move(r.tls));
  io_->MarkReplication(conn, io::Connection::kReplInput);
  auto* c = static_cast<Client*>(conn->owner);
  c->is_master = true;
  c->authenticated = true;
  c->db = master_->db;
  master_->client_id = c->id();
  master_->state = MasterLink::State::kConnected;
  master_->last_io_ms = now_ms;
  Log(kNotice, r.kind == repl::SyncResult::Kind::kContinue
                   ? "MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization."
                   : "MASTER <-> REPLICA sync: Finished with success");
  NotifyStatus(r.kind == repl::SyncResult::Kind::kContinue
                   ? "MASTER <-> REPLICA sync: Partial Resynchronization accepted. Ready to accept connections in "
                     "read-write mode."
                   : "MASTER <-> REPLICA sync: Finished with success. Ready to accept connections in read-write mode.");
  SendAckToMaster();
  if (failover_ && failover_->in_progress) EndFailover(true, "");
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
  if (!master_) return;
  master_->last_io_ms = UnixMs();
  // Every byte of the primary's stream goes to our own backlog, verbatim,
  // so our replicas and a later PSYNC see the same offsets -- counted only
  // once applied: a transaction's bytes wait for its EXEC (Redis's reploff
  // does not move inside MULTI either).
  if (!primary_) return;
  if (c.in_multi || !master_->open_transaction.empty()) {
    core::AppendRespCommand(argv, &master_->open_transaction);
    if (c.in_multi) return;
    primary_->FeedStream(master_->open_transaction);
    master_->open_transaction.clear();
  } else {
    primary_->FeedRaw(argv);
  }
  repl_ids_.offset = static_cast<int64_t>(master_repl_offset());
}

void Server::ApplyHeldMasterCommands() {
  Client* m = master_->client_id != 0 ? FindClient(master_->client_id) : nullptr;
  while (m != nullptr && !m->closing && !master_->held.empty() && !script_busy_) {
    std::vector<std::string> args = std::move(master_->held.front());
    master_->held.pop_front();
    std::vector<std::string_view> views(args.begin(), args.end());
    ExecuteFromMaster(*m, views);
    if (!master_) return;  // a REPLICAOF NO ONE it ran (FAILOVER)
  }
  if (m == nullptr || m->closing) master_->held.clear();
}

void Server::SendAckToMaster() {
  if (!master_ || master_->client_id == 0) return;
  Client* m = FindClient(master_->client_id);
  if (m == nullptr) return;
  const uint64_t offset = master_repl_offset();
  // FACK: how far our AOF is fsynced (what WAITAOF counts on a primary).
  if (aof_->enabled() && !aof_->has_unsynced()) {
    master_->fsynced_offset = offset;
    aof_repl_marks_.clear();
  }
  std::string ack;
  const std::string off = StrCat(offset), fack = StrCat(master_->fsynced_offset);
  const std::string_view argv[] = {"REPLCONF", "ACK", off, "FACK", fack};
  core::AppendRespCommand(argv, &ack);
  io_->PrepareWrite(m->conn).Append(ack);
}

void Server::OnMasterLinkClosed(const Client& link) {
  if (!master_) return;
  Log(kWarning, "Connection with master lost.");
  DetachMasterClient(link);
  master_->state = MasterLink::State::kConnect;
  master_->retry_at_ms = NextReplicationCronMs(UnixMs());
}

void Server::RememberOwnVolatileKeys(const Client& c, const CommandSpec& spec, Argv argv) {
  if (!replica_key_expiry_) replica_key_expiry_ = std::make_unique<repl::ReplicaKeyExpiry>();
  core::Database& db = keyspace_.db(c.db);
  for (std::string_view key : CommandKeys(spec, argv)) replica_key_expiry_->RememberIfVolatile(db, key);
}

void Server::ReplicaCron(int64_t now_ms) {
  if (replica_key_expiry_) {
    // As Redis's expireSlaveKeys: deleted here, the DEL goes to our AOF.
    replica_key_expiry_->ExpireDue(keyspace_, now_ms, [this](int db, std::string_view key) {
      std::string k(key);
      std::string_view del[] = {"DEL", k};
      Propagate(db, del);
      KeyEvent(notify::kExpired, "expired", db, k, /*by_server=*/true);
    });
  }
  if (master_->state == MasterLink::State::kConnect && now_ms >= master_->retry_at_ms) StartMasterSync();
  if (master_->state == MasterLink::State::kConnected && now_ms - master_->last_ack_ms >= 1000) {
    master_->last_ack_ms = now_ms;  // once a second, as Redis's replicationCron
    SendAckToMaster();
  }
}

}  // namespace ringkv::server

namespace ringkv::server {

const char* Server::failover_state() const {
  if (!failover_) return "no-failover";
  return failover_->in_progress ? "failover-in-progress" : "waiting-for-sync";
}

std::string Server::StartFailover(const std::string& host, int port, int64_t timeout_ms, bool force) {
  if (master_) return "ERR FAILOVER is not valid when server is a replica.";
  if (failover_) return "ERR FAILOVER already in progress.";
  if (!primary_ || primary_->online() == 0) return "ERR FAILOVER requires connected replicas.";
  if (!host.empty()) {
    bool found = false;
    for (const auto& r : primary_->replicas()) {
      const std::string ip = r->ip();
      found |= r->state == repl::ReplicaState::kOnline && ip == host && r->listening_port == port;
    }
    if (!found) return "ERR FAILOVER target HOST and PORT is not a replica.";
  }
  failover_ = std::make_unique<Failover>();
  failover_->host = host;
  failover_->port = port;
  failover_->force = force;
  failover_->deadline_ms = timeout_ms > 0 ? UnixMs() + timeout_ms : 0;
  // No new writes while the target catches up (Redis pauses writes too).
  PauseClients(INT64_MAX / 2, /*all=*/false);
  get_ack_pending_ = true;
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
  const bool demoted = failover_->in_progress;
  failover_.reset();
  if (!ok && demoted) ReplicaOf("", 0);  // the target did not take over: back to primary
  UnpauseClients();
  Log(ok ? kNotice : kWarning, ok ? std::string("Failover target accepted: this server is now a replica.")
                                  : StrCat("FAILOVER aborted: ", why));
}

void Server::FailoverCron(int64_t now_ms) {
  if (failover_->in_progress) return;  // the sync decides
  const uint64_t offset = master_repl_offset();
  const repl::ReplicaLink* target = nullptr;
  if (!primary_) {
    EndFailover(false, "no replicas");
    return;
  }
  for (const auto& r : primary_->replicas()) {
    if (r->state != repl::ReplicaState::kOnline) continue;
    const std::string ip = r->ip();
    const bool chosen = failover_->host.empty() ? r->ack_offset == offset
                                                : ip == failover_->host && r->listening_port == failover_->port;
    if (!chosen) continue;
    if (failover_->host.empty()) {
      failover_->host = ip;
      failover_->port = r->listening_port;
    }
    target = r.get();
    break;
  }
  const bool timed_out = failover_->deadline_ms > 0 && now_ms >= failover_->deadline_ms;
  if (target == nullptr || (target->ack_offset < offset && !(timed_out && failover_->force))) {
    if (timed_out) EndFailover(false, "timeout waiting for the target to catch up");
    return;
  }
  // The target has everything (or FORCE and the timeout passed): become its
  // replica, asking it to take over with PSYNC ... FAILOVER (it promotes
  // itself and continues our history).
  if (target->ack_offset < offset) {
    Log(kNotice, StrCat("FAILOVER to ", failover_->host, ":", failover_->port, " time out exceeded, failing over."));
  } else {
    Log(kNotice, StrCat("Failover target ", failover_->host, ":", failover_->port, " is synced, failing over."));
  }
  failover_->in_progress = true;
  const std::string host = failover_->host;
  const int port = failover_->port;
  ReplicaOf(host, port);
}

}  // namespace ringkv::server
