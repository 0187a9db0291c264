// Primary: the primary side of replication -- the backlog, the attached
// replicas and their acknowledgements. Created by the server the first time
// a replica attaches; a standalone server never allocates one.
//
// The stream is written once (Feed -> Backlog). Each replica has only a
// ReplicaLink: how far it has been sent (next_offset) and acknowledged.
// A replica whose connection belongs to the main thread (I/O thread 0: every
// plain replica once its SYNC is accepted) is sent by offset: Flush() starts
// io::ReplicaSend once it streams, and its connection's flush builds the
// iovecs straight from the backlog blocks (no copy, no per-replica links);
// next_offset is then what the connection has sent. A TLS replica (or one
// still moving to thread 0) is handed its range by reference (Backlog::RefTo),
// bounded per turn and by what the connection has not sent yet. Either way a
// slow replica costs backlog retention (capped), never unbounded per-replica
// buffers.
//
// Thread-safety: main thread only (Feed, FeedRaw, Attach, Detach and Flush
// check it in debug builds: io/thread_check.h).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "io/io_system.h"
#include "replication/backlog.h"
#include "replication/shared_snapshot.h"

namespace ringkv::repl {

class PrimaryHost;
struct PrimaryCronSettings;

enum class ReplicaState : uint8_t {
  kHandshake,        // REPLCONF seen, no SYNC/PSYNC yet
  kWaitBgsaveStart,  // full sync wanted; waiting for the fork child to be free
  kWaitBgsaveEnd,    // the RDB for it is being written
  kSendBulk,         // the RDB file is being sent, a piece per loop turn
  kOnline,           // receiving the stream
};

// The state as INFO's slaveN line and the shutdown log name it:
// "online", "send_bulk", otherwise "wait_bgsave" (as redis-server 7.0).
inline const char* ReplicaStateName(ReplicaState state) {
  switch (state) {
    case ReplicaState::kOnline:
      return "online";
    case ReplicaState::kSendBulk:
      return "send_bulk";
    default:
      return "wait_bgsave";
  }
}

// What the primary knows of one replica connection.
struct ReplicaLink {
  uint64_t client_id = 0;
  io::Connection* conn = nullptr;
  ReplicaState state = ReplicaState::kHandshake;
  // First stream byte not yet handed to the connection (sent by offset: not
  // yet sent by it, as of the last Flush).
  uint64_t next_offset = 0;
  uint64_t ack_offset = 0;   // REPLCONF ACK: processed by the replica
  uint64_t fack_offset = 0;  // REPLCONF ACK .. FACK: fsynced to the replica's AOF
  int64_t last_ack_ms = 0;
  int listening_port = 0;
  std::string announced_ip;  // REPLCONF ip-address, else the peer address
  bool capa_eof = false;
  bool capa_psync2 = false;
  bool old_sync = false;     // attached with SYNC (no offsets, no acks)
  // REPLCONF rdb-filter-only: what its snapshot leaves out (the keys, and
  // the functions unless it named them). Served by a transfer of its own.
  bool exclude_data = false;
  bool exclude_functions = false;
  // REPLCONF rdb-only 1: it wants the snapshot only (redis-cli --rdb), not
  // the stream after it: closed once the snapshot is sent.
  bool rdb_only = false;
  bool SameSnapshotAs(const ReplicaLink& o) const {
    return exclude_data == o.exclude_data && exclude_functions == o.exclude_functions;
  }
  bool filtered() const { return exclude_data || exclude_functions; }
  bool stream_on_ack = false;  // online after a diskless payload: stream from its first ACK
  bool acked = false;          // an ACK arrived on this connection (since the payload started)
  int64_t sync_requested_ms = 0;  // when it asked for a full sync (repl-diskless-sync-delay)
  int64_t over_soft_limit_ms = 0;  // since when Pending() is over the soft output limit (0: it is not)
  // A diskless payload being sent: since when its connection wrote nothing
  // (0: it is writing), and what it had unsent then.
  int64_t stalled_since_ms = 0;
  uint64_t stalled_unsent = 0;
  // The address it is known by: REPLCONF ip-address, else the peer's IP.
  std::string ip() const;
  // kSendBulk: the RDB file being sent, shared with every replica of the
  // same save; how much of it this link has sent (or, when it reads on its
  // own, handed to its connection); and whether it reads on its own (a TLS
  // link, one of another I/O thread, or one left behind by the others).
  std::shared_ptr<SharedSnapshot> snapshot;
  uint64_t rdb_sent = 0;
  bool rdb_own_reads = false;
  bool rdb_left_window = false;  // own reads resume where its last window send ends
};

class Primary {
 public:
  // A fresh backlog: the stream continues after `master_offset`.
  Primary(size_t backlog_size, uint64_t master_offset);
  ~Primary();
  Primary(const Primary&) = delete;
  Primary& operator=(const Primary&) = delete;

  Backlog& backlog() { return backlog_; }
  const Backlog& backlog() const { return backlog_; }
  uint64_t offset() const { return backlog_.end_offset(); }

