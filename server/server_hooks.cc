// Server: its side of the components' hooks -- what BlockedClients
// (blocking.h), Shutdown (shutdown.h) and Persistence
// (persistence/persistence.h) ask of the server; Tracking's Delivery is
// inline in server.h. None is called once per command: only when a client
// blocks, is served, times out or is unblocked, while a shutdown starts,
// waits, finishes or is cancelled, when held replies are released, an
// fsync completes or the fork child ends.
#include <algorithm>

#include "core/keyspace.h"
#include "core/strings.h"
#include "server/logging.h"
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

void Server::RerunBlocked(Client& c, std::span<const std::string_view> argv) {
  ClientErrors errors(*this, c);
  io::ReplyBuilder rb(&ReplyTarget(c, true), c.resp, &errors);
  const uint64_t start_ticks = Clock::Ticks();
  Call(c, *commands_.Find(argv[0]), argv, rb, clock_.WallMsAt(start_ticks), start_ticks);
  // What it changed of its own tracked keys: told after its reply.
  if (c.tracking) tracking_.FlushPending(c);
}

void Server::CountUnblockedCommand(const CommandSpec& spec, int64_t latency_us) {
  ++stats_.total_commands;
  latency_.RecordHistogram(spec, latency_us);
}

// ---- Shutdown::Hooks ------------------------------------------------------------------

bool Server::ReplicasCaughtUp() {
  if (!primary_) return true;
  for (const auto& r : primary_->replicas()) {
    if (r->state != repl::ReplicaState::kHandshake && r->ack_offset != primary_->offset()) return false;
  }
  return true;
}

ClientPause::Window Server::PauseWritesForShutdown() {
  // Ask for acknowledgements now (unless the stream is held still, as
  // during a failover), and let no write move our offset meanwhile.
  if (!pause_.active()) get_ack_pending_ = true;
  const ClientPause::Window before = pause_.window();
  PauseClients(INT64_MAX / 2, /*all=*/false);
  return before;
}

void Server::RestorePause(const ClientPause::Window& before) {
  if (before.until_ms == 0) {
    UnpauseClients();
  } else {  // a CLIENT PAUSE (or a failover) from before: it continues
    pause_.Restore(before);
  }
}

void Server::LogReplicasAtShutdown() {
  if (!primary_) return;
  const int64_t now_s = UnixMs() / 1000;
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
  if (!blocking_.waits().empty()) UnblockWaiters(UnixMs());
  // A replica tells its primary at once how far its AOF is durable (WAITAOF).
  if (replica_) replica_->OnAofSynced(persistence_.aof().synced_offset());
}

bool Server::DisklessTransferRunning() { return full_sync_ && full_sync_->transfer_running(); }

void Server::OnDisklessTransferExited(bool ok) { full_sync_->OnTransferChildExited(ok); }

void Server::AbortDisklessTransfer(std::string_view why) { full_sync_->AbortTransfer(why); }

void Server::OnRdbFileDone(bool ok) {
  if (full_sync_) full_sync_->OnSaveDone(ok);
}

}  // namespace ringkv::server
