// PrimarySide: the primary side of replication with its glue -- the
// backlog and replica links (repl::Primary), SYNC / PSYNC and the full
// syncs they start (repl::FullSync), REPLCONF ACK, dropping and forgetting
// replicas, the replication cron and end-of-turn flush, the min-replicas
// write gate (NOREPLICAS), and WAIT / WAITAOF's waiters.
//
// Lazy: the object itself is a few pointers and cached settings, a member
// of the Server; repl::Primary is made when a replica attaches (or a
// history is restored), repl::FullSync on the first SYNC / PSYNC. A
// standalone server that never sees a replica allocates nothing here. It is
// also the repl::PrimaryHost of both (a private base): what they ask of the
// server is answered here, from the borrowed references and the Hooks.
//
// What it needs from the server -- its clients, the I/O system, the reply
// target of a waiter, the replica side's and the failover's state -- comes
// through Hooks, which the Server implements (server_hooks.cc). The config,
// the replication ids, persistence (the fork child), blocked clients (the
// WAIT registry), the statistics, the keyspace and the output limits are
// borrowed at construction and must outlive it.
//
//   PrimarySide primary(hooks, config, ids, persistence, blocking, stats, keyspace, limits);
//   primary.BindConfig();
//   if (repl::Primary* p = primary.primary()) p->Feed(db, argv);  // propagation
//   primary.BeforeFlush();                                        // each loop turn
//
// Cost: a standalone server pays one null check per written command (the
// propagation's primary(), inline) and one compare in the gate
// (min_replicas_set(), inline); no virtual call per command. Hooks are
// called per replica event, per waiter, per cron tick and per loop turn
// while a backlog exists.
//
// Thread-safety: main thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/keyspace.h"
#include "io/io_system.h"
#include "replication/full_sync.h"
#include "replication/primary.h"
#include "replication/primary_host.h"
#include "replication/replication_info.h"
#include "server/blocking.h"
#include "server/client.h"
#include "server/config.h"
#include "server/output_limits.h"
#include "server/persistence/persistence.h"
#include "server/server_stats.h"
#include "server/wait_registry.h"

namespace ringkv::server {

class PrimarySide final : private repl::PrimaryHost {
 public:
  // What the primary side asks of the server.
  class Hooks {
   public:
    // The I/O system: replica connections' writes, closes and moves.
    virtual io::IoSystem& ReplicationIo() = 0;
    // The client with this id; nullptr when it is gone.
    virtual Client* ReplicaClient(uint64_t id) = 0;
    // Closes `c` at once, dropping its output (a replica dropped).
    virtual void CloseReplicaNow(Client& c) = 0;
    // CLIENT LIST's line for `c` (logged when a replica is dropped).
    virtual std::string ReplicaInfoLine(const Client& c, int64_t now_ms) = 0;
    // Where a reply to a waiter goes (Server::ReplyTarget).
    virtual io::OutBuffer& WaiterReplyTarget(Client& c) = 0;
    // Whether the running command may block `c` (Server::MayBlock).
    virtual bool MayBlockWaiter(const Client& c) = 0;
    // This server is a replica: it relays its primary's stream, nothing of
    // its own (no GETACK, no DEBUG REPLICATE).
    virtual bool RelaysPrimaryStream() = 0;
    // A failover or a cluster manual failover holds the stream still.
    virtual bool StreamFrozen() = 0;
    // Whether GETACK may be sent now (not a replica, and a failover has
    // not asked yet), and that it was: the failover then waits for the ACK.
    virtual bool MayRequestAcks() = 0;
    virtual void AcksRequested() = 0;
    // The cron's rate and the server's start (repl-backlog-ttl counts from it).
    virtual int CronHz() = 0;
    virtual int64_t ServingSinceMs() = 0;
    // What a snapshot for replicas carries besides the keys: the database
    // the stream after it is in (AUX repl-stream-db) and the FUNCTION
    // libraries.
    virtual int StreamDbAtSnapshot() = 0;
    virtual std::vector<std::string> SnapshotFunctions() = 0;

