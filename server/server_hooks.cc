// Server: its side of the components' hooks -- what BlockedClients
// (blocking.h), Shutdown (shutdown.h), Persistence
// (persistence/persistence.h), PrimarySide (primary_side/primary_side.h),
// ReplicaSide (replica_side/replica_side.h), Clients (clients.h) and
// Loading (loading.h) ask of the server;
// Tracking's Delivery and the one-line hooks are inline in server.h. None
// is called once per client command: only when a client blocks, is served,
// times out or is unblocked, while a shutdown starts, waits, finishes or is
// cancelled, when held replies are released, an fsync completes, the fork
// child ends, a replica acts, a load serves a turn, or -- on a replica --
// one of its own keys expires (ReplicaSide's ExecuteMasterCommand, inline,
// runs once per command of the primary's stream).
#include <algorithm>

#include "core/keyspace.h"
#include "core/strings.h"
#include "server/closing_client.h"
#include "server/cluster/cluster_mode.h"
#include "server/server.h"

namespace ringkv::server {

// ---- BlockedClients::Hooks -----------------------------------------------------------

const core::Value* Server::PeekValue(int db, std::string_view key) {
  core::Entry* e = keyspace_.db(db).FindNoTouch(key, clock_.WallMs());
  return e == nullptr ? nullptr : &e->value;
}

void Server::WakeTimerInUs(int64_t us) { io_->WakeTimerInUs(us); }

void Server::ReplyUnblockError(Client& c, std::string_view msg) {
  ClientErrors errors(*this, c);
  io::ReplyBuilder rb(&ReplyTarget(c), c.resp, &errors);
  rb.Error(msg);
}

void Server::ReplyBlockTimeout(Client& c) {
  ClientErrors errors(*this, c);
  io::ReplyBuilder rb(&ReplyTarget(c), c.resp, &errors);
  rb.NullArray();  // for every key-blocking command, BLMOVE included, as in Redis 7.0
}

void Server::RerunBlocked(Client& c, std::span<const std::string_view> argv, int64_t first_call_us,
                          std::string_view served_key) {
  ClientErrors errors(*this, c);
  io::ReplyBuilder rb(&ReplyTarget(c, true), c.resp, &errors);
  const uint64_t start_ticks = Clock::Ticks();
  rerun_first_call_us_ = std::max<int64_t>(0, first_call_us);
  rerun_served_key_ = served_key;
  Call(c, *commands_.Find(argv[0]), argv, rb, clock_.WallMsAt(start_ticks), start_ticks);
  // What it changed of its own tracked keys: told after its reply.
  tracking_.FlushPending(c);
}

void Server::RecordUnblockedLatency(const CommandSpec& spec, int64_t latency_us) {
  latency_.RecordHistogram(spec, latency_us);
}

// ---- Shutdown::Hooks ------------------------------------------------------------------

bool Server::ReplicasCaughtUp() { return primary_side_.ReplicasCaughtUp(); }

ClientPause::Window Server::PauseWritesForShutdown() {
  // Ask for acknowledgements now (unless the stream is held still, as
  // during a failover), and let no write move our offset meanwhile.
  if (!clients_.pause().active()) primary_side_.RequestAcks();
  const ClientPause::Window before = clients_.pause().window();
  clients_.Pause(INT64_MAX / 2, /*all=*/false);
  return before;
}

void Server::RestorePause(const ClientPause::Window& before) {
  if (before.until_ms == 0) {
    clients_.Unpause();
  } else {  // a CLIENT PAUSE (or a failover) from before: it continues
    clients_.pause().Restore(before);
  }
}

void Server::LogReplicasAtShutdown() { primary_side_.LogReplicasAtShutdown(UnixMs()); }

void Server::FailShutdownWaiters() {
  for (uint64_t id : blocking_.BlockedWith(BlockKind::kShutdown)) {
    Client* c = FindClient(id);
    if (c == nullptr) continue;
    io::ReplyBuilder rb(&ReplyTarget(*c), c->resp);
    rb.Error("ERR Errors trying to SHUTDOWN. Check logs.");
    ++stats_.total_error_replies;
    blocking_.Unblock(*c, UnblockReason::kServed);
  }
}

// ---- Persistence::Hooks ---------------------------------------------------------------

void Server::DeliverHeldReplies(uint64_t id, io::OutBuffer& out) {
  Client* c = FindClient(id);
  if (c != nullptr && !c->closing) io_->PrepareWrite(c->conn).Splice(out);
}

void Server::HeldRepliesReleased(uint64_t id) {
  if (Client* c = FindClient(id)) c->held_replies = false;
}

void Server::OnAofDurable() {
  if (!blocking_.waits().empty()) primary_side_.UnblockWaiters();
  // A replica tells its primary at once how far its AOF is durable (WAITAOF).
  replica_side_.OnAofSynced();
}

bool Server::DisklessTransferRunning() { return primary_side_.DisklessTransferRunning(); }

void Server::OnDisklessTransferExited(bool ok) { primary_side_.OnDisklessTransferExited(ok); }

void Server::AbortDisklessTransfer(std::string_view why) { primary_side_.AbortDisklessTransfer(why); }

void Server::OnRdbFileDone(bool ok) { primary_side_.OnRdbFileDone(ok); }

// ---- PrimarySide::Hooks ---------------------------------------------------------------

void Server::CloseReplicaNow(Client& c) { CloseNow(c); }

bool Server::MayRequestAcks() {
  // A replica relays its primary's stream only; a failover asks once.
  const repl::Failover* failover = replica_side_.failover();
  return !replica_side_.is_replica() && (failover == nullptr || !failover->ack_requested());
}

void Server::AcksRequested() {
  if (repl::Failover* failover = replica_side_.failover()) failover->set_ack_requested();
}

// ---- ReplicaSide::Hooks ---------------------------------------------------------------

void Server::PropagateOwnExpiry(int db, std::string_view key) {
  std::string k(key);
  std::string_view del[] = {"DEL", k};
  propagation_.Propagate(db, del);
  KeyDeletedByServer(notify::kExpired, "expired", db, k);
}

// ---- Clients::Hooks ------------------------------------------------------------------

void Server::CloseNow(Client& c) {
  MarkClosing(pubsub_, blocking_, c);
  // Its output is dropped: what a running EXEC still answers goes nowhere.
  c.reply_mode = ReplyMode::kOff;
  io_->CloseNow(c.conn);
}

// As Redis: nothing expires or is evicted while paused (a failover may be
// under way); expired keys look missing until the pause ends.
void Server::PauseStarted() {
  if (keyspace_.expiry_mode() == core::ExpiryMode::kDelete) {
    keyspace_.set_expiry_mode(core::ExpiryMode::kHide);
    clients_.pause().expiry_paused = true;
  }
}

void Server::PauseEnded() {
  if (!clients_.pause().expiry_paused) return;
  clients_.pause().expiry_paused = false;
  if (keyspace_.expiry_mode() == core::ExpiryMode::kHide && !replica_side_.is_replica()) {
    keyspace_.set_expiry_mode(core::ExpiryMode::kDelete);
  }
}

// ---- Loading::Hooks ------------------------------------------------------------------

// Redis's processEventsWhileBlocked during a load: one non-blocking turn of
// the main loop, in which only commands flagged `loading` run.
bool Server::ServeWhileLoading() {
  io_->ProcessEventsWhileBusy(nullptr);
  // The cluster bus too: PINGs are answered (a replica's PONGs announce
  // offset 0 during its full sync), so the load is not taken for a
  // failure. Its cron waits for the end.
  if (cluster_) cluster_->OnBusEvents();
  return !shutdown_.stopping();
}

void Server::RestoreReplicationHistory(const RdbLoadStats& loaded, bool as_replica) {
  if (as_replica) {
    // A replica restarting from its own save continues where it was: the
    // file's replication id and offset become ours, so PSYNC can resume.
    repl_ids_.replid = loaded.repl_id;
    repl_ids_.offset = loaded.repl_offset;
    primary_side_.CreateBacklogAt(loaded.repl_offset);
    restored_stream_db_ = loaded.repl_stream_db;
  } else {
    primary_side_.RestoreHistoryAsPrimary(loaded.repl_id, loaded.repl_offset);
  }
}

void Server::FeedExpiredAtLoad(int db, Argv argv) {
  // With a restored history the replicas hold these keys: they go through
  // the stream, as Redis feeds them to its new backlog.
  if (repl::Primary* primary = primary_side_.primary(); primary != nullptr) primary->Feed(db, argv);
}

}  // namespace ringkv::server
