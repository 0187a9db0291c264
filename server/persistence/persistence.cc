#include "server/persistence/persistence.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_format.h"
#include "core/strings.h"
#include "io/thread_check.h"
#include "server/clock.h"
#include "server/logging.h"
#include "server/persistence/rdb_snapshot.h"
#include "server/supervision.h"

namespace ringkv::server {

Persistence::Persistence(Hooks& hooks, Config& config, core::Keyspace& keyspace, uint64_t& dirty,
                         LatencyMonitor& latency)
    : hooks_(hooks), config_(config), dirty_(&dirty) {
  rdb_ = std::make_unique<RdbSaver>(&config_, &keyspace, &child_);
  aof_ = std::make_unique<Aof>(
      &config_, &keyspace, &child_, [this](int fd, uint32_t token) { hooks_.SubmitFsync(fd, token); },
      [this](std::vector<std::string> paths) { hooks_.UnlinkInBackground(std::move(paths)); });
  rdb_->set_latency_monitor(&latency);
  aof_->set_latency_monitor(&latency);
}

// Save points, the AOF's switch and fsync policy, the working directory,
// and the key-load-delay test hook (every RDB load from now on, a
// replica's too, as in Redis).
void Persistence::BindConfig() {
  Config& c = config_;
  c.Bind("save", [this] { has_save_points_ = !ParseSavePoints(config_.Str("save")).empty(); });
  c.Bind("key-load-delay", [this] { SetKeyLoadDelay(static_cast<int>(config_.Int("key-load-delay"))); });
  c.Bind("aof-timestamp-enabled", [this] { aof_->set_timestamps(config_.Bool("aof-timestamp-enabled")); });
  // Turning the AOF's garbage collection back on deletes the history kept
  // meanwhile, as Redis does.
  c.Bind("aof-disable-auto-gc", [this] {
    if (!config_.Bool("aof-disable-auto-gc")) aof_->DeleteHistory();
  });
  c.OnChange("appendonly", [this] { return SetAppendOnly(config_.Bool("appendonly")); });
  c.OnChange("appendfsync", [this] {
    aof_->ReloadPolicy();
    RefreshAlways();
    return absl::OkStatus();
  });
  c.OnChange("dir", [this]() -> absl::Status {
    if (chdir(config_.Str("dir").c_str()) != 0) return absl::InvalidArgumentError(std::strerror(errno));
    return absl::OkStatus();
  });
}

void Persistence::ReapChild(int64_t now_ms) {
  ChildResult r;
  if (!child_.Poll(&r)) return;
  OnChildEnded(r, now_ms);
}

void Persistence::StopInProcessChild(std::string_view why) {
  if (!child_.in_process()) return;
  Log(kWarning, std::string(why));
  ChildResult r;
  child_.Kill(&r);
  OnChildEnded(r, UnixMs());
}

void Persistence::OnChildEnded(const ChildResult& r, int64_t now_ms) {
  if (r.type == ChildType::kRdb && hooks_.DisklessTransferRunning()) {
    hooks_.OnDisklessTransferExited(r.ok);  // streamed to replicas: no file, no save stats
  } else if (r.type == ChildType::kRdb) {
    rdb_->OnChildDone(r, now_ms, dirty_);
    hooks_.OnRdbFileDone(r.ok);
  } else if (r.type == ChildType::kAof) {
    aof_->OnRewriteDone(r);
    RefreshAlways();
  }
}

void Persistence::ReleaseDurableReplies(bool from_fsync) {
  if (durable_.clients() == 0) return;
  durable_.Release(
      aof_->reply_release_offset(), [this](uint64_t id, io::OutBuffer& out) { hooks_.DeliverHeldReplies(id, out); },
      [this, from_fsync](uint64_t id) {
        hooks_.HeldRepliesReleased(id);
        if (from_fsync) window_.AddReleased(id);
      });
}

void Persistence::OnFsyncDone(uint32_t token, int result) {
  // With appendfsync always the next fsync is held until the window
  // decides (OpenFsyncWindow).
  const bool hold = aof_always_;
  if (aof_->OnFsyncDone(token, result, hold) || result < 0) AfterAofSync();
  if (hold) OpenFsyncWindow();
}

// The cap: half of the last fsync's time. The released clients come back
// within a round trip plus the server's time for their commands; a longer
// wait leaves the disk idle while every client waits (26.1).
void Persistence::OpenFsyncWindow() {
  const int64_t cap_us = aof_->last_fsync_us() / 2;
  if (window_.Open(SteadyUs(), cap_us)) {
    hooks_.WakeInUs(cap_us);
  } else {
    aof_->ResumeSyncs();
  }
}

void Persistence::CloseFsyncWindowIfDue() {
  if (window_.Due(SteadyUs())) CloseFsyncWindow();
}

void Persistence::CloseFsyncWindow() {
  window_.Close();
  aof_->ResumeSyncs();
}

void Persistence::AfterAofSync() {
  if (aof_always_ && aof_->sync_error() != 0) {
    // As Redis: with appendfsync always a failed fsync cannot be recovered
    // from (the page cache state is unknown), so stop rather than lie.
    Log(kWarning, StrCat("Can't persist the AOF (fsync: ", std::strerror(aof_->sync_error()),
                         ") and the AOF fsync policy is 'always'. Exiting..."));
    _exit(1);
  }
  ReleaseDurableReplies(/*from_fsync=*/true);
  hooks_.OnAofDurable();
}

void Persistence::EndTurn() {
  if (aof_always_ && aof_->write_failed()) {
    // As Redis: with appendfsync always, a write that cannot reach the AOF
    // cannot be acknowledged, and held replies would wait forever.
    Log(kWarning, StrCat("Can't recover from AOF write error when the AOF fsync policy is 'always' (",
                         std::strerror(aof_->write_errno()), "). Exiting..."));
    _exit(1);
  }
  ++turn_;
}

std::string Persistence::Error() const {
  if (!rdb_->last_bgsave_ok() && has_save_points_ && config_.Bool("stop-writes-on-bgsave-error")) {
    return "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. "
           "Commands that may modify the data set are disabled, because this instance is configured to report "
           "errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the "
           "Redis logs for details about the RDB error.";
  }
  if (aof_->enabled() && aof_->write_failed()) {
    return StrCat("MISCONF Errors writing to the AOF file: ", std::strerror(aof_->write_errno()));
  }
  return {};
}

absl::Status Persistence::SetAppendOnly(bool on) {
  if (on) {
    if (absl::Status s = aof_->Enable(UnixMs()); !s.ok()) return s;
  } else {
    aof_->Disable();
    ReleaseDurableReplies();
  }
  RefreshAlways();
  return absl::OkStatus();
}

void Persistence::RestartAof(int64_t now_ms) {
  if (!aof_->enabled()) return;
  aof_->Disable();
  if (absl::Status s = aof_->Enable(now_ms); !s.ok()) Log(kWarning, std::string(s.message()));
  RefreshAlways();
}

absl::Status Persistence::PrepareForShutdown(ShutdownSave save, bool force) {
  if (aof_->state() == AofState::kWaitRewrite && !force) {
    Log(kWarning, "Writing initial AOF, can't exit.");
    NotifyStatus("Writing initial AOF, can't exit.");
    return absl::FailedPreconditionError("Writing initial AOF, can't exit.");
  }
  if (child_.running()) {
    Log(kWarning, child_.type() == ChildType::kRdb ? "There is a child saving an .rdb. Killing it!"
                                                   : "There is a child rewriting the AOF. Killing it!");
    KillChild(/*remove_temp_file=*/true);
  }
  if (aof_->enabled()) {
    Log(kNotice, "Calling fsync() on the AOF file.");
    if (absl::Status s = aof_->FlushAndSync(); !s.ok()) {
      Log(kWarning, std::string(s.message()));
      if (!force) return s;
    }
    ReleaseDurableReplies();
  }
  const bool do_save = save == ShutdownSave::kSave || (save == ShutdownSave::kDefault && has_save_points_);
  if (do_save) {
    Log(kNotice, "Saving the final RDB snapshot before exiting.");
    NotifyStatus("Saving the final RDB snapshot");
    if (absl::Status s = rdb_->Save(UnixMs(), dirty_); !s.ok()) {
      Log(kWarning, "Error trying to save the DB, can't exit.");
      NotifyStatus("Error trying to save the DB, can't exit.");
      if (!force) return s;
    }
  }
  return absl::OkStatus();
}

void Persistence::BeforeFlushAll() {
  RINGKV_DCHECK_MAIN_THREAD();
  // As Redis, FLUSHALL stops a running RDB child: its snapshot is obsolete.
  // Replicas it was for start over with a full sync of the new dataset.
  if (hooks_.DisklessTransferRunning()) {
    hooks_.AbortDisklessTransfer("FLUSHALL: stopping the diskless transfer to replicas");
  } else if (child_.type() == ChildType::kRdb) {
    KillChild(/*remove_temp_file=*/true);
    hooks_.OnRdbFileDone(false);  // its replicas (if any) are dropped
  } else if (child_.type() == ChildType::kAof && child_.in_process()) {
    // Not Redis's (a forked rewrite goes on with its copy), but an
    // in-process one would write out every database being flushed first.
    StopInProcessChild("Stopping the AOF rewrite: FLUSHALL empties the dataset");
  }
}

void Persistence::AfterFlushAll(int64_t now_ms) {
  if (has_save_points_) (void)rdb_->Save(now_ms, dirty_, /*counted=*/false);
}

void Persistence::KillChild(bool remove_temp_file) {
  if (!child_.running()) return;
  ChildResult r;
  child_.Kill(&r);
  if (!remove_temp_file || r.in_process) return;  // in-process work removes its own
  const char* pattern = r.type == ChildType::kAof ? "temp-rewriteaof-bg-%d.aof" : "temp-%d.rdb";
  ::unlink(absl::StrFormat(pattern, static_cast<int>(r.pid)).c_str());
}

}  // namespace ringkv::server
