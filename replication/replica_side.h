// ReplicaSide: the replica side of replication -- the link to the primary
// and what runs on it. REPLICAOF host port creates one, REPLICAOF NO ONE
// destroys it: a server that is not a replica allocates nothing here.
//
// It owns the link's state (MasterLink: where it points, how far it got,
// the primary's open transaction and the commands held while a script is
// busy), the SyncWorker that does the handshake and payload transfer on its
// own thread, the acknowledgements (REPLCONF ACK offset FACK offset,
// once a second, on GETACK and when more of the stream is fsynced) and the
// keys a writable replica's own clients gave a deadline. The
// server does the rest through ReplicaHost (replica_host.h): loading the
// payload, turning the socket into its primary's client, running that
// client's commands through its command gate.
//
// The life of a link:
//   kConnect --Cron at the next cron second / StartSync--> kSyncing
//   kSyncing --PollSync: failed--> kConnect (retried at the next cron second)
//   kSyncing --PollSync: full or continue--> kConnected (socket adopted, ACK sent)
//   kConnected --OnLinkClosed--> kConnect
//
// Usage (server/replica_side/replica_side.cc, which owns it as link_):
//   link_ = std::make_unique<repl::ReplicaSide>(*this, host, port, db);
//   link_->StartSync();                    // once serving
//   ... OnNotify: link_->PollSync();  cron: link_->Cron(now_ms);
//   ... each of the primary's commands, once run: link_->Applied(argv, in_multi);
//
// Thread-safety: main thread only. The sync worker's thread touches only
// what the host's SyncRequest gives it; the destructor stops and joins it.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <utility>

#include "replication/master_link.h"
#include "replication/replica_key_expiry.h"
#include "replication/replica_host.h"
#include "replication/sync_worker.h"

namespace ringkv::repl {

class ReplicaSide {
 public:
  using Argv = ReplicaHost::Argv;

  // A link to `host`:`port` (state kConnect), whose stream starts in
  // database `db`. Starts nothing: StartSync, or the cron, does.
  ReplicaSide(ReplicaHost& server, std::string host, int port, int db);
  // Stops a sync in progress (joins the worker) and closes a socket it
  // handed over but nobody took. The primary's client is left to the host.
  ~ReplicaSide();
  ReplicaSide(const ReplicaSide&) = delete;
  ReplicaSide& operator=(const ReplicaSide&) = delete;

  const MasterLink& link() const { return link_; }
  bool link_up() const { return link_.state == MasterLink::State::kConnected; }
  bool syncing() const { return link_.state == MasterLink::State::kSyncing; }
  // From the primary's +FULLRESYNC until its payload is loaded: Redis's
  // replica then has neither a master client nor a cached one, so the offset
  // it announces (replicationGetSlaveOffset) is 0.
  bool full_sync_in_progress() const {
    return syncing() && worker_ != nullptr && worker_->phase() == SyncPhase::kTransfer;
  }
  // The link's state as ROLE names it: connect, connecting, handshake,
  // sync, connected.
  const char* LinkStateName() const;
  // The database the stream after a snapshot taken now continues in (AUX
  // repl-stream-db): the one the primary's client has selected.
  int StreamDb() const;
  // A replica restarted from its own RDB continues the stream in the
  // database that file names.
  void set_stream_db(int db) { link_.db = db; }

  // Starts a sync attempt on the worker thread (PSYNC with our history
  // when we have one, else a full sync).
  void StartSync();
  // The worker finished (ReplicaHost::WakeMainThread): takes its result --
  // a failure plans a retry; a full or partial sync makes the socket the
  // primary's client. May destroy `this` (a failover that failed).
  void PollSync();
  // Stops a sync in progress and closes the primary's client, keeping the
  // database it had selected. The state is left as it was.
  void CloseLink();
  // The primary's client closed: what outlives it is kept, a retry planned.
  void OnLinkClosed(int client_db);
  // REPLICAOF another primary: closes the link and points it at
  // `host`:`port` (state kConnect), keeping the database the stream had
  // selected, as Redis keeps its cached master's.
  void Retarget(std::string host, int port);

  // ---- the primary's stream --------------------------------------------------------
  // Whether the primary's commands are being held (a script was busy): new
  // ones queue behind them.
  bool holding() const { return !link_.held.empty(); }
  void Hold(Argv argv) { link_.held.emplace_back(argv.begin(), argv.end()); }
  // Runs the held commands, in order, while no script is busy. May destroy
  // `this` (a held REPLICAOF NO ONE).
  void ApplyHeld();
  // One of the primary's commands ran (`in_multi`: its client is inside
  // MULTI after it): the bytes go to our own backlog verbatim, a
  // transaction's only at its EXEC, so the offsets stay the primary's.
  void Applied(Argv argv, bool in_multi);

  // ---- acknowledgements -----------------------------------------------------------
  // REPLCONF ACK <offset> FACK <fsynced offset> to the primary, now.
  void SendAck();
  // End of a loop turn with the AOF on: the AOF up to `aof_offset` holds
  // the stream up to the current replication offset.
  void NoteAofFed(uint64_t aof_offset);
  // The AOF is fsynced up to `aof_synced`: the FACK offset advances (and is
  // sent at once) when that covers more of the stream.
  void OnAofSynced(uint64_t aof_synced);

  // Once per cron tick: retries a lost link at the next cron second, ACKs
  // once a second.
  void Cron(int64_t now_ms);

  // ---- a writable replica's own keys with a deadline ----------------------------------
  // They are expired here, not by the primary (made on the first such write).
  ReplicaKeyExpiry& own_expiry() {
    if (!own_expiry_) own_expiry_ = std::make_unique<ReplicaKeyExpiry>();
    return *own_expiry_;
  }
  ReplicaKeyExpiry* own_expiry_if_any() { return own_expiry_.get(); }
  size_t own_expiry_count() const { return own_expiry_ ? own_expiry_->size() : 0; }
  // A full sync replaced the dataset: the keys it remembered are gone.
  void ForgetOwnExpiry() { own_expiry_.reset(); }

 private:
  void OnSyncResult(SyncResult r);
  // Forgets the primary's client (keeping its database) and what of its
  // stream was not applied.
  void Detach(int client_db);
  // The next second of Redis's once-a-second replication cron.
  int64_t NextCronMs(int64_t now_ms);

  ReplicaHost& server_;
  MasterLink link_;
  // (AOF offset written, replication offset then), so an fsync completion
  // tells how far the stream is durable (FACK).
  std::deque<std::pair<uint64_t, uint64_t>> aof_marks_;
  std::unique_ptr<ReplicaKeyExpiry> own_expiry_;  // keys a writable replica's clients gave a TTL
  // Last: destroyed first, so its thread stops before anything it reports to.
  std::unique_ptr<SyncWorker> worker_;
};

}  // namespace ringkv::repl
