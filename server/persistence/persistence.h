// Persistence: the server's RDB snapshots, its AOF and the one fork child,
// with their glue -- the persistence settings, reaping the child, the
// replies held for an fsync (appendfsync always) and their release, the
// MISCONF error, and the persistence steps of CONFIG SET appendonly,
// SHUTDOWN and FLUSHALL.
//
// With appendfsync always, a completed fsync that released clients holds
// the next one open until they have written again, or until half the last
// fsync's time has passed (FsyncWindow; docs/performance.md 26.1).
//
// It owns `RdbSaver` (SAVE, BGSAVE, save points, INFO's rdb_* fields), `Aof`
// (files, feed, fsyncs, rewrite), `ChildProcess` and `DurableReplies`. What
// it needs from the server -- the fsync ring, the clients' connections, the
// waiters on AOF durability and the full syncs that share the fork child --
// comes through its Hooks, which the Server implements; the keyspace, the
// config, the dirty counter and the latency monitor are borrowed at
// construction and must outlive it. Not here: the start-up load and DEBUG
// RELOAD / LOADAOF (they run command handlers and restore replication
// history: the Loading component, server/loading.h) and the propagation of writes
// (server/propagation.h), which feeds `aof()`.
//
//   Persistence persistence(hooks, config, keyspace, stats.dirty, latency);
//   persistence.BindConfig();
//   if (persistence.MustHoldReply(writes)) out = &persistence.HeldReplyTarget(id);
//   persistence.ReapChild(now_ms);  // each cron tick, then Cron(now_ms)
//
// Cost: the per-reply and per-command checks (MustHoldReply, RequireDurable,
// ok()) are inline and make no virtual call; a hook is called per fsync
// submitted, per client whose held replies are released, per completed
// fsync (and its window's wake-up) and when a child ends or FLUSHALL stops
// one. The fsync window costs nothing unless appendfsync is always: it is
// touched on the held-reply path and, while open, once per loop turn.
//
// Thread-safety: main thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "core/keyspace.h"
#include "io/out_buffer.h"
#include "server/config.h"
#include "server/latency_monitor.h"
#include "server/persistence/aof.h"
#include "server/persistence/child_process.h"
#include "server/persistence/durable_replies.h"
#include "server/persistence/fsync_window.h"
#include "server/persistence/rdb_saver.h"
#include "server/shutdown.h"

namespace ringkv::server {

class Persistence {
 public:
  // What persistence asks of the server.
  class Hooks {
   public:
    // Queues an fdatasync of `fd` on the I/O ring; its completion comes back
    // as OnFsyncDone(token, result).
    virtual void SubmitFsync(int fd, uint32_t token) = 0;
    // Held replies of client `id` are durable now: `out` goes to its
    // connection (spliced), unless the client is gone or closing.
    virtual void DeliverHeldReplies(uint64_t id, io::OutBuffer& out) = 0;
    // Client `id` has no reply held any more.
    virtual void HeldRepliesReleased(uint64_t id) = 0;
    // The main loop must run a turn (and BeforeSleep) within `us`
    // microseconds even if nothing arrives: the fsync window's cap.
    virtual void WakeInUs(int64_t us) = 0;
    // More AOF bytes are durable (or an fsync failed), after the held
    // replies went out: WAITAOF's waiters, a replica's FACK.
    virtual void OnAofDurable() = 0;
    // The fork child is streaming a diskless transfer to replicas (it is an
    // RDB child, but writes no file).
    virtual bool DisklessTransferRunning() = 0;
    // That child exited (`ok`: status 0).
    virtual void OnDisklessTransferExited(bool ok) = 0;
    // FLUSHALL stops that transfer (`why` is logged).
    virtual void AbortDisklessTransfer(std::string_view why) = 0;
    // An RDB child that wrote a file ended (`ok`: the file is complete), or
    // was stopped by FLUSHALL (false): the full syncs waiting for a snapshot.
    virtual void OnRdbFileDone(bool ok) = 0;
    // Unlinks `paths` off the main thread (the AOF's history files: a
    // large file can take long to delete).
    virtual void UnlinkInBackground(std::vector<std::string> paths) = 0;