   protected:
    ~Hooks() = default;
  };

  // REQUIRES: the arguments outlive this object. Allocates nothing.
  PrimarySide(Hooks& hooks, Config& config, repl::ReplicationIds& ids, Persistence& persistence,
              BlockedClients& blocking, ServerStats& stats, core::Keyspace& keyspace, const OutputLimits& limits);
  PrimarySide(const PrimarySide&) = delete;
  PrimarySide& operator=(const PrimarySide&) = delete;
  ~PrimarySide();

  // Binds min-replicas-to-write, min-replicas-max-lag and repl-backlog-size
  // (a CONFIG SET resizes a backlog at once).
  void BindConfig();

  // ---- the backlog and the history ------------------------------------------------
  // The backlog and replica links; null until a replica attaches.
  repl::Primary* primary() { return primary_.get(); }
  const repl::Primary* primary() const { return primary_.get(); }
  // Made on first use (a replica attaching): a new history, as in Redis.
  repl::Primary& EnsurePrimary() override;
  // A primary restarted from its own RDB continues the file's history (as
  // its secondary id), with an empty backlog at `offset`.
  void RestoreHistoryAsPrimary(const std::string& replid, int64_t offset);
  // A backlog at `offset` under the ids as they are (a replica's history,
  // set by the caller); replaces any.
  void CreateBacklogAt(int64_t offset);
  // Our history is replaced: every replica is dropped, the backlog freed.
  void DropBacklog();

  // ---- replicas ------------------------------------------------------------------
  // PSYNC / SYNC from `c`: makes `c` a replica (its connection moves to the
  // main thread) and hands the request to repl::FullSync, which answers
  // +CONTINUE or +FULLRESYNC (or, for SYNC, the RDB alone).
  void StartReplicaSync(Client& c, std::string_view replid, int64_t psync_offset, bool old_sync);
  // REPLCONF ACK from a replica: its offsets, and the waiters they satisfy.
  void OnReplicaAck(Client& c, uint64_t offset, uint64_t fsynced_offset, int64_t now_ms);
  // Removes a replica's link (its connection closed or is being closed),
  // and stops a disk snapshot nobody waits for any more. No-op for others.
  void ForgetReplica(uint64_t client_id);
  // ForgetReplica, and its connection is closed now.
  void DropReplica(uint64_t client_id) override;
  // Drops every synced replica (they reconnect and PSYNC); handshakes stay.
  void DisconnectReplicas();
  // Every replica (not in its handshake) acknowledged our offset.
  bool ReplicasCaughtUp() const;
  // SHUTDOWN's log of the replicas still behind.
  void LogReplicasAtShutdown(int64_t now_ms) const;
  // REPLCONF GETACK * goes to the replicas at the end of this loop turn
  // (a waiter blocked, SHUTDOWN or FAILOVER waits for them).
  void RequestAcks() { get_ack_pending_ = true; }

  // ---- the min-replicas gate -------------------------------------------------------
  // min-replicas-to-write is set: the gate must look.
  bool min_replicas_set() const { return min_replicas_to_write_ > 0; }
  // Replicas online that acknowledged within min-replicas-max-lag.
  int GoodReplicas(int64_t now_ms) const;
  // A write must be refused with NOREPLICAS now. Only asked of a primary.
  bool TooFewGoodReplicas(int64_t now_ms) const {
    return min_replicas_to_write_ > 0 && min_replicas_max_lag_ > 0 && GoodReplicas(now_ms) < min_replicas_to_write_;
  }

  // ---- WAIT / WAITAOF ----------------------------------------------------------------
  // Replies at once when the conditions already hold (or `c` may not
  // block), else blocks `c` (its later commands wait) until they do or
  // `deadline_us` (UnixUs; 0: none) passes.
  void WaitFor(Client& c, const WaitSpec& spec, int64_t deadline_us);
  // The answer to a waiter from the acknowledgements now.
  void ReplyToWaiter(Client& c, const WaitSpec& spec);
  // Replies to waiters whose conditions hold (after an ACK or an fsync).
  void UnblockWaiters();

