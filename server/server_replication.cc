// Server: the primary side of replication and the WAIT / WAITAOF waiters.
// The Primary component (backlog, replica links) is created the first time a
// replica attaches, the FullSync component (SYNC / PSYNC, snapshots for
// replicas) on the first SYNC / PSYNC; until then none of this allocates
// anything.
#include <algorithm>
#include <string>
#include <vector>

#include "core/strings.h"
#include "server/logging.h"
#include "server/primary_glue.h"
#include "server/server.h"

namespace ringkv::server {

// ---- WAIT / WAITAOF ----------------------------------------------------------------

WaitRegistry::Progress Server::WaitProgress() const {
  WaitRegistry::Progress p;
  const repl::Primary* primary = primary_.get();
  p.nth_ack = [primary](int64_t n, bool fsynced) -> int64_t { return primary ? primary->NthAck(n, fsynced) : -1; };
  p.aof_on = persistence_.aof().enabled();
  p.aof_synced = persistence_.aof().synced_offset();
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
  rb.Integer(persistence_.aof().enabled() && persistence_.aof().synced_offset() >= spec.aof_target ? 1 : 0);
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
  c.is_replica = true;
  io_->MarkReplication(c.conn, io::Connection::kReplOutput);
  // A replica is sent the stream by offset from the backlog (io::ReplicaSend),
  // which only the main thread's I/O thread can do: its link moves there
  // (between loop turns; what is written to it meanwhile follows in order).
  // A TLS link's bytes must be encrypted on the way out: it stays on its
  // thread and is handed its range by reference (repl::Backlog::RefTo).
  if (c.conn->tls() == nullptr) io_->MoveToMainThread(c.conn);
  EnsureFullSync().OnSyncRequest(c.id(), c.conn, replid, psync_offset, old_sync);
}

repl::PrimaryHost& Server::EnsurePrimaryGlue() {
  if (!primary_glue_) primary_glue_ = std::make_unique<PrimaryGlue>(*this);
  return *primary_glue_;
}

repl::FullSync& Server::EnsureFullSync() {
  if (!full_sync_) full_sync_ = std::make_unique<repl::FullSync>(EnsurePrimaryGlue());
  return *full_sync_;
}

void Server::OnReadable(uint32_t token, int /*result*/) {
  if (full_sync_) full_sync_->OnReadable(token);
}

void Server::OnReplicaAck(Client& c, uint64_t offset, uint64_t fsynced_offset) {
  if (!primary_) return;
  repl::ReplicaLink* link = primary_->Find(c.id());
  if (link == nullptr) return;
  link->stream_on_ack = false;  // after a diskless payload: the replica has loaded it
  link->acked = true;
  if (full_sync_) full_sync_->OnReplicaAck(*link);
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
  if (waited_for_save && full_sync_) full_sync_->OnWaitingReplicaGone();
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
  if (full_sync_) full_sync_->BeforeFlush();
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

void Server::ReplicationCron(int64_t now_ms) {
  repl::PrimaryHost& host = EnsurePrimaryGlue();
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
  settings.diskless_transfer = full_sync_ && full_sync_->transfer_running();
  if (!primary_->Cron(host, settings, now_ms)) return;  // the backlog was freed
  if (full_sync_) full_sync_->StartIfNeeded(now_ms);
}

void Server::ReplicateVerbatim(Argv argv) {
  if (primary_ && !replica_) primary_->FeedRaw(argv);  // a replica only relays its primary's stream
}

}  // namespace ringkv::server
