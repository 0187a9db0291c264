// ReplicaSide: the replica side of replication with its glue -- REPLICAOF
// (the role changes), the link to the primary (repl::ReplicaSide: the sync
// worker, the held commands, the acknowledgements), applying the primary's
// stream (ExecuteFromMaster), loading a full sync's payload (from a file,
// or -- diskless load -- parsed aside into a staging keyspace and swapped
// in), a writable replica's own expiring keys, the replica-read-only and
// replica-serve-stale-data gates (READONLY, MASTERDOWN), and FAILOVER.
//
// Lazy: the object itself is borrowed references, a few pointers and
// cached settings, a member of the Server; repl::ReplicaSide is made by
// REPLICAOF host port and destroyed by REPLICAOF NO ONE, the staging
// keyspace only for a diskless load, repl::Failover only while FAILOVER
// runs. A standalone server allocates nothing here. It is the
// repl::ReplicaHost of the link (a private base): what the link asks of the
// server is answered here (replica_side_host.cc), from the borrowed
// references and the Hooks.
//
// Not to be confused with repl::ReplicaSide (replication/replica_side.h),
// the link itself, which cannot see server/ types; this class owns it.
//
// What it needs from the server -- its clients, the I/O system, the command
// gate, the start-up load's machinery, CLIENT PAUSE, propagation of its own
// expired keys -- comes through Hooks, which the Server implements
// (server_hooks.cc). The config, the replication ids, the primary side,
// persistence, blocked clients, the keyspace and the lazy freer are
// borrowed at construction and must outlive it.
//
//   ReplicaSide replica(hooks, config, ids, primary_side, persistence, blocking, keyspace, lazy_freer);
//   replica.BindConfig();
//   replica.ReplicaOf("10.0.0.1", 6379);          // REPLICAOF
//   if (const char* err = replica.GateRefusal(flags)) ...  // the command gate
//
// Cost: a standalone server pays a null check (is_replica(), inline) where
// the command path asks whether it is a replica; no virtual call per
// command. Hooks are called per command of the primary's stream, per sync,
// per cron tick of a replica and per role change.
//
// Thread-safety: main thread only, except what the diskless loader touches
// on the sync worker's thread (the staging keyspace until the result is
// polled, the loading flags: atomics).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/keyspace.h"
#include "io/io_system.h"
#include "replication/failover.h"
#include "replication/master_link.h"
#include "replication/replica_host.h"
#include "replication/replica_side.h"
#include "replication/replication_info.h"
#include "server/blocking.h"
#include "server/client.h"
#include "server/command.h"
#include "server/config.h"
#include "server/lazy_free.h"
#include "server/persistence/persistence.h"
#include "server/persistence/rdb_snapshot.h"
#include "server/primary_side/primary_side.h"

namespace ringkv::server {

class ReplicaSide final : private repl::ReplicaHost {
 public:
  using Argv = std::span<const std::string_view>;

  // What the replica side asks of the server.
  class Hooks {
   public:
    // The I/O system: the primary's socket adopted, written to and closed.
    virtual io::IoSystem& ReplicationIo() = 0;
    // The client with this id (the primary's); nullptr when it is gone.
    virtual Client* ReplicaClient(uint64_t id) = 0;
    // When the server started serving (0: not yet; the link's cron counts
    // from it, and REPLICAOF before it connects only once serving).
    virtual int64_t ServingSinceMs() = 0;
    // Runs one of the primary's commands through the command gate on its
    // client `c` (Server::Execute): replies suppressed, writes propagated
    // to this server's own backlog and AOF.
    virtual void ExecuteMasterCommand(Client& c, Argv argv) = 0;
    // A script runs past busy-reply-threshold: the primary's commands wait.
    virtual bool ScriptBusy() = 0;
    // Loads a full sync's RDB file at `path` into the (emptied) keyspace,
    // serving clients between keys as the start-up load does (-LOADING).
    virtual absl::StatusOr<RdbLoadStats> LoadSyncFile(const std::string& path, int64_t now_ms) = 0;
    // The primary's FUNCTION libraries replace ours.
    virtual absl::Status ReplaceFunctions(const std::vector<std::string>& codes) = 0;
    // FAILOVER: writes are paused while the target catches up, and resume.
    virtual void PauseWritesForFailover() = 0;
    virtual void ResumeWritesAfterFailover() = 0;
    // A writable replica's own key reached its deadline and was deleted:
    // the DEL goes to our AOF and the `expired` event fires.
    virtual void PropagateOwnExpiry(int db, std::string_view key) = 0;
    // A full sync is about to replace every database (still holding the
    // old data; `incoming`: the loaded data that replaces it, or nullptr when
    // it is loaded afterwards): WATCH, blocked clients and client-side
    // caching are told, as Redis's emptyData / swapMainDbWithTempDb.
    virtual void DatasetReplacing(core::Keyspace* incoming) = 0;