  // Appends a command executed in `db` (SELECT first when the stream's
  // database differs).
  void Feed(int db, std::span<const std::string_view> argv);
  // Appends a command that does not depend on the database (PING, REPLCONF),
  // or one of our primary's stream.
  void FeedRaw(std::span<const std::string_view> argv);
  // Appends already encoded stream bytes (our primary's, verbatim).
  void FeedStream(std::string_view bytes) { backlog_.Append(bytes); }
  // The next Feed starts with SELECT (after a full sync began).
  void ForceSelect() { stream_db_ = -1; }

  ReplicaLink& Attach(uint64_t client_id, io::Connection* conn);
  ReplicaLink* Find(uint64_t client_id);
  const ReplicaLink* Find(uint64_t client_id) const;
  void Detach(uint64_t client_id);
  const std::vector<std::unique_ptr<ReplicaLink>>& replicas() const { return replicas_; }

  // Starts sending an RDB file to a replica in kWaitBgsaveEnd:
  // "$<size>\r\n", then the file's bytes (read once for every replica of
  // the same save: SharedSnapshot), then the stream from its next_offset.
  // (A diskless payload instead comes from a DisklessTransfer, and the
  // stream then waits for the replica's first ACK.)
  void StartBulk(ReplicaLink& link, std::shared_ptr<SharedSnapshot> snapshot, io::IoSystem& io);
  // Hands online replicas the stream they miss (and syncing ones the next
  // piece of their RDB). Replicas so far behind that the backlog would pass
  // `max_lag_bytes` for them are listed in *drop.
  void Flush(io::IoSystem& io, size_t max_lag_bytes, std::vector<uint64_t>* drop);

  // Stream bytes `link` has not sent yet: what it still needs of the backlog
  // plus, once it streams, what its connection has not written (a replica
  // being synced has the payload there, which is not stream).
  uint64_t Pending(const ReplicaLink& link) const;
  // client-output-buffer-limit replica's soft limit, as Redis applies it:
  // replicas whose Pending() stayed over `soft_bytes` for more than
  // `soft_ms` are listed in *drop (soft_bytes 0: no limit). Only replicas
  // receiving the stream are measured: online and acknowledged at least
  // once on this connection. One being synced (its payload travelling or
  // loading) is bounded by the hard limit alone, so that a long transfer is
  // not cut only to start again (docs/replication.md, "Slow replicas").
  void CheckSoftLimit(uint64_t soft_bytes, int64_t soft_ms, int64_t now_ms, std::vector<uint64_t>* drop);
  // Replicas being sent a diskless payload (kWaitBgsaveEnd) whose connection
  // has written nothing for `timeout_ms` (repl-timeout) are listed in *drop:
  // a stuck replica would hold the fork child, and every other replica of
  // the transfer, back (Redis's "timedout replica (full sync)").
  void CheckStalledTransfers(int64_t timeout_ms, int64_t now_ms, std::vector<uint64_t>* drop);

  // Online replicas whose acknowledged (or, with fsynced, AOF-fsynced)
  // offset is at least `offset`.
  int CountAcked(uint64_t offset, bool fsynced) const;
  // The n-th highest acknowledged offset (n >= 1), -1 with fewer online replicas.
  int64_t NthAck(int64_t n, bool fsynced) const;
  int online() const;
  // Online replicas that acknowledged within `max_lag_s` seconds
  // (min-replicas-to-write's "good" replicas).
  int GoodReplicas(int64_t now_ms, int64_t max_lag_s) const;
  // "ip:port" as the replica announced itself (Redis's replica name in
  // logs), "?" when it is not attached.
  std::string ReplicaName(uint64_t client_id) const;

  // The primary side's once-a-tick duties (primary_cron.cc): frees the
  // backlog after repl-backlog-ttl without replicas (through `host`, which
  // destroys this Primary: false is returned then, and nothing more is
  // done), keeps replicas waiting for a snapshot alive, PINGs the replicas
  // every repl-ping-replica-period, and drops (through `host`) replicas that
  // timed out or stayed over the soft output limit. True otherwise.
  bool Cron(PrimaryHost& host, const PrimaryCronSettings& settings, int64_t now_ms);

 private:
  // One turn of a kSendBulk link: false when its file ended early (the
  // replica must sync again). The link turns kOnline once all is sent.
  bool SendBulk(ReplicaLink& link, io::IoSystem& io);
  // Drops the window blocks of `snapshot` no replica sent from it needs, and
  // moves to their own reads the replicas left too far behind.
  void TrimSnapshot(SharedSnapshot& snapshot);

  Backlog backlog_;
  int stream_db_ = -1;
  std::string scratch_;
  std::vector<std::unique_ptr<ReplicaLink>> replicas_;
  int64_t no_replicas_since_ms_ = 0;  // repl-backlog-ttl: since when none is attached (0: some are)
  int64_t last_ping_s_ = -1;          // second since start-up of the last PING to replicas
};

}  // namespace ringkv::repl
