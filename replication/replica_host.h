// ReplicaHost: what the replica side of replication (ReplicaSide,
// replica_side.h) needs from the server that owns it -- the dataset, the
// primary's client connection, the replication history, configuration.
// replication/ cannot see server/, so the server implements this interface
// (server::ReplicaSide, server/replica_side/replica_side_host.cc) and
// hands itself to ReplicaSide.
//
// Only a replica calls through it: a standalone server or a primary never
// does, and no client's command pays a virtual call for it. A replica
// applying its primary's stream makes a few calls per command.
//
// The master client: once a sync succeeds the server turns the socket into
// a client of its own (AdoptMasterSocket) and names it by id; ReplicaSide
// keeps only that id and asks the host about that client by it.
//
// Re-entrancy: ApplyMasterCommand and EndFailover may stop replication
// altogether (the primary's stream ran REPLICAOF NO ONE; a failover that
// failed turns this server back into a primary), which destroys the
// ReplicaSide that called. It returns at once then, touching nothing.
//
// Thread-safety: main thread only, except WakeMainThread (any thread).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "replication/primary.h"
#include "replication/replication_info.h"
#include "replication/sync_worker.h"

namespace ringkv::repl {

class ReplicaHost {
 public:
  using Argv = std::span<const std::string_view>;

  // The wall clock (ms since the epoch), and when the server started
  // serving: Redis's replication cron ticks once a second since then.
  virtual int64_t NowMs() = 0;
  virtual int64_t StartTimeMs() = 0;
  // Any thread: the sync worker finished; the main thread should call
  // ReplicaSide::PollSync soon.
  virtual void WakeMainThread() = 0;

  // A sync attempt's settings from the configuration: authentication, the
  // announced port and address, TLS, the timeout, the source address, the
  // file a payload is downloaded to, and -- diskless load -- the loader
  // that parses it from the socket into the server's staging keyspace.
  // ReplicaSide adds the primary's address and the PSYNC arguments.
  virtual SyncRequest NewSyncRequest() = 0;
  // A diskless load cut short or failed: the staging keyspace is dropped.
  // REQUIRES: the sync worker is not running.
  virtual void DropStagedLoad() = 0;

  // This server's replication history and backlog (null until it has one).
  virtual ReplicationIds& History() = 0;
  virtual Primary* Backlog() = 0;
  virtual uint64_t ReplOffset() = 0;
  // Drops every synced replica of ours (they reconnect and PSYNC).
  virtual void DropReplicas() = 0;

  // A full sync's payload arrived (`r.kind` kFull): the server replaces its
  // dataset with it (from `r.rdb_path`, or swapping the staging keyspace
  // in), adopts the primary's history (`r.replid`, `r.offset`) and backlog,
  // and rebuilds its AOF. Before the rebuild it points the stream at the
  // snapshot's repl-stream-db (ReplicaSide::set_stream_db: the stream after
  // the snapshot continues there). False when loading failed (logged; the
  // socket is closed).
  virtual bool LoadFullSync(SyncResult& r, int64_t now_ms) = 0;
  // Makes the synced socket the primary's client, in database `db`.
  // Returns the client's id.
  virtual uint64_t AdoptMasterSocket(SyncResult& r, int db) = 0;
  // Closes the primary's client now (if it still exists).
  virtual void CloseMasterClient(uint64_t client_id) = 0;
  // The primary's client exists and is not closing.
  virtual bool MasterClientOpen(uint64_t client_id) = 0;
  // The database the primary's client has selected, or nullopt when gone.
  virtual std::optional<int> MasterClientDb(uint64_t client_id) = 0;
  // Queues bytes to the primary's client. False when it is gone.
  virtual bool WriteToMaster(uint64_t client_id, std::string_view bytes) = 0;
  // Runs one of the primary's commands through the command gate on its
  // client, as if it had just arrived. False when this server stopped being
  // a replica meanwhile: the calling ReplicaSide is destroyed.
  virtual bool ApplyMasterCommand(uint64_t client_id, Argv argv) = 0;
  // A script is running past busy-reply-threshold: the primary's commands
  // wait (they are neither refused nor counted meanwhile).
  virtual bool ScriptBusy() = 0;
  // The AOF is on and everything written to it is fsynced.
  virtual bool AofSynced() = 0;
  // systemd's status line (supervised systemd).
  virtual void SupervisorStatus(std::string_view status) = 0;

  // FAILOVER: whether this server demoted itself to hand over to the
  // replica it now syncs with, and the end of that sync (`ok`: the target
  // took over; else `why` it did not, and this server is a primary again:
  // the calling ReplicaSide is destroyed).
  virtual bool FailoverInProgress() = 0;
  virtual void EndFailover(bool ok, std::string_view why) = 0;

 protected:
  ~ReplicaHost() = default;
};

}  // namespace ringkv::repl