   protected:
    ~Hooks() = default;
  };

  // REQUIRES: the arguments outlive this object. Allocates nothing.
  ReplicaSide(Hooks& hooks, Config& config, repl::ReplicationIds& ids, PrimarySide& primary_side,
              Persistence& persistence, BlockedClients& blocking, core::Keyspace& keyspace, LazyFreer& lazy_freer);
  ReplicaSide(const ReplicaSide&) = delete;
  ReplicaSide& operator=(const ReplicaSide&) = delete;
  ~ReplicaSide();

  // Binds replica-read-only and replica-serve-stale-data (the gates).
  void BindConfig();
  // Stops replication: a sync worker still loading into the staging
  // keyspace is stopped and joined. The server calls it before it destroys
  // anything the worker might reach.
  void Stop() { link_.reset(); }

  // ---- the role ---------------------------------------------------------------------
  bool is_replica() const { return link_ != nullptr; }
  // REPLICAOF host port (empty host: NO ONE). Returns the reply line. Before
  // the server serves, the link connects at its first cron second.
  std::string ReplicaOf(const std::string& host, int port);
  // The link (ROLE, INFO, the link's database); null unless a replica.
  repl::ReplicaSide* replica() { return link_.get(); }
  const repl::ReplicaSide* replica() const { return link_.get(); }
  const repl::MasterLink* master_link() const { return link_ ? &link_->link() : nullptr; }
  // Offsets the cluster bus announces: a replica in a full sync announces 0.
  bool full_sync_in_progress() const { return link_ && link_->full_sync_in_progress(); }
  // The database the replication stream after a snapshot taken now is in
  // (AUX repl-stream-db): the link's, else 0 (a primary's stream after a
  // snapshot starts with SELECT).
  int StreamDb() const { return link_ ? link_->StreamDb() : 0; }
  // INFO slave_expires_tracked_keys.
  size_t tracked_expires() const { return link_ ? link_->own_expiry_count() : 0; }
  // A diskless load of the history we follow (async_loading: clients are
  // served meanwhile), or of another history (clients get -LOADING).
  bool async_loading() const { return async_loading_.load(std::memory_order_relaxed); }
  bool sync_loading() const { return sync_loading_.load(std::memory_order_relaxed); }

  // ---- the gates ----------------------------------------------------------------------
  // A write is refused: a replica with replica-read-only.
  bool refuses_writes() const { return link_ && read_only_; }
  // A command without the stale flag is refused: the link is down and
  // replica-serve-stale-data is no.
  bool refuses_stale(uint32_t flags) const {
    return link_ && !serve_stale_data_ && !(flags & cmd::kStale) && !link_->link_up();
  }
  // The command gate's answer for a client's command with `flags` (not the
  // primary's): READONLY, then MASTERDOWN; nullptr when it may run.
  const char* GateRefusal(uint32_t flags) const {
    if ((flags & cmd::kWrite) && refuses_writes()) return "READONLY You can't write against a read only replica.";
    if (refuses_stale(flags)) {
      return "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.";
    }
    return nullptr;
  }

  // ---- the primary's stream ---------------------------------------------------------------
  // A command from the primary's client `c`: held while a script is busy or
  // earlier ones are held, else run (ExecuteFromMaster).
  void OnMasterCommand(Client& c, Argv argv);
  // Runs it through the gate with expired keys visible (the primary decides
  // which keys are live), then counts it in the link's offset.
  void ExecuteFromMaster(Client& c, Argv argv);
  // REPLCONF GETACK from the primary: our offsets now.
  void SendAck() {
    if (link_) link_->SendAck();
  }
  // A client closed: when it was the primary's link, the link drops to kConnect.
  void OnClientClosed(const Client& c) {
    if (c.is_master && link_ && link_->link().client_id == c.id()) link_->OnLinkClosed(c.db);
  }
  // A write of a replica's own client: its keys with a deadline are expired
  // by this replica, not by its primary. REQUIRES: is_replica().
  void RememberOwnVolatileKeys(const Client& c, const CommandSpec& spec, Argv argv);