   protected:
    ~Hooks() = default;
  };

  // Makes the RdbSaver and the (disabled) Aof. REQUIRES: the arguments
  // outlive this object; `dirty` is the server's write counter (SAVE sets
  // it back, save points read it).
  Persistence(Hooks& hooks, Config& config, core::Keyspace& keyspace, uint64_t& dirty, LatencyMonitor& latency);
  Persistence(const Persistence&) = delete;
  Persistence& operator=(const Persistence&) = delete;

  // Binds save points, key-load-delay, the AOF's settings (appendonly,
  // appendfsync, aof-timestamp-enabled, aof-disable-auto-gc) and dir.
  void BindConfig();

  RdbSaver& rdb() { return *rdb_; }
  const RdbSaver& rdb() const { return *rdb_; }
  Aof& aof() { return *aof_; }
  const Aof& aof() const { return *aof_; }
  ChildProcess& child() { return child_; }
  const ChildProcess& child() const { return child_; }
  // Whether `save` has save points.
  bool has_save_points() const { return has_save_points_; }
  // No save points and no AOF (Redis's allPersistenceDisabled).
  bool disabled() const { return !has_save_points_ && !aof_->enabled(); }

  // ---- the reply path (appendfsync always) -----------------------------------------
  // Whether a reply written now may depend on AOF bytes not yet fsynced
  // (`writes`: its command is a write). On the path of every reply: inlined.
  [[gnu::always_inline]] bool MustHoldReply(bool writes) const {
    return aof_always_ && (writes || aof_->has_unsynced());
  }
  // The held segment of client `id` for this loop turn.
  // A released client back with a new reply counts for the fsync window.
  io::OutBuffer& HeldReplyTarget(uint64_t id) {
    if (window_.open()) window_.Returned(id);
    return durable_.Target(id, turn_, aof_->fed_offset());
  }
  // After a command of a client with held replies: they need what it fed.
  void RequireDurable(uint64_t id) { durable_.Require(id, aof_->fed_offset()); }
  // The client is gone: its held replies are dropped.
  void DropHeldReplies(uint64_t id) {
    durable_.Drop(id);
    if (window_.open()) window_.Returned(id);
  }
  uint64_t held_bytes(uint64_t id) const { return durable_.held_bytes(id); }

  // ---- the main loop ------------------------------------------------------------------
  // Reaps an ended child: the save's or rewrite's outcome, or the hooks'
  // for a diskless transfer and the full syncs waiting for a file.
  void ReapChild(int64_t now_ms);
  // The AOF's and the save points' cron.
  void Cron(int64_t now_ms) {
    aof_->Cron(now_ms);
    rdb_->Cron(now_ms, *dirty_);
  }
  // An fsync completion from the ring.
  void OnFsyncDone(uint32_t token, int result);
  // Before the loop sleeps: the AOF buffer is written, an fsync window
  // that is due closes (the held fsync starts, covering this turn's
  // writes), and held replies whose commands wrote nothing (an error, a
  // no-op) go out now rather than wait for somebody else's write.
  // An in-process snapshot (snapshot-fork no) takes its step here too.
  void BeforeSleep() {
    aof_->BeforeSleep();
    if (window_.open()) CloseFsyncWindowIfDue();
    if (durable_.clients() > 0) ReleaseDurableReplies();
    if (child_.in_process()) StepInProcessChild();
  }
  // appendfsync always: whether the next fsync is held for the clients the
  // last one released (tests).
  bool fsync_window_open() const { return window_.open(); }
  // The end of a loop turn: exits when the AOF cannot be written with
  // appendfsync always (held replies would wait forever), as Redis does.
  void EndTurn();
  // A step of the in-process snapshot; the loop comes back when it asks.
  // Its end is reaped by the cron, as a child's exit is.
  void StepInProcessChild() {
    if (const int64_t next_us = child_.StepInProcess(); next_us >= 0) hooks_.WakeInUs(next_us);
  }

