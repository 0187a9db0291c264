// PrimarySide: the backlog's life, replicas' requests, acknowledgements and
// drops, the cron and end-of-turn flush, the min-replicas gate and WAIT /
// WAITAOF. Its repl::PrimaryHost side is in primary_side_host.cc.
#include "server/primary_side/primary_side.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "core/strings.h"
#include "io/reply_builder.h"
#include "io/thread_check.h"
#include "server/logging.h"

namespace ringkv::server {

PrimarySide::PrimarySide(Hooks& hooks, Config& config, repl::ReplicationIds& ids, Persistence& persistence,
                         BlockedClients& blocking, ServerStats& stats, core::Keyspace& keyspace,
                         const OutputLimits& limits)
    : hooks_(hooks),
      config_(config),
      ids_(ids),
      persistence_(persistence),
      blocking_(blocking),
      stats_(stats),
      keyspace_(keyspace),
      limits_(limits) {}

PrimarySide::~PrimarySide() = default;

void PrimarySide::BindConfig() {
  config_.Bind("min-replicas-to-write", &min_replicas_to_write_);
  config_.Bind("min-replicas-max-lag", &min_replicas_max_lag_);
  // A new repl-backlog-size applies at once, as Redis resizes its backlog in
  // CONFIG SET: the end of this loop turn already trims to it, so a replica
  // reconnecting right after writes that overflowed it gets a full resync,
  // not a partial one from bytes Redis would no longer hold. A CONFIG SET
  // under 16kb gets 16kb, as in Redis (a start-up value is kept as it is).
  config_.OnChange("repl-backlog-size", [this] {
    config_.StoreAppliedInt("repl-backlog-size", std::max<int64_t>(config_.Int("repl-backlog-size"), 16 * 1024));
    if (primary_) primary_->backlog().set_capacity(static_cast<size_t>(config_.Int("repl-backlog-size")));
    return absl::OkStatus();
  });
}

// ---- the backlog and the history ------------------------------------------------------

repl::Primary& PrimarySide::EnsurePrimary() {
  if (!primary_) {
    // A backlog created from scratch starts a new history, as in Redis: a new
    // replication id and no secondary one.
    const int64_t offset = ids_.offset;
    ids_ = repl::ReplicationIds::Fresh();
    ids_.offset = offset;
    CreateBacklogAt(offset);
    Log(kNotice, "Replication backlog created, my new replication IDs are '" + ids_.replid + "' and '" +
                     ids_.replid2 + "'");
  }
  return *primary_;
}

void PrimarySide::RestoreHistoryAsPrimary(const std::string& replid, int64_t offset) {
  // Redis 7.0: the old history becomes the secondary id, valid up to the
  // offset the file was saved at, and a new id starts there; the backlog
  // starts empty at that offset. Replicas continue with PSYNC.
  ids_ = repl::ReplicationIds::Fresh();
  ids_.replid2 = replid;
  ids_.second_offset = offset + 1;
  ids_.offset = offset;
  CreateBacklogAt(offset);
}

void PrimarySide::CreateBacklogAt(int64_t offset) {
  primary_ = std::make_unique<repl::Primary>(static_cast<size_t>(config_.Int("repl-backlog-size")),
                                             static_cast<uint64_t>(offset));
}

void PrimarySide::DropBacklog() {
  if (!primary_) return;
  DisconnectReplicas();
  primary_.reset();
}

// ---- replicas ----------------------------------------------------------------------------

void PrimarySide::StartReplicaSync(Client& c, std::string_view replid, int64_t psync_offset, bool old_sync) {
  c.is_replica = true;
  io::IoSystem& io = hooks_.ReplicationIo();
  io.MarkReplication(c.conn, io::Connection::kReplOutput);
  // A replica is sent the stream by offset from the backlog (io::ReplicaSend),
  // which only the main thread's I/O thread can do: its link moves there
  // (between loop turns; what is written to it meanwhile follows in order).
  // A TLS link's bytes must be encrypted on the way out: it stays on its
  // thread and is handed its range by reference (repl::Backlog::RefTo).
  if (c.conn->tls() == nullptr) io.MoveToMainThread(c.conn);
  EnsureFullSync().OnSyncRequest(c.id(), c.conn, replid, psync_offset, old_sync);
}

repl::FullSync& PrimarySide::EnsureFullSync() {
  if (!full_sync_) full_sync_ = std::make_unique<repl::FullSync>(static_cast<repl::PrimaryHost&>(*this));
  return *full_sync_;
}

void PrimarySide::OnReplicaAck(Client& c, uint64_t offset, uint64_t fsynced_offset, int64_t now_ms) {
  if (!primary_) return;
  repl::ReplicaLink* link = primary_->Find(c.id());
  if (link == nullptr) return;
  link->stream_on_ack = false;  // after a diskless payload: the replica has loaded it
  link->acked = true;
  if (full_sync_) full_sync_->OnReplicaAck(*link);
  link->ack_offset = std::max(link->ack_offset, offset);
  link->fack_offset = std::max(link->fack_offset, fsynced_offset);
  link->last_ack_ms = now_ms;
  if (!blocking_.waits().empty()) UnblockWaiters();
}

void PrimarySide::ForgetReplica(uint64_t client_id) {
  if (!primary_) return;
  const repl::ReplicaLink* link = primary_->Find(client_id);
  const bool waited_for_save = link != nullptr && link->state == repl::ReplicaState::kWaitBgsaveEnd;
  primary_->Detach(client_id);
  if (waited_for_save && full_sync_) full_sync_->OnWaitingReplicaGone();
}

void PrimarySide::DropReplica(uint64_t client_id) {
  ForgetReplica(client_id);
  if (Client* c = hooks_.ReplicaClient(client_id)) {
    Log(kWarning, StrCat("Connection with replica ", c->conn->peer.ToString(), " lost."));
    hooks_.CloseReplicaNow(*c);
  }
}

void PrimarySide::DisconnectReplicas() {
  if (!primary_) return;
  std::vector<uint64_t> ids;
  for (const auto& link : primary_->replicas()) {
    // A connection still in its handshake (the one asking us to take over,
    // say) is not a replica yet: it stays.
    if (link->state != repl::ReplicaState::kHandshake) ids.push_back(link->client_id);
  }
  for (uint64_t id : ids) DropReplica(id);
}

bool PrimarySide::ReplicasCaughtUp() const {
  if (!primary_) return true;
  for (const auto& r : primary_->replicas()) {
    if (r->state != repl::ReplicaState::kHandshake && r->ack_offset != primary_->offset()) return false;
  }
  return true;
}

void PrimarySide::LogReplicasAtShutdown(int64_t now_ms) const {
  if (!primary_) return;
  const int64_t now_s = now_ms / 1000;
  int replicas = 0, lagging = 0;
  for (const auto& r : primary_->replicas()) {
    if (r->state == repl::ReplicaState::kHandshake) continue;
    ++replicas;
    if (r->ack_offset == primary_->offset()) continue;
    ++lagging;
    const int64_t lag = r->state == repl::ReplicaState::kOnline ? now_s - r->last_ack_ms / 1000 : 0;
    Log(kWarning, StrCat("Lagging replica ", r->ip(), ":", r->listening_port, " reported offset ",
                         primary_->offset() - r->ack_offset, " behind master, lag=", lag,
                         ", state=", repl::ReplicaStateName(r->state), "."));
  }
  if (replicas > 0) {
    Log(kNotice, StrCat(replicas - lagging, " of ", replicas, " replicas are in sync when shutting down."));
  }
}

int PrimarySide::GoodReplicas(int64_t now_ms) const {
  return primary_ ? primary_->GoodReplicas(now_ms, min_replicas_max_lag_) : 0;
}

// ---- WAIT / WAITAOF --------------------------------------------------------------------

WaitRegistry::Progress PrimarySide::WaitProgress() const {
  WaitRegistry::Progress p;
  const repl::Primary* primary = primary_.get();
  p.nth_ack = [primary](int64_t n, bool fsynced) -> int64_t { return primary ? primary->NthAck(n, fsynced) : -1; };
  p.aof_on = persistence_.aof().enabled();
  p.aof_synced = persistence_.aof().synced_offset();
  return p;
}

void PrimarySide::ReplyToWaiter(Client& c, const WaitSpec& spec) {
  io::ReplyBuilder rb(&hooks_.WaiterReplyTarget(c), c.resp);
  const int64_t replicas = primary_ ? primary_->CountAcked(spec.repl_target, spec.aof) : 0;
  if (!spec.aof) {
    rb.Integer(replicas);
    return;
  }
  rb.ArrayHeader(2);
  rb.Integer(persistence_.aof().enabled() && persistence_.aof().synced_offset() >= spec.aof_target ? 1 : 0);
  rb.Integer(replicas);
}

void PrimarySide::WaitFor(Client& c, const WaitSpec& spec, int64_t deadline_us) {
  const WaitRegistry::Progress progress = WaitProgress();
  // Inside EXEC (or from the AOF) the answer is the count now, as Redis's.
  if (WaitRegistry::Satisfied(spec, progress) || !hooks_.MayBlockWaiter(c)) {
    ReplyToWaiter(c, spec);
    return;
  }
  if (spec.numreplicas > 0 && primary_) get_ack_pending_ = true;  // ACKs in one round trip
  blocking_.BlockOnWait(c, spec, deadline_us, progress);
}

void PrimarySide::UnblockWaiters() {
  std::vector<WaitRegistry::Taken> done;
  blocking_.waits().Take(WaitProgress(), &done);
  for (const WaitRegistry::Taken& w : done) {
    // The commands an earlier one resumed may have ended this wait (CLIENT
    // UNBLOCK answered it), and the client may wait again: that is another
    // wait, which this release must not answer or end.
    if (!blocking_.WaitsOn(w.id, w.seq)) continue;
    Client* c = hooks_.ReplicaClient(w.id);
    if (c == nullptr) continue;
    ReplyToWaiter(*c, w.spec);
    blocking_.Unblock(*c, UnblockReason::kServed);
  }
}

// ---- the main loop -----------------------------------------------------------------------

void PrimarySide::Cron(int64_t now_ms) {
  RINGKV_DCHECK_MAIN_THREAD();
  if (primary_) {
    repl::PrimaryCronSettings settings;
    settings.hz = hooks_.CronHz();
    settings.start_time_ms = hooks_.ServingSinceMs();
    settings.backlog_ttl_s = config_.Int("repl-backlog-ttl");
    settings.ping_period_s = config_.Int("repl-ping-replica-period");
    settings.timeout_ms = config_.Int("repl-timeout") * 1000;
    const Config::OutputBufferLimit& replica_limit = limits_.replica();
    settings.soft_limit_bytes = replica_limit.soft;
    settings.soft_limit_ms = replica_limit.soft_seconds * 1000;
    settings.is_replica = hooks_.RelaysPrimaryStream();
    settings.stream_frozen = hooks_.StreamFrozen();
    settings.diskless_transfer = full_sync_ && full_sync_->transfer_running();
    // False: the backlog was freed (FreeBacklog), no full sync starts.
    if (primary_->Cron(*this, settings, now_ms) && full_sync_) full_sync_->StartIfNeeded(now_ms);
  }
  if (full_sync_ && full_sync_->has_sync_rdb_file()) full_sync_->RemoveRdbIfUseless();
}

void PrimarySide::FlushReplicas() {
  RINGKV_DCHECK_MAIN_THREAD();
  if (full_sync_) full_sync_->BeforeFlush();
  // During a failover the stream is frozen after one GETACK, so the target's
  // acknowledgement can catch up with the offset (as Redis pauses it).
  // The request stays pending while no replica is online yet (one still
  // syncing): it is sent as soon as there is one to answer.
  // A replica relays its primary's stream only: nothing of its own.
  if (get_ack_pending_ && primary_->online() > 0 && hooks_.MayRequestAcks()) {
    get_ack_pending_ = false;
    const std::string_view getack[] = {"REPLCONF", "GETACK", "*"};
    primary_->FeedRaw(getack);
    hooks_.AcksRequested();
  }
  std::vector<uint64_t> drop;
  // A replica needing more than the replica class's hard output limit
  // (client-output-buffer-limit slave, 256 MB by default; 0: none) is
  // dropped and will resync, rather than pinning memory without bound. The
  // limit is never below repl-backlog-size, as in Redis 7.0: what the
  // backlog holds anyway costs nothing more, and a replica cut right after
  // its partial resync would only resync again.
  const Config::OutputBufferLimit& replica_limit = limits_.replica();
  const size_t max_lag = replica_limit.hard > 0 ? static_cast<size_t>(replica_limit.hard) : SIZE_MAX;
  primary_->Flush(hooks_.ReplicationIo(), std::max<size_t>(max_lag, primary_->backlog().capacity()), &drop);
  for (uint64_t id : drop) {
    Log(kWarning, "Replica fell behind the replication backlog: disconnecting it (it will resync)");
    DropReplica(id);
  }
}

}  // namespace ringkv::server
