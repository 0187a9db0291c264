#include "server/shutdown.h"

#include <signal.h>

#include <algorithm>
#include <string>

#include "core/strings.h"
#include "server/clock.h"
#include "server/config.h"
#include "server/logging.h"
#include "server/signalled_shutdown.h"
#include "server/supervision.h"

namespace ringkv::server {

ShutdownFlags SignalShutdownFlags(std::string_view configured) {
  ShutdownFlags flags;
  for (std::string_view w : Split(configured, ' ', /*skip_empty=*/true)) {
    if (w == "save") flags.save = ShutdownSave::kSave;
    if (w == "nosave") flags.save = ShutdownSave::kNoSave;
    if (w == "now") flags.now = true;
    if (w == "force") flags.force = true;
  }
  return flags;
}

void Shutdown::HandleSignal() {
  const int sig = signal_;
  signal_ = 0;
  Log(kWarning, StrCat("Received ", sig == SIGINT ? "SIGINT" : "SIGTERM", " scheduling shutdown..."));
  SetSignalledShutdown(true);  // a second SIGINT from now on exits at once
  Initiate(SignalShutdownFlags(config_.Str(sig == SIGINT ? "shutdown-on-sigint" : "shutdown-on-sigterm")));
}

Shutdown::Result Shutdown::Initiate(ShutdownFlags flags) {
  if (deadline_ms_ != 0) return Result::kWaiting;  // the first one's options hold
  // Half a dataset must never overwrite the file it came from.
  if (hooks_.LoadingDataset()) flags.save = ShutdownSave::kNoSave;
  flags_ = flags;
  Log(kWarning, "User requested shutdown...");
  const int64_t timeout_s = config_.Int("shutdown-timeout");
  if (!flags.now && timeout_s > 0 && !hooks_.ReplicasCaughtUp()) {
    deadline_ms_ = UnixMs() + timeout_s * 1000;
    pause_before_ = hooks_.PauseWritesForShutdown();
    Log(kNotice, "Waiting for replicas before shutting down.");
    return Result::kWaiting;
  }
  return Finish();
}

Shutdown::Result Shutdown::Finish() {
  hooks_.LogReplicasAtShutdown();
  NotifyStopping();
  if (!hooks_.PrepareForShutdown(flags_.save, flags_.force).ok()) {
    Log(kWarning, "Errors trying to shut down the server. Check the logs for more information.");
    Cancel();
    return Result::kFailed;
  }
  requested_ = true;
  hooks_.StopAccepting();  // as Redis: a client connecting now is refused
  return Result::kDone;
}

void Shutdown::Cancel() {
  SetSignalledShutdown(false);
  const bool waited = deadline_ms_ != 0;
  deadline_ms_ = 0;
  flags_ = ShutdownFlags{};
  hooks_.FailShutdownWaiters();
  if (waited) hooks_.RestorePause(pause_before_);
}

bool Shutdown::Abort() {
  if (deadline_ms_ != 0) {
    Cancel();
  } else if (signal_ != 0) {
    // A signal the main loop has not acted on yet (DEBUG PAUSE-CRON holds
    // it): forgotten, as Redis clears its shutdown_asap.
    signal_ = 0;
  } else {
    return false;
  }
  Log(kWarning, "Shutdown manually aborted.");
  return true;
}

int64_t Shutdown::in_ms(int64_t now_ms) const {
  return deadline_ms_ == 0 ? -1 : std::max<int64_t>(0, deadline_ms_ - now_ms);
}

void Shutdown::Cron(int64_t now_ms) {
  if (now_ms >= deadline_ms_ || hooks_.ReplicasCaughtUp()) Finish();
}

}  // namespace ringkv::server
