// Server: SHUTDOWN and SIGTERM / SIGINT, as Redis 7.0 shuts down -- first
// waiting (up to shutdown-timeout seconds, writes paused) for replicas
// behind our offset, so that the writes they miss are not lost with us;
// then the persistence work (PrepareForShutdown, server_persistence.cc).
// Clients that sent SHUTDOWN are blocked meanwhile; SHUTDOWN ABORT, or a
// failure of the persistence work, cancels the shutdown and answers them
// with an error.
#include <signal.h>

#include <algorithm>
#include <vector>

#include "core/strings.h"
#include "server/logging.h"
#include "server/server.h"
#include "server/signalled_shutdown.h"
#include "server/supervision.h"

namespace ringkv::server {
namespace {

const char* ReplicaStateName(repl::ReplicaState state) {
  switch (state) {
    case repl::ReplicaState::kOnline:
      return "online";
    case repl::ReplicaState::kSendBulk:
      return "send_bulk";
    default:
      return "wait_bgsave";
  }
}

// shutdown-on-sigterm / shutdown-on-sigint: "default" or words among
// save|nosave, now, force (the config parser checked them).
ShutdownFlags SignalShutdownFlags(const std::string& configured) {
  ShutdownFlags flags;
  for (std::string_view w : Split(configured, ' ', /*skip_empty=*/true)) {
    if (w == "save") flags.save = ShutdownSave::kSave;
    if (w == "nosave") flags.save = ShutdownSave::kNoSave;
    if (w == "now") flags.now = true;
    if (w == "force") flags.force = true;
  }
  return flags;
}

}  // namespace

void Server::HandleShutdownSignal() {
  const int sig = shutdown_signal_;
  shutdown_signal_ = 0;
  Log(kWarning, StrCat("Received ", sig == SIGINT ? "SIGINT" : "SIGTERM", " scheduling shutdown..."));
  SetSignalledShutdown(true);  // a second SIGINT from now on exits at once
  InitiateShutdown(SignalShutdownFlags(config_->Str(sig == SIGINT ? "shutdown-on-sigint" : "shutdown-on-sigterm")));
}

bool Server::ReadyToShutdown() const {
  if (!primary_) return true;
  for (const auto& r : primary_->replicas()) {
    if (r->state != repl::ReplicaState::kHandshake && r->ack_offset != primary_->offset()) return false;
  }
  return true;
}

Server::ShutdownResult Server::InitiateShutdown(ShutdownFlags flags) {
  if (shutdown_deadline_ms_ != 0) return ShutdownResult::kWaiting;  // the first one's options hold
  // Half a dataset must never overwrite the file it came from.
  if (loading_) flags.save = ShutdownSave::kNoSave;
  shutdown_flags_ = flags;
  Log(kWarning, "User requested shutdown...");
  const int64_t timeout_s = config_->Int("shutdown-timeout");
  if (!flags.now && timeout_s > 0 && !ReadyToShutdown()) {
    shutdown_deadline_ms_ = UnixMs() + timeout_s * 1000;
    // Ask for acknowledgements now (unless the stream is held still, as
    // during a failover), and let no write move our offset meanwhile.
    if (!pause_.active()) get_ack_pending_ = true;
    pause_before_shutdown_ = pause_.window();
    PauseClients(INT64_MAX / 2, /*all=*/false);
    Log(kNotice, "Waiting for replicas before shutting down.");
    return ShutdownResult::kWaiting;
  }
  return FinishShutdown();
}

Server::ShutdownResult Server::FinishShutdown() {
  if (primary_) {
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
                           ", state=", ReplicaStateName(r->state), "."));
    }
    if (replicas > 0) {
      Log(kNotice, StrCat(replicas - lagging, " of ", replicas, " replicas are in sync when shutting down."));
    }
  }
  NotifyStopping();
  if (!PrepareForShutdown(shutdown_flags_.save, shutdown_flags_.force).ok()) {
    Log(kWarning, "Errors trying to shut down the server. Check the logs for more information.");
    CancelShutdown();
    return ShutdownResult::kFailed;
  }
  shutdown_requested_ = true;
  return ShutdownResult::kDone;
}

void Server::CancelShutdown() {
  SetSignalledShutdown(false);
  const bool waited = shutdown_deadline_ms_ != 0;
  shutdown_deadline_ms_ = 0;
  shutdown_flags_ = ShutdownFlags{};
  for (uint64_t id : blocking_.BlockedWith(BlockKind::kShutdown)) {
    Client* c = FindClient(id);
    if (c == nullptr) continue;
    io::ReplyBuilder rb(&ReplyTarget(*c), c->resp);
    rb.Error("ERR Errors trying to SHUTDOWN. Check logs.");
    ++stats_.total_error_replies;
    blocking_.Unblock(*c, UnblockReason::kServed);
  }
  if (!waited) return;
  if (pause_before_shutdown_.until_ms == 0) {
    UnpauseClients();
  } else {  // a CLIENT PAUSE (or a failover) from before: it continues
    pause_.Restore(pause_before_shutdown_);
  }
}

bool Server::AbortShutdown() {
  if (shutdown_deadline_ms_ != 0) {
    CancelShutdown();
  } else if (shutdown_signal_ != 0) {
    // A signal the main loop has not acted on yet (DEBUG PAUSE-CRON holds
    // it): forgotten, as Redis clears its shutdown_asap.
    shutdown_signal_ = 0;
  } else {
    return false;
  }
  Log(kWarning, "Shutdown manually aborted.");
  return true;
}

int64_t Server::shutdown_in_ms(int64_t now_ms) const {
  return shutdown_deadline_ms_ == 0 ? -1 : std::max<int64_t>(0, shutdown_deadline_ms_ - now_ms);
}

void Server::BlockForShutdown(Client& c) {
  auto state = std::make_unique<BlockState>();
  state->kind = BlockKind::kShutdown;
  state->db = c.db;
  blocking_.Block(c, std::move(state));
}

void Server::ShutdownCron(int64_t now_ms) {
  if (now_ms >= shutdown_deadline_ms_ || ReadyToShutdown()) FinishShutdown();
}

}  // namespace ringkv::server
