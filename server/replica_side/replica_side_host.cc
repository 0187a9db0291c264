// ReplicaSide as the link's repl::ReplicaHost: a sync attempt's settings
// and diskless loader, a full sync's payload into the dataset, the
// primary's client -- adopted from the synced socket, written to, its
// commands run through the gate.
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <optional>
#include <utility>

#include "absl/strings/str_format.h"
#include "core/access_policy.h"
#include "core/strings.h"
#include "server/clock.h"
#include "server/logging.h"
#include "server/replica_side/replica_side.h"
#include "server/supervision.h"
#include "server/watchdog.h"

namespace ringkv::server {

int64_t ReplicaSide::NowMs() { return UnixMs(); }

void ReplicaSide::SupervisorStatus(std::string_view status) { NotifyStatus(status); }

repl::SyncRequest ReplicaSide::NewSyncRequest() {
  repl::SyncRequest req;
  req.masterauth = config_.Str("masterauth");
  req.masteruser = config_.Str("masteruser");
  // With tls-replication the primary is told our TLS port (as Redis).
  const bool tls = config_.Bool("tls-replication");
  const int64_t own_port = tls && config_.Int("tls-port") != 0 ? config_.Int("tls-port") : config_.Int("port");
  req.listening_port =
      static_cast<int>(config_.Int("replica-announce-port") > 0 ? config_.Int("replica-announce-port") : own_port);
  if (tls) req.tls_ctx = hooks_.ReplicationIo().tls().client_ctx();
  req.announce_ip = config_.Str("replica-announce-ip");
  req.timeout_s = static_cast<int>(config_.Int("repl-timeout"));
  req.bind_source_addr = config_.Str("bind-source-addr");
  req.rdb_path = absl::StrFormat("temp-%d.%d.rdb", static_cast<int>(UnixMs() / 1000), static_cast<int>(getpid()));
  // Diskless load: the worker parses the payload from the socket into a
  // staging keyspace, swapped in when complete -- meanwhile this server keeps
  // serving its current data. on-empty-db does so only when we hold no keys
  // (as Redis); otherwise, and with `disabled`, the payload goes to a file.
  const std::string& load_mode = config_.Str("repl-diskless-load");
  bool empty = true;
  for (int i = 0; i < keyspace_.count() && empty; ++i) empty = keyspace_.db(i).size() == 0;
  staging_.reset();
  if (load_mode == "swapdb" || (load_mode == "on-empty-db" && empty)) {
    staging_ = std::make_unique<core::Keyspace>(keyspace_.count());
    staging_swaps_ = load_mode == "swapdb";
    staging_->set_expiry_mode(core::ExpiryMode::kHide);  // keeps expired keys, as a replica loads
    staging_->limits() = keyspace_.limits();
    staging_->access_policy() = keyspace_.access_policy();
    core::Keyspace* staging = staging_.get();
    RdbLoadStats* stats = &staging_stats_;
    // As Redis 7.0: a payload of the history this server already follows
    // (the same primary replication id) is loaded while the current data
    // keeps being served (async_loading); one of another history loads
    // "synchronously" -- clients get -LOADING meanwhile -- though still
    // aside, so a failed load leaves the current data in place.
    std::atomic<bool>* flag_async = &async_loading_;
    std::atomic<bool>* flag_sync = &sync_loading_;
    const std::string own_replid = ids_.replid;
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

bool ReplicaSide::LoadFullSync(repl::SyncResult& r, int64_t now_ms) {
  Log(kNotice, StrCat("MASTER <-> REPLICA sync: received ", r.payload_bytes, " bytes of ",
                      r.eof_payload ? "diskless (EOF-marked) " : "", "RDB payload"));
  absl::StatusOr<RdbLoadStats> loaded;
  persistence_.StopInProcessChild("Stopping the background save: a full sync replaces the dataset");
  if (r.rdb_path.empty()) {  // parsed from the socket into the staging keyspace
    Log(kNotice, "MASTER <-> REPLICA sync: Swapping the loaded data in (diskless load)");
    hooks_.DatasetReplacing(staging_swaps_ ? staging_.get() : nullptr);
    for (int i = 0; i < keyspace_.count(); ++i) keyspace_.db(i).Swap(staging_->db(i));
    loaded = staging_stats_;
    uint64_t old_keys = 0;
    for (int i = 0; i < staging_->count(); ++i) old_keys += staging_->db(i).size();
    lazy_freer_.Free(std::move(staging_), old_keys);  // the old data, freed off the main thread
  } else {
    Log(kNotice, "MASTER <-> REPLICA sync: Flushing old data");
    hooks_.DatasetReplacing(nullptr);
    // replica-lazy-flush: the old data is freed on the lazy-free thread
    // (as FLUSHALL ASYNC), or here before loading. (The diskless swap
    // above always frees it lazily, as Redis's discarded temp databases.)
    const bool lazy = config_.Bool("replica-lazy-flush");
    for (int i = 0; i < keyspace_.count(); ++i) {
      core::Database& db = keyspace_.db(i);
      if (lazy && db.size() > 0) {
        const size_t keys = db.size();
        lazy_freer_.Free(db.Detach(), keys);
      } else {
        db.Clear();
      }
    }
    loaded = hooks_.LoadSyncFile(r.rdb_path, now_ms);
    if (!loaded.ok()) {
      Log(kWarning,
          StrCat("Failed trying to load the MASTER synchronization DB from disk: ", loaded.status().message()));
      for (int i = 0; i < keyspace_.count(); ++i) keyspace_.db(i).Clear();
      ::unlink(r.rdb_path.c_str());
      ::close(r.fd);
      return false;
    }
    if (config_.Bool("rdb-del-sync-files") && persistence_.disabled()) {
      // rdb-del-sync-files: a replica without persistence keeps no copy.
      Log(kNotice, "Removing the RDB file obtained from the master. This replica has persistence disabled");
      ::unlink(r.rdb_path.c_str());
    } else if (::rename(r.rdb_path.c_str(), config_.Str("dbfilename").c_str()) != 0) {
      ::unlink(r.rdb_path.c_str());
    }
  }
  // The primary's libraries replace ours, as its keys do.
  if (absl::Status f = hooks_.ReplaceFunctions(loaded->function_libraries); !f.ok()) {
    Log(kWarning, StrCat("MASTER <-> REPLICA sync: ", f.message()));
  }
  // Our history is replaced: replicas of ours must resync too.
  primary_side_.DropBacklog();
  persistence_.rdb().set_load_stats(*loaded);
  link_->ForgetOwnExpiry();  // the keys it remembered are gone
  // The stream after the snapshot continues in the database it names
  // (a primary's starts with SELECT anyway; a chained replica's may not).
  link_->set_stream_db(loaded->repl_stream_db);
  // The primary's history is ours now: its id, and a backlog from its offset.
  ids_ = repl::ReplicationIds{};
  ids_.replid = r.replid;
  ids_.offset = r.offset;
  primary_side_.CreateBacklogAt(r.offset);
  // The AOF described the old dataset: rebuild it from the new one.
  persistence_.RestartAof(now_ms);
  return true;
}

uint64_t ReplicaSide::AdoptMasterSocket(repl::SyncResult& r, int db) {
  io::IoSystem& io = hooks_.ReplicationIo();
  io::Connection* conn = io.AdoptSocket(r.fd, std::move(r.tls));
  io.MarkReplication(conn, io::Connection::kReplInput);
  auto* c = static_cast<Client*>(conn->owner);
  c->is_master = true;
  c->authenticated = true;
  c->db = db;
  return c->id();
}

void ReplicaSide::CloseMasterClient(uint64_t client_id) {
  if (Client* m = hooks_.ReplicaClient(client_id)) {
    m->closing = true;
    hooks_.ReplicationIo().CloseNow(m->conn);
  }
}

bool ReplicaSide::MasterClientOpen(uint64_t client_id) {
  const Client* m = hooks_.ReplicaClient(client_id);
  return m != nullptr && !m->closing;
}

std::optional<int> ReplicaSide::MasterClientDb(uint64_t client_id) {
  const Client* m = hooks_.ReplicaClient(client_id);
  return m != nullptr ? std::optional<int>(m->db) : std::nullopt;
}

bool ReplicaSide::WriteToMaster(uint64_t client_id, std::string_view bytes) {
  Client* m = hooks_.ReplicaClient(client_id);
  if (m == nullptr) return false;
  hooks_.ReplicationIo().PrepareWrite(m->conn).Append(bytes);
  return true;
}

bool ReplicaSide::ApplyMasterCommand(uint64_t client_id, Argv argv) {
  if (Client* m = hooks_.ReplicaClient(client_id)) ExecuteFromMaster(*m, argv);
  return link_ != nullptr;
}

}  // namespace ringkv::server