  // ---- the main loop ---------------------------------------------------------------
  // The child was reaped (Persistence::ReapChild): a transfer whose child
  // ended before its pipe's EOF finishes.
  void AfterChildReaped() {
    if (full_sync_) full_sync_->MaybeFinishTransfer();
  }
  // The cron: repl::Primary::Cron, then the full syncs that may start, then
  // a sync RDB file nobody needs any more is removed.
  void Cron(int64_t now_ms);
  // The end of a loop turn: full syncs' work, a pending GETACK, the stream
  // flushed to the replicas (the ones too far behind are dropped).
  void BeforeFlush() {
    if (primary_) FlushReplicas();
  }
  // A fork pipe (a diskless transfer's) is readable.
  void OnReadable(uint32_t token) {
    if (full_sync_) full_sync_->OnReadable(token);
  }

  // ---- the fork child, shared with persistence (Persistence::Hooks) -----------------
  bool DisklessTransferRunning() const { return full_sync_ && full_sync_->transfer_running(); }
  void OnDisklessTransferExited(bool ok) { full_sync_->OnTransferChildExited(ok); }
  void AbortDisklessTransfer(std::string_view why) { full_sync_->AbortTransfer(why); }
  void OnRdbFileDone(bool ok) {
    if (full_sync_) full_sync_->OnSaveDone(ok);
  }

 private:
  WaitRegistry::Progress WaitProgress() const;
  repl::FullSync& EnsureFullSync();
  void FlushReplicas();

  // ---- repl::PrimaryHost (primary_side_host.cc) ----
  std::optional<std::string> ClientInfoLine(uint64_t client_id, int64_t now_ms) override;
  void FreeBacklog(int64_t offset) override;
  void SendKeepAlive(repl::ReplicaLink& link) override;
  int64_t NowMs() override;
  repl::FullSyncConfig ReadFullSyncConfig() override;
  const repl::ReplicationIds& History() override { return ids_; }
  repl::Primary* CurrentPrimary() override { return primary_.get(); }
  void CountSync(repl::SyncCount what) override;
  void SendToReplica(repl::ReplicaLink& link, std::string_view bytes) override;
  void CloseReplicaAfterReply(repl::ReplicaLink& link) override;
  void StartBulk(repl::ReplicaLink& link, std::shared_ptr<repl::SharedSnapshot> snapshot) override;
  bool ChildRunning() override { return persistence_.child().running(); }
  bool RdbChildRunning() override { return persistence_.child().type() == ChildType::kRdb; }
  void KillRdbChild(bool remove_temp_file) override { persistence_.KillChild(remove_temp_file); }
  void ReapChild() override;
  absl::Status SaveForReplicas(const repl::SnapshotSpec& spec, int64_t now_ms) override;
  absl::StatusOr<int> ForkSnapshotToPipe(const repl::SnapshotSpec& spec, int64_t now_ms, int read_fd, int write_fd,
                                         std::string prefix, std::string suffix) override;
  void WatchPipe(int fd, uint32_t token) override;
  void WakeSoon() override;
  repl::DisklessTransfer::Progress PumpTransfer(repl::DisklessTransfer& transfer) override;

  Hooks& hooks_;
  Config& config_;
  repl::ReplicationIds& ids_;
  Persistence& persistence_;
  BlockedClients& blocking_;
  ServerStats& stats_;
  core::Keyspace& keyspace_;
  const OutputLimits& limits_;
  int64_t min_replicas_to_write_ = 0;  // cached for the gate
  int64_t min_replicas_max_lag_ = 10;
  bool get_ack_pending_ = false;  // GETACK at the end of this turn
  std::unique_ptr<repl::Primary> primary_;
  // Made by the first SYNC / PSYNC, then kept (it outlives a freed backlog).
  // Declared after primary_: destroyed first, as it may hold links' snapshots.
  std::unique_ptr<repl::FullSync> full_sync_;
};

}  // namespace ringkv::server