  // ---- the main loop ----------------------------------------------------------------------
  // The sync worker's news (the main thread was woken).
  void PollSync() {
    if (link_) link_->PollSync();
  }
  // The cron: the replica's own keys past their deadline, the link's cron,
  // then a running FAILOVER's step.
  void Cron(int64_t now_ms) {
    if (link_) ReplicaCron(now_ms);
    if (failover_) FailoverCron(now_ms);
  }
  // The end of a loop turn, before the AOF is written: commands held while
  // a script was busy run once it is done.
  void ApplyHeld() {
    if (link_ && link_->holding() && !hooks_.ScriptBusy()) link_->ApplyHeld();
  }
  // After the AOF is written / fsynced: the acknowledged offsets (WAITAOF).
  void NoteAofFed() {
    if (link_ && persistence_.aof().enabled()) link_->NoteAofFed(persistence_.aof().fed_offset());
  }
  void OnAofSynced() {
    if (link_) link_->OnAofSynced(persistence_.aof().synced_offset());
  }

  // ---- FAILOVER -----------------------------------------------------------------------------
  // FAILOVER [TO host port] [TIMEOUT ms] [FORCE]: returns the error text or "".
  std::string StartFailover(const std::string& host, int port, int64_t timeout_ms, bool force);
  std::string AbortFailover();
  // Ends a running failover: `ok` false turns a demoted server back into a primary.
  void EndFailover(bool ok, std::string_view why) override;
  const repl::Failover* failover() const { return failover_.get(); }
  repl::Failover* failover() { return failover_.get(); }
  // "no-failover", "waiting-for-sync" or "failover-in-progress".
  const char* failover_state() const { return failover_ ? failover_->StateName() : "no-failover"; }

 private:
  void ReplicaCron(int64_t now_ms);
  void FailoverCron(int64_t now_ms);

  // ---- repl::ReplicaHost (replica_side_host.cc) ----
  int64_t NowMs() override;
  int64_t StartTimeMs() override { return hooks_.ServingSinceMs(); }
  void WakeMainThread() override { hooks_.ReplicationIo().Notify(); }
  repl::SyncRequest NewSyncRequest() override;
  void DropStagedLoad() override { staging_.reset(); }
  repl::ReplicationIds& History() override { return ids_; }
  repl::Primary* Backlog() override { return primary_side_.primary(); }
  uint64_t ReplOffset() override {
    const repl::Primary* p = primary_side_.primary();
    return p != nullptr ? p->offset() : ids_.offset;
  }
  void DropReplicas() override { primary_side_.DisconnectReplicas(); }
  bool LoadFullSync(repl::SyncResult& r, int64_t now_ms) override;
  uint64_t AdoptMasterSocket(repl::SyncResult& r, int db) override;
  void CloseMasterClient(uint64_t client_id) override;
  bool MasterClientOpen(uint64_t client_id) override;
  std::optional<int> MasterClientDb(uint64_t client_id) override;
  bool WriteToMaster(uint64_t client_id, std::string_view bytes) override;
  bool ApplyMasterCommand(uint64_t client_id, Argv argv) override;
  bool ScriptBusy() override { return hooks_.ScriptBusy(); }
  bool AofSynced() override { return persistence_.aof().enabled() && !persistence_.aof().has_unsynced(); }
  void SupervisorStatus(std::string_view status) override;
  bool FailoverInProgress() override { return failover_ && failover_->in_progress(); }

  Hooks& hooks_;
  Config& config_;
  repl::ReplicationIds& ids_;
  PrimarySide& primary_side_;
  Persistence& persistence_;
  BlockedClients& blocking_;
  core::Keyspace& keyspace_;
  LazyFreer& lazy_freer_;
  bool read_only_ = true;          // replica-read-only, cached for the gate
  bool serve_stale_data_ = true;   // replica-serve-stale-data
  std::unique_ptr<repl::Failover> failover_;  // while FAILOVER runs
  // Diskless load: the keyspace the sync worker parses the payload into
  // (touched by the worker only until its result is polled), its stats and
  // the loading flags INFO and the gate read.
  std::unique_ptr<core::Keyspace> staging_;
  // repl-diskless-load swapdb (not on-empty-db): WATCH sees the staged data
  // too when it is swapped in, as Redis's swapMainDbWithTempDb.
  bool staging_swaps_ = false;
  RdbLoadStats staging_stats_;
  std::atomic<bool> async_loading_{false};
  std::atomic<bool> sync_loading_{false};
  // Set while this server is a replica. Declared last: destroyed first, so
  // its sync worker is joined before the staging keyspace goes.
  std::unique_ptr<repl::ReplicaSide> link_;
};

}  // namespace ringkv::server
