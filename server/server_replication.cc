// Server: the primary side of replication and the WAIT / WAITAOF waiters.
// The Primary component (backlog, replica links) is created the first time a
// replica attaches; until then none of this allocates anything.
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/strings.h"
#include "replication/full_sync_plan.h"
#include "server/logging.h"
#include "server/primary_glue.h"
#include "server/server.h"

namespace ringkv::server {

// ---- WAIT / WAITAOF ----------------------------------------------------------------

WaitRegistry::Progress Server::WaitProgress() const {
  WaitRegistry::Progress p;
  const repl::Primary* primary = primary_.get();
  p.nth_ack = [primary](int64_t n, bool fsynced) -> int64_t { return primary ? primary->NthAck(n, fsynced) : -1; };
  p.aof_on = aof_->enabled();
  p.aof_synced = aof_->synced_offset();
  return p;
}

void Server::ReplyToWaiter(Client& c, const WaitSpec& spec) {
  io::ReplyBuilder rb(&ReplyTarget(c), c.resp);
  const int64_t replicas = primary_ ? primary_->CountAcked(spec.repl_target, spec.aof) : 0;
  if (!spec.aof) {
    rb.Integer(replicas);
    return;
  }
  rb.ArrayHeader(2);
  rb.Integer(aof_->enabled() && aof_->synced_offset() >= spec.aof_target ? 1 : 0);
  rb.Integer(replicas);
}

void Server::WaitFor(Client& c, const WaitSpec& spec, int64_t deadline_us) {
  const WaitRegistry::Progress progress = WaitProgress();
  // Inside EXEC (or from the AOF) the answer is the count now, as Redis's.
  if (WaitRegistry::Satisfied(spec, progress) || !MayBlock(c)) {
    ReplyToWaiter(c, spec);
    return;
  }
  blocking_.waits().Add(c.id(), spec, progress);
  if (spec.numreplicas > 0 && primary_) get_ack_pending_ = true;  // ACKs in one round trip
  auto state = std::make_unique<BlockState>();
  state->kind = BlockKind::kWait;
  state->db = c.db;
  state->deadline_us = deadline_us;
  state->wait = spec;
  blocking_.Block(c, std::move(state));
}

void Server::UnblockWaiters(int64_t /*now_ms*/) {
  std::vector<std::pair<uint64_t, WaitSpec>> done;
  blocking_.waits().Take(WaitProgress(), &done);
  for (const auto& [id, spec] : done) {
    Client* c = FindClient(id);
    if (c == nullptr) continue;
    ReplyToWaiter(*c, spec);
    blocking_.Unblock(*c, UnblockReason::kServed);
  }
}

// ---- primary side ----------------------------------------------------------------------

// The write gates (NOREPLICAS, READONLY, MASTERDOWN) read these.
void Server::BindReplicationConfig() {
  config_->Bind("min-replicas-to-write", &min_replicas_to_write_);
  config_->Bind("min-replicas-max-lag", &min_replicas_max_lag_);
  config_->Bind("replica-read-only", &replica_read_only_);
  config_->Bind("replica-serve-stale-data", &serve_stale_data_);
  // A new repl-backlog-size applies at once, as Redis resizes its backlog in
  // CONFIG SET: the end of this loop turn already trims to it, so a replica
  // reconnecting right after writes that overflowed it gets a full resync,
  // not a partial one from bytes Redis would no longer hold. A CONFIG SET
  // under 16kb gets 16kb, as in Redis (a start-up value is kept as it is).
  config_->OnChange("repl-backlog-size", [this] {
    config_->StoreAppliedInt("repl-backlog-size", std::max<int64_t>(config_->Int("repl-backlog-size"), 16 * 1024));
    if (primary_) primary_->backlog().set_capacity(static_cast<size_t>(config_->Int("repl-backlog-size")));
    return absl::OkStatus();
  });
}

int Server::GoodReplicas(int64_t now_ms) const {
  return primary_ ? primary_->GoodReplicas(now_ms, min_replicas_max_lag_) : 0;
}

const char* Server::ReplicationGate(uint32_t flags) const {
  const bool write = flags & cmd::kWrite;
  if (!replica_ && write && min_replicas_to_write_ > 0 && min_replicas_max_lag_ > 0 &&
      GoodReplicas(UnixMs()) < min_replicas_to_write_) {
    return "NOREPLICAS Not enough good replicas to write.";
  }
  if (replica_ && write && replica_read_only_) return "READONLY You can't write against a read only replica.";
  if (replica_ && !replica_->link_up() && !serve_stale_data_ && !(flags & cmd::kStale)) {
    return "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.";
  }
  return nullptr;
}

repl::Primary& Server::EnsurePrimary() {
  if (!primary_) {
    // A backlog created from scratch starts a new history, as in Redis: a new
    // replication id and no secondary one.
    const int64_t offset = repl_ids_.offset;
    repl_ids_ = repl::ReplicationIds::Fresh();
    repl_ids_.offset = offset;
    primary_ = std::make_unique<repl::Primary>(static_cast<size_t>(config_->Int("repl-backlog-size")),
                                               static_cast<uint64_t>(offset));
    Log(kNotice, "Replication backlog created, my new replication IDs are '" + repl_ids_.replid + "' and '" +
                     repl_ids_.replid2 + "'");
  }
  return *primary_;
}

void Server::RestoreHistoryAsPrimary(const std::string& replid, int64_t offset) {
  // Redis 7.0: the old history becomes the secondary id, valid up to the
  // offset the file was saved at, and a new id starts there; the backlog
  // starts empty at that offset. Replicas continue with PSYNC.
  repl_ids_ = repl::ReplicationIds::Fresh();
  repl_ids_.replid2 = replid;
  repl_ids_.second_offset = offset + 1;
  repl_ids_.offset = offset;
  primary_ = std::make_unique<repl::Primary>(static_cast<size_t>(config_->Int("repl-backlog-size")),
                                             static_cast<uint64_t>(offset));
}

uint64_t Server::DeleteKeysExpiredAtLoad(int64_t now_ms) {
  const char* del = config_->Bool("lazyfree-lazy-expire") ? "UNLINK" : "DEL";
  uint64_t deleted = 0;
  for (int i = 0; i < keyspace_.count(); ++i) {
    core::Database& db = keyspace_.db(i);
    if (db.expires() == 0) continue;
    std::vector<std::string> stale;
    db.ForEachIncludingExpired([&](std::string_view key, const core::Entry& e) {
      const int64_t when = db.GetExpire(&e);
      if (when >= 0 && when <= now_ms) stale.emplace_back(key);
    });
    for (const std::string& key : stale) {
      db.Erase(key);
      ++deleted;
      // With a restored history the replicas hold these keys: they go
      // through the stream, as Redis feeds them to its new backlog.
      const std::string_view argv[] = {del, key};
      if (primary_) primary_->Feed(i, argv);
    }
  }
  return deleted;
}

void Server::StartReplicaSync(Client& c, std::string_view replid, int64_t psync_offset, bool old_sync) {
  repl::Primary& p = EnsurePrimary();
  c.is_replica = true;
  io_->MarkReplication(c.conn, io::Connection::kReplOutput);
  // A replica is sent the stream by offset from the backlog (io::ReplicaSend),
  // which only the main thread's I/O thread can do: its link moves there
  // (between loop turns; what is written to it meanwhile follows in order).
  // A TLS link's bytes must be encrypted on the way out: it stays on its
  // thread and is handed its range by reference (repl::Backlog::RefTo).
  if (c.conn->tls() == nullptr) io_->MoveToMainThread(c.conn);
  repl::ReplicaLink& link = p.Attach(c.id(), c.conn);
  link.old_sync = old_sync;
  const std::string peer = c.conn->peer.ToString();
  const bool known_history =
      replid == repl_ids_.replid ||
      (replid == repl_ids_.replid2 && psync_offset <= repl_ids_.second_offset + 1 && repl_ids_.second_offset >= 0);
  if (!old_sync && known_history && psync_offset > 0 && p.backlog().Has(static_cast<uint64_t>(psync_offset))) {
    link.state = repl::ReplicaState::kOnline;
    link.next_offset = static_cast<uint64_t>(psync_offset);
    link.last_ack_ms = UnixMs();
    io_->PrepareWrite(c.conn).Append(link.capa_psync2 ? StrCat("+CONTINUE ", repl_ids_.replid, "\r\n")
                                                      : std::string("+CONTINUE\r\n"));
    ++stats_.sync_partial_ok;
    Log(kNotice, StrCat("Partial resynchronization request from ", peer, " accepted. Sending ",
                        p.offset() + 1 - link.next_offset, " bytes of backlog starting from offset ", psync_offset,
                        "."));
    return;
  }
  if (!old_sync && replid != "?") ++stats_.sync_partial_err;
  ++stats_.sync_full;
  Log(kNotice, StrCat("Replica ", peer, " asks for synchronization; full resync"));
  // repl-disable-tcp-nodelay: fewer, bigger packets to a replica that
  // synchronises from scratch, as Redis's syncCommand (a partial resync keeps
  // its socket as it was). Best effort; a Unix socket has no such option.
  if (config_->Bool("repl-disable-tcp-nodelay") && c.conn->peer.family != AF_UNIX) {
    int off = 0;
    ::setsockopt(c.conn->fd, IPPROTO_TCP, TCP_NODELAY, &off, sizeof(off));
  }
  link.state = repl::ReplicaState::kWaitBgsaveStart;
  link.sync_requested_ms = UnixMs();
  // A file is being written for replicas: an unfiltered one may share it,
  // from its offset.
  if (repl_save_in_progress_ && !link.filtered()) {
    link.state = repl::ReplicaState::kWaitBgsaveEnd;
    link.next_offset = repl_save_offset_ + 1;
    if (!old_sync) {
      io_->PrepareWrite(c.conn).Append(StrCat("+FULLRESYNC ", repl_ids_.replid, " ", repl_save_offset_, "\r\n"));
    }
    return;
  }
  if (diskless_) {
    Log(kNotice, "Can't attach the replica to the current BGSAVE. Waiting for next BGSAVE for SYNC");
    return;
  }
  // A streamed transfer (diskless, or a filtered snapshot, always streamed)
  // waits repl-diskless-sync-delay on a diskless primary.
  if (config_->Bool("repl-diskless-sync") && (link.capa_eof || link.filtered()) &&
      config_->Int("repl-diskless-sync-delay") > 0) {
    Log(kNotice, "Delay next BGSAVE for diskless SYNC");
    return;  // the cron starts it, so replicas arriving meanwhile share it
  }
  StartFullSyncIfNeeded(UnixMs());
}

void Server::StartFullSyncIfNeeded(int64_t now_ms) {
  // Retried from the cron, and when a diskless transfer ends: its child may
  // be reaped while its pipe is still being read, and a second transfer
  // would replace the first one's replicas' payload.
  if (!primary_ || child_.running() || diskless_) return;
  repl::FullSyncSettings settings;
  settings.diskless_sync = config_->Bool("repl-diskless-sync");
  settings.delay_s = config_->Int("repl-diskless-sync-delay");
  settings.max_replicas = config_->Int("repl-diskless-sync-max-replicas");
  const repl::FullSyncPlan plan = repl::PlanFullSync(*primary_, settings, now_ms);
  for (repl::ReplicaLink* r : plan.refused) {
    Log(kWarning, StrCat("Replica ", r->ip(), ":", r->listening_port,
                         " asks for a filtered snapshot without the EOF capability: disconnected"));
    DropReplica(r->client_id);
  }
  switch (plan.kind) {
    case repl::FullSyncPlan::Kind::kNone:
    case repl::FullSyncPlan::Kind::kDelay:  // the cron tries again
      return;
    case repl::FullSyncPlan::Kind::kDiskless:
      StartDisklessSync(plan.replicas, now_ms);
      return;
    case repl::FullSyncPlan::Kind::kDisk:
      break;
  }
  const std::vector<repl::ReplicaLink*>& waiting = plan.replicas;
  primary_->ForceSelect();  // the stream after the snapshot starts with SELECT
  const uint64_t offset = primary_->offset();
  RdbSaveOptions info;
  info.repl_id = repl_ids_.replid;
  info.repl_offset = static_cast<int64_t>(offset);
  info.repl_stream_db = SnapshotStreamDb();
  if (absl::Status s = rdb_->BackgroundSave(now_ms, stats_.dirty, &info); !s.ok()) {
    Log(kWarning, StrCat("BGSAVE for replication failed: ", s.message()));
    for (repl::ReplicaLink* r : waiting) DropReplica(r->client_id);
    return;
  }
  Log(kNotice, StrCat("Starting BGSAVE for SYNC with target: disk"));
  repl_save_in_progress_ = true;
  repl_save_offset_ = offset;
  for (repl::ReplicaLink* r : waiting) {
    r->state = repl::ReplicaState::kWaitBgsaveEnd;
    r->next_offset = offset + 1;
    if (!r->old_sync) {
      io_->PrepareWrite(r->conn).Append(StrCat("+FULLRESYNC ", repl_ids_.replid, " ", offset, "\r\n"));
    }
  }
}

void Server::FinishFullSync(const ChildResult& result) {
  repl_save_in_progress_ = false;
  // The file this save wrote for replicas (rdb-del-sync-files may delete it
  // once nothing needs it; a later save replaces it with another inode).
  if (struct stat st; result.ok && ::stat(config_->Str("dbfilename").c_str(), &st) == 0) {
    repl_rdb_file_ = {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
  }
  if (!primary_) return;
  std::vector<repl::ReplicaLink*> waiting;
  for (const auto& r : primary_->replicas()) {
    if (r->state == repl::ReplicaState::kWaitBgsaveEnd) waiting.push_back(r.get());
  }
  // The file is opened once and read once for all of them (a later save
  // may replace dbfilename meanwhile: the descriptor keeps this one).
  std::shared_ptr<repl::SharedSnapshot> snapshot;
  if (result.ok && !waiting.empty()) {
    const int fd = ::open(config_->Str("dbfilename").c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && ::fstat(fd, &st) == 0) {
      snapshot = std::make_shared<repl::SharedSnapshot>(fd, static_cast<uint64_t>(st.st_size));
    } else if (fd >= 0) {
      ::close(fd);
    }
  }
  for (repl::ReplicaLink* r : waiting) {
    if (!result.ok) {
      Log(kWarning, "SYNC failed. BGSAVE child returned an error");
      DropReplica(r->client_id);
      continue;
    }
    if (snapshot == nullptr) {
      Log(kWarning, "SYNC failed: can't open the RDB file just written");
      DropReplica(r->client_id);
      continue;
    }
    primary_->StartBulk(*r, snapshot, *io_);
    r->last_ack_ms = UnixMs();
    Log(kNotice, StrCat("Synchronization with replica ", r->conn->peer.ToString(), " started: sending ",
                        snapshot->size(), " bytes of RDB"));
  }
  StartFullSyncIfNeeded(UnixMs());  // replicas that asked during this save
}

void Server::OnReplicaAck(Client& c, uint64_t offset, uint64_t fsynced_offset) {
  if (!primary_) return;
  repl::ReplicaLink* link = primary_->Find(c.id());
  if (link == nullptr) return;
  link->stream_on_ack = false;  // after a diskless payload: the replica has loaded it
  link->acked = true;
  OnlineIfLoadedDiskless(*link);
  link->ack_offset = std::max(link->ack_offset, offset);
  link->fack_offset = std::max(link->fack_offset, fsynced_offset);
  link->last_ack_ms = UnixMs();
  if (!blocking_.waits().empty()) UnblockWaiters(link->last_ack_ms);
}

void Server::DisconnectReplicas() {
  std::vector<uint64_t> ids;
  for (const auto& link : primary_->replicas()) {
    // A connection still in its handshake (the one asking us to take over,
    // say) is not a replica yet: it stays.
    if (link->state != repl::ReplicaState::kHandshake) ids.push_back(link->client_id);
  }
  for (uint64_t id : ids) DropReplica(id);
}

void Server::ForgetReplica(uint64_t client_id) {
  if (!primary_) return;
  const repl::ReplicaLink* link = primary_->Find(client_id);
  const bool waited_for_save = link != nullptr && link->state == repl::ReplicaState::kWaitBgsaveEnd;
  primary_->Detach(client_id);
  // A snapshot written only for replicas that are all gone is of no use: the
  // child is stopped (it would hold memory and the next full sync back), as
  // Redis does -- unless save points make the file worth having anyway.
  if (!waited_for_save || !repl_save_in_progress_ || has_save_points_ || child_.type() != ChildType::kRdb) return;
  for (const auto& r : primary_->replicas()) {
    if (r->state == repl::ReplicaState::kWaitBgsaveEnd) return;
  }
  Log(kNotice, "Background saving for replication is useless now (no replica waits for it): killing the child");
  ChildResult r;
  child_.Kill(&r);
  ::unlink(StrCat("temp-", r.pid, ".rdb").c_str());
  repl_save_in_progress_ = false;
}

void Server::DropReplica(uint64_t client_id) {
  ForgetReplica(client_id);
  if (Client* c = FindClient(client_id)) {
    Log(kWarning, StrCat("Connection with replica ", c->conn->peer.ToString(), " lost."));
    c->closing = true;
    io_->CloseNow(c->conn);
  }
}

void Server::BeforeFlushReplication() {
  if (retry_diskless_ && diskless_) {
    retry_diskless_ = false;
    PumpDiskless();
  }
  // During a failover the stream is frozen after one GETACK, so the target's
  // acknowledgement can catch up with the offset (as Redis pauses it).
  // The request stays pending while no replica is online yet (one still
  // syncing): it is sent as soon as there is one to answer.
  // A replica relays its primary's stream only: nothing of its own.
  if (get_ack_pending_ && !replica_ && (!failover_ || !failover_->ack_requested()) && primary_->online() > 0) {
    get_ack_pending_ = false;
    const std::string_view getack[] = {"REPLCONF", "GETACK", "*"};
    primary_->FeedRaw(getack);
    if (failover_) failover_->set_ack_requested();
  }
  std::vector<uint64_t> drop;
  // A replica needing more than the replica class's hard output limit
  // (client-output-buffer-limit slave, 256 MB by default; 0: none) is
  // dropped and will resync, rather than pinning memory without bound. The
  // limit is never below repl-backlog-size, as in Redis 7.0: what the
  // backlog holds anyway costs nothing more, and a replica cut right after
  // its partial resync would only resync again.
  const Config::OutputBufferLimit& replica_limit = output_limits_.replica();
  const size_t max_lag = replica_limit.hard > 0 ? static_cast<size_t>(replica_limit.hard) : SIZE_MAX;
  primary_->Flush(*io_, std::max<size_t>(max_lag, primary_->backlog().capacity()), &drop);
  for (uint64_t id : drop) {
    Log(kWarning, "Replica fell behind the replication backlog: disconnecting it (it will resync)");
    DropReplica(id);
  }
}

bool Server::PersistenceDisabled() const { return !has_save_points_ && !aof_->enabled(); }

// rdb-del-sync-files, as Redis's removeRDBUsedToSyncReplicas: with no save
// points and no AOF, the RDB file written only to feed replicas is deleted
// once no child runs and no replica waits for it or is being sent it.
void Server::RemoveReplicationRdbIfUseless() {
  if (!config_->Bool("rdb-del-sync-files") || !PersistenceDisabled() || child_.running()) return;
  if (primary_) {
    for (const auto& r : primary_->replicas()) {
      if (r->state == repl::ReplicaState::kWaitBgsaveStart || r->state == repl::ReplicaState::kWaitBgsaveEnd ||
          r->state == repl::ReplicaState::kSendBulk) {
        return;
      }
    }
  }
  const std::string& path = config_->Str("dbfilename");
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && static_cast<uint64_t>(st.st_dev) == repl_rdb_file_.first &&
      static_cast<uint64_t>(st.st_ino) == repl_rdb_file_.second) {
    Log(kNotice, "Removing the RDB file used to feed replicas in a persistence-less instance");
    ::unlink(path.c_str());
  }
  repl_rdb_file_ = {};
}

void Server::ReplicationCron(int64_t now_ms) {
  if (!primary_glue_) primary_glue_ = std::make_unique<PrimaryGlue>(*this);
  repl::PrimaryCronSettings settings;
  settings.hz = hz_;
  settings.start_time_ms = start_time_ms_;
  settings.backlog_ttl_s = config_->Int("repl-backlog-ttl");
  settings.ping_period_s = config_->Int("repl-ping-replica-period");
  settings.timeout_ms = config_->Int("repl-timeout") * 1000;
  const Config::OutputBufferLimit& replica_limit = output_limits_.replica();
  settings.soft_limit_bytes = replica_limit.soft;
  settings.soft_limit_ms = replica_limit.soft_seconds * 1000;
  settings.is_replica = replica_ != nullptr;
  settings.stream_frozen = failover_ != nullptr || cluster_mf_paused_;
  settings.diskless_transfer = diskless_ != nullptr;
  if (!primary_->Cron(*primary_glue_, settings, now_ms)) return;  // the backlog was freed
  StartFullSyncIfNeeded(now_ms);
}

void Server::ReplicateVerbatim(Argv argv) {
  if (primary_ && !replica_) primary_->FeedRaw(argv);  // a replica only relays its primary's stream
}

}  // namespace ringkv::server
