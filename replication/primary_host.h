// PrimaryHost: what the primary side needs from the server that owns it.
// The cron (Primary::Cron, primary_cron.cc): closing a replica's client,
// describing it, freeing the backlog, a keep-alive byte on its socket. The
// full sync (FullSync, full_sync.h): the replication history, the Primary,
// the sync counters, bytes to a replica's socket, and the fork child that
// writes the snapshot (to the RDB file, or into a pipe). replication/
// cannot see server/, so the server's primary side implements this
// interface (PrimarySide, server/primary_side/primary_side.h).
//
// Only the cron and replication's own commands (SYNC / PSYNC, a replica's
// ACK) call through it, on a server with replicas or a backlog: a
// standalone server never does, and no other command pays a virtual call
// for it.
//
// Re-entrancy: FreeBacklog destroys the Primary whose cron called; the cron
// returns at once then, touching nothing.
//
// Thread-safety: main thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "replication/diskless_transfer.h"
#include "replication/full_sync_plan.h"
#include "replication/primary.h"
#include "replication/replication_info.h"
#include "replication/shared_snapshot.h"

namespace ringkv::repl {

// What one cron tick reads of the configuration and the server's state.
struct PrimaryCronSettings {
  int hz = 10;                   // ticks per second
  int64_t start_time_ms = 0;     // when the server started serving
  int64_t backlog_ttl_s = 3600;  // repl-backlog-ttl (0: never freed)
  int64_t ping_period_s = 10;    // repl-ping-replica-period
  int64_t timeout_ms = 60000;    // repl-timeout, in ms
  uint64_t soft_limit_bytes = 0;  // client-output-buffer-limit replica soft bytes (0: none)
  int64_t soft_limit_ms = 0;      // ... and how long a replica may stay over them
  bool is_replica = false;        // this server relays its primary's stream only
  // No PING: a failover (FAILOVER, or a cluster manual failover) froze the
  // stream so the target's acknowledgement can catch up with its offset.
  bool stream_frozen = false;
  bool diskless_transfer = false;  // a diskless payload is being streamed
};

// What a full sync reads of the configuration, when it needs it.
struct FullSyncConfig {
  FullSyncSettings plan;             // repl-diskless-sync, its delay and max replicas
  bool disable_tcp_nodelay = false;  // repl-disable-tcp-nodelay
  std::string rdb_path;              // dbfilename: where a BGSAVE for replicas writes
  bool has_save_points = false;      // `save` is set: a snapshot is worth keeping anyway
  // rdb-del-sync-files on a server with no save points and no AOF: the file
  // written only to feed replicas goes once nothing needs it.
  bool remove_sync_rdb = false;
};

// The snapshot a full sync forks for.
struct SnapshotSpec {
  std::string replid;       // AUX repl-id
  uint64_t offset = 0;      // AUX repl-offset: the master offset at the fork
  // REPLCONF rdb-filter-only (diskless only): no keys, and/or no functions.
  bool exclude_data = false;
  bool exclude_functions = false;
};

// The sync counters INFO stats reports.
enum class SyncCount { kPartialOk, kPartialErr, kFull };

class PrimaryHost {
 public:
  // ---- the cron (Primary::Cron) ----
  // Closes the replica's client (logging "Connection with replica ... lost.")
  // and forgets its link, as a replica whose connection dropped.
  virtual void DropReplica(uint64_t client_id) = 0;
  // CLIENT LIST's line for the client, nullopt when it is gone.
  virtual std::optional<std::string> ClientInfoLine(uint64_t client_id, int64_t now_ms) = 0;
  // Destroys the Primary (the backlog) and starts a new history from
  // `offset`: a new replication id, no secondary one.
  virtual void FreeBacklog(int64_t offset) = 0;
  // Queues "\n" to a replica waiting for its snapshot (its read timeout
  // does not fire during a long BGSAVE).
  virtual void SendKeepAlive(ReplicaLink& link) = 0;

  // ---- full syncs (FullSync) ----
  virtual int64_t NowMs() = 0;
  virtual FullSyncConfig ReadFullSyncConfig() = 0;
  // The replication history (ids and offsets) PSYNC is checked against.
  virtual const ReplicationIds& History() = 0;
  // The Primary, made (a new history) when there is none; or as it is.
  virtual Primary& EnsurePrimary() = 0;
  virtual Primary* CurrentPrimary() = 0;
  virtual void CountSync(SyncCount what) = 0;
  // Queues bytes on the replica's connection.
  virtual void SendToReplica(ReplicaLink& link, std::string_view bytes) = 0;
  // Closes the replica's connection once what is queued for it is sent.
  virtual void CloseReplicaAfterReply(ReplicaLink& link) = 0;
  // Primary::StartBulk with the server's I/O.
  virtual void StartBulk(ReplicaLink& link, std::shared_ptr<SharedSnapshot> snapshot) = 0;
  // The fork child: any kind running, an RDB one running.
  virtual bool ChildRunning() = 0;
  virtual bool RdbChildRunning() = 0;
  // Kills the RDB child (its result is not reported); `remove_temp_file`:
  // and deletes the temp-<pid>.rdb it was writing.
  virtual void KillRdbChild(bool remove_temp_file) = 0;
  // Reaps an exited child now (FullSync::OnSaveDone / OnTransferChildExited
  // are called from inside).
  virtual void ReapChild() = 0;
  // BGSAVE to the RDB file for replicas (its end: FullSync::OnSaveDone).
  virtual absl::Status SaveForReplicas(const SnapshotSpec& spec, int64_t now_ms) = 0;
  // Forks a child that closes `read_fd` (the pipe's read end) and writes
  // `prefix`, the RDB of `spec` and `suffix` into `write_fd` (its write
  // end; the caller closes both ends of its own); its pid, or 0 when the
  // server writes the snapshot itself (snapshot-fork no: a thread writes
  // into its own copy of `write_fd`). The child's exit (or the in-process
  // work's end): FullSync::OnTransferChildExited.
  virtual absl::StatusOr<int> ForkSnapshotToPipe(const SnapshotSpec& spec, int64_t now_ms, int read_fd,
                                                 int write_fd, std::string prefix, std::string suffix) = 0;
  // Calls FullSync::OnReadable(token) once, when `fd` is readable.
  virtual void WatchPipe(int fd, uint32_t token) = 0;
  // Runs the end-of-turn work (FullSync::BeforeFlush) again shortly.
  virtual void WakeSoon() = 0;
  // DisklessTransfer::Pump with the server's Primary and I/O.
  virtual DisklessTransfer::Progress PumpTransfer(DisklessTransfer& transfer) = 0;

 protected:
  ~PrimaryHost() = default;
};

}  // namespace ringkv::repl
