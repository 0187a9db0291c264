// FullSync: the primary side of SYNC / PSYNC once a replica asked -- the
// partial resync from the backlog, or a full sync and its execution: the
// snapshot a BGSAVE writes for replicas (a file, then sent from it), or the
// diskless transfer a fork child streams through a pipe to the replica
// sockets (repl-diskless-sync yes). Which replicas the next snapshot serves
// is PlanFullSync's decision (full_sync_plan.h); this class carries it out.
//
// Owns what a full sync in progress needs: whether the running RDB child
// writes a file for replicas (and the offset it was forked at), the
// diskless transfer and its child's result, and the identity of the last
// file written for replicas (rdb-del-sync-files). It reaches the server only
// through repl::PrimaryHost: forking the snapshot child, reaping it, sending
// bytes to a replica, dropping one.
//
// Lifetime: made by the server on the first SYNC / PSYNC (a standalone
// server never makes one), then kept: it outlives a freed backlog (a save
// for replicas may still run then), and reads the Primary through the host
// each time (nullptr when freed).
//
// Diskless transfer: the child writes "$EOF:<mark>\r\n", the RDB and the
// mark into a pipe; OnReadable (the pipe became readable) hands each block
// to every replica of the transfer by reference (DisklessTransfer). When
// the pipe has ended and the child exited cleanly, the replicas go online;
// as in Redis 7.0 their stream starts on their first REPLCONF ACK, so
// nothing follows the payload on the socket until the replica read all of it.
//
// Log lines are redis-server 7.0's, through io::Log.
//
// Thread-safety: main thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "io/connection.h"
#include "replication/diskless_transfer.h"
#include "replication/primary.h"

namespace ringkv::repl {

class PrimaryHost;

class FullSync {
 public:
  explicit FullSync(PrimaryHost& host) : host_(host) {}
  FullSync(const FullSync&) = delete;
  FullSync& operator=(const FullSync&) = delete;

  // SYNC (old_sync: "?" and -1) or PSYNC <replid> <offset> on client
  // `client_id`, whose connection the server already marked as a replica's:
  // attaches its link to the Primary (made if needed), then answers
  // +CONTINUE when the history and offset are in the backlog, else starts
  // (or queues) a full sync (+FULLRESYNC once its snapshot starts).
  void OnSyncRequest(uint64_t client_id, io::Connection* conn, std::string_view replid, int64_t psync_offset,
                     bool old_sync);
  // Starts the full sync the replicas waiting for one can have now (retried
  // from the cron, and when a snapshot ends). Nothing while a child runs or
  // a transfer is being streamed.
  void StartIfNeeded(int64_t now_ms);

  // ---- the snapshot file (a BGSAVE for replicas) ----
  bool save_in_progress() const { return save_in_progress_; }
  // The RDB child exited (`ok`: cleanly), or was killed (not ok). Sends the
  // file to the replicas that waited for it, or drops them. Nothing unless
  // save_in_progress().
  void OnSaveDone(bool ok);
  // A replica waiting for the snapshot (kWaitBgsaveEnd) was detached: a
  // child writing a file for replicas only (no save points) is stopped once
  // none waits for it.
  void OnWaitingReplicaGone();
  // rdb-del-sync-files: whether a file written for replicas is known, and
  // the cron's check that deletes it once nothing needs it (as Redis's
  // removeRDBUsedToSyncReplicas).
  bool has_sync_rdb_file() const { return sync_rdb_file_.second != 0; }
  void RemoveRdbIfUseless();

  // ---- the diskless transfer ----
  bool transfer_running() const { return transfer_ != nullptr; }
  // The transfer's child exited (reaped before or after its pipe ended).
  // REQUIRES: transfer_running().
  void OnTransferChildExited(bool ok);
  // A pipe watched with `token` is readable (IoSystem::WatchReadable).
  void OnReadable(uint32_t token);
  // End of a loop turn: a transfer throttled by full replica sockets reads on.
  void BeforeFlush();
  // The cron: a transfer whose child was reaped before its pipe's end finishes.
  void MaybeFinishTransfer();
  // Stops the transfer (its child is killed), drops the replicas it was
  // streaming to, and starts the next full sync. REQUIRES: transfer_running().
  void AbortTransfer(std::string_view why);
  // REPLCONF ACK from `link`: a replica that loaded the whole payload goes
  // online now (not when the child is reaped).
  void OnReplicaAck(ReplicaLink& link);

 private:
  void StartDiskSave(Primary& primary, const std::vector<ReplicaLink*>& replicas, int64_t now_ms);
  void StartTransfer(Primary& primary, const std::vector<ReplicaLink*>& replicas, int64_t now_ms);
  void PumpTransfer();
  void OnlineIfLoaded(ReplicaLink& link);
  void SendFullResync(ReplicaLink& link, uint64_t offset);

  PrimaryHost& host_;
  bool save_in_progress_ = false;  // the running RDB child writes a file for replicas
  uint64_t save_offset_ = 0;       // the master offset at that fork
  // (st_dev, st_ino) of the RDB file last written to feed replicas; {} when none.
  std::pair<uint64_t, uint64_t> sync_rdb_file_;
  std::unique_ptr<DisklessTransfer> transfer_;  // the running child streams to its replicas
  bool transfer_eof_ = false;                   // its pipe ended: every byte was handed over
  uint32_t transfer_token_ = 0;  // tells this transfer's pipe polls from older ones
  std::optional<bool> transfer_child_ok_;  // its child was reaped (before the pipe ended)
  bool retry_transfer_ = false;            // the transfer waits for replica sockets to drain
};

}  // namespace ringkv::repl