  // ---- commands -----------------------------------------------------------------------
  // SAVE (dirty back to 0) and BGSAVE (`repl`: the replication info a save
  // for replicas carries): RdbSaver's, with the server's dirty counter.
  absl::Status Save(int64_t now_ms) { return rdb_->Save(now_ms, dirty_); }
  absl::Status BackgroundSave(int64_t now_ms, const RdbSaveOptions* repl = nullptr) {
    return rdb_->BackgroundSave(now_ms, *dirty_, repl);
  }
  // The MISCONF error a write (or PING) gets while persistence is failing, or "".
  std::string Error() const;
  // Cheap check before Error(): no save or AOF write is failing.
  bool ok() const { return rdb_->last_bgsave_ok() && !aof_->write_failed(); }
  // CONFIG SET appendonly.
  absl::Status SetAppendOnly(bool on);
  // After a replica's full sync replaced the dataset: an enabled AOF starts
  // over from a rewrite of the new data (a failure is logged).
  void RestartAof(int64_t now_ms);
  // The AOF was opened or switched (by this object, or by the start-up
  // load through aof()): the reply path's cached fsync policy follows.
  void RefreshAlways() {
    aof_always_ = aof_->always();
    if (!aof_always_ && window_.open()) CloseFsyncWindow();
  }
  // SHUTDOWN's persistence work before stopping: kill a child, flush the
  // AOF, save the RDB when asked or when save points exist. An error means
  // "do not stop" (unless `force`).
  absl::Status PrepareForShutdown(ShutdownSave save, bool force);
  // Before the dataset is replaced wholesale (a replica's full-sync load,
  // DEBUG RELOAD / LOADAOF): an in-process snapshot is stopped, as Redis
  // stops its RDB child for a full sync's load -- it would otherwise write
  // out every database being replaced first. Logs `why`.
  void StopInProcessChild(std::string_view why);
  // FLUSHALL, before the databases are emptied: a running RDB child (or
  // diskless transfer) is stopped -- first, so that an in-process snapshot
  // does not write out the databases being flushed.
  void BeforeFlushAll();
  // FLUSHALL, after: with save points, an empty dump written (Redis 7.0's
  // flushAllDataAndResetRDB).
  void AfterFlushAll(int64_t now_ms);
  // Kills the fork child (no-op without one) and, when `remove_temp_file`,
  // deletes the file it was writing (temp-<pid>.rdb, or an AOF rewrite's
  // temp-rewriteaof-bg-<pid>.aof). The one place a child is stopped early:
  // SHUTDOWN, FLUSHALL and the full syncs (a snapshot no replica wants).
  void KillChild(bool remove_temp_file);

 private:
  // Routes a reaped or stopped child's result (RDB save, diskless transfer, AOF rewrite).
  void OnChildEnded(const ChildResult& r, int64_t now_ms);
  // `from_fsync`: a completion releases them (they count for the window).
  void ReleaseDurableReplies(bool from_fsync = false);
  // More AOF bytes are durable (or an fsync failed).
  void AfterAofSync();
  // After a completion with appendfsync always: opens the window, or
  // starts the held fsync at once when nobody was released.
  void OpenFsyncWindow();
  void CloseFsyncWindowIfDue();
  void CloseFsyncWindow();
  Hooks& hooks_;
  Config& config_;
  uint64_t* const dirty_;
  // Declared first: the savers hold its address, and it outlives them.
  ChildProcess child_;
  std::unique_ptr<RdbSaver> rdb_;
  // Small until appendonly turns it on (its syncer and files exist only then).
  std::unique_ptr<Aof> aof_;
  bool aof_always_ = false;  // cached aof_->always(): checked for every reply
  bool has_save_points_ = false;  // cached from `save`
  DurableReplies durable_;
  FsyncWindow window_;
  uint64_t turn_ = 0;  // main loop turns: a held-reply segment per turn
};

}  // namespace ringkv::server
