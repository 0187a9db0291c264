// Aof: the append-only file, in Redis 7.0's multi-part layout (see
// aof_manifest.h), from start-up load to rewrite.
//
// Write path. Every write command reaches Feed() once, already in the form to
// replay (absolute expiry times, SELECT when the database changes). Fed bytes
// collect in a buffer that the main thread writes to the current incremental
// file once per loop turn (BeforeSleep). Durability is the AofSyncer's job
// (asynchronous fdatasync): with appendfsync always a sync is requested every
// turn that wrote, and
// the server holds the replies of that turn until synced() passes their
// offset (group commit: one fsync acknowledges every client of the turn);
// with everysec a sync is requested at most once a second from the cron; with
// no, never. fsync never runs on the main thread.
//
// Offsets count every byte fed since start-up, across files, so "is this
// write durable" is one comparison with synced().
//
// Rewrite (BGREWRITEAOF, automatic growth, or turning appendonly on) forks a
// child that writes a new base from the copy-on-write keyspace; at fork time
// the parent switches to a new incremental file, so no rewrite buffer is
// needed. When the child succeeds the manifest names the new base and the
// incremental files from the fork on; the older files are deleted.
//
// Thread-safety: main thread only (Feed checks it in debug builds).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "core/keyspace.h"
#include "core/strings.h"
#include "server/config.h"
#include "server/latency_monitor.h"
#include "server/persistence/aof_fsync.h"
#include "server/persistence/aof_loader.h"
#include "server/persistence/aof_manifest.h"
#include "server/persistence/child_process.h"
#include "server/persistence/rdb_snapshot.h"

namespace ringkv::server {

enum class AofState : uint8_t { kOff, kOn, kWaitRewrite };
enum class FsyncPolicy : uint8_t { kAlways, kEverysec, kNo };

struct AofStats {
  uint64_t rewrites = 0;
  uint64_t consecutive_failures = 0;
  int64_t last_rewrite_ms = -1;
  bool last_rewrite_ok = true;
  bool last_write_ok = true;
  int last_write_errno = 0;
  uint64_t last_cow_bytes = 0;
  uint64_t delayed_fsync = 0;
  // fdatasyncs of the AOF completed without error since start (group commit:
  // one covers every write fed before it was submitted; DEBUG AOF-FSYNCS).
  uint64_t fsyncs = 0;
};

class Aof {
 public:
  // Unlinks files off the main thread (Persistence::Hooks::UnlinkInBackground).
  using UnlinkInBackground = std::function<void(std::vector<std::string> paths)>;

  // `submit_fsync` starts an asynchronous fdatasync (IoSystem::SubmitFsync);
  // its completion must be passed to OnFsyncDone. `unlink` deletes history
  // files.
  Aof(Config* config, core::Keyspace* keyspace, ChildProcess* child, AofSyncer::Submit submit_fsync,
      UnlinkInBackground unlink);
  ~Aof();

  // Start-up with appendonly yes: loads the AOF (upgrading a Redis 6 single
  // file, or creating an empty base when there is none) and opens the last
  // incremental file for appending. `apply` replays one command.
  absl::Status OpenAndLoad(int64_t now_ms, const AofApply& apply, uint64_t* keys_loaded);

  // Replays the files the manifest names (start-up). Every one must exist.
  absl::Status ReplayFiles(int64_t now_ms, const AofApply& apply, uint64_t* keys_loaded);
  // DEBUG LOADAOF: reads the manifest from disk again, as Redis does (its
  // sequence numbers included), deletes history files, replays. No AOF on
  // disk loads nothing. An error's reason is already logged when the status
  // is kAborted.
  absl::Status ReloadFromDisk(int64_t now_ms, const AofApply& apply, uint64_t* keys_loaded);

  AofState state() const { return state_; }
  bool enabled() const { return state_ != AofState::kOff; }
  FsyncPolicy policy() const { return policy_; }
  // True when replies must wait for fsync (appendfsync always, AOF on).
  bool always() const { return state_ != AofState::kOff && policy_ == FsyncPolicy::kAlways; }

  // Appends one command executed in database `db`.
  void Feed(int db, std::span<const std::string_view> argv);
  uint64_t fed_offset() const { return written_ + buf_.size(); }
  // What the buffer of commands not yet written holds (MEMORY STATS aof.buffer).
  size_t buffer_allocated() const { return buf_.capacity(); }
  uint64_t synced_offset() const;
  bool has_unsynced() const { return synced_offset() < fed_offset(); }
  // What replies held for appendfsync always may be released up to: the
  // synced offset, or what was written while no-appendfsync-on-rewrite
  // skipped the fsync (Redis replies without it then). WAITAOF still counts
  // only what is synced.
  uint64_t reply_release_offset() const { return std::max(synced_offset(), unsynced_released_); }

  // End of a loop turn: writes the buffer; with `always`, requests a sync.
  void BeforeSleep();
  // Cron: everysec syncs, retrying failed writes, automatic and scheduled
  // rewrites.
  void Cron(int64_t now_ms);

  // BGREWRITEAOF. Ok, or the error text for the client.
  absl::Status StartRewrite(int64_t now_ms);
  bool rewrite_scheduled() const { return rewrite_scheduled_; }
  // BGREWRITEAOF while a child runs: the rewrite starts when it is done,
  // whatever earlier failures (their count restarts), as in Redis.
  void ScheduleRewrite() {
    rewrite_scheduled_ = true;
    stats_.consecutive_failures = 0;
  }
  // The AOF child exited (reaped by the server).
  void OnRewriteDone(const ChildResult& result);

  // CONFIG SET appendonly yes / no.
  absl::Status Enable(int64_t now_ms);
  void Disable();
  // CONFIG SET appendfsync.
  void ReloadPolicy();
  bool SkipFsync() const;
  // aof-timestamp-enabled: a "#TS:<unix seconds>" line before the first
  // command of each second, and at the top of an AOF-format base (Redis's
  // annotations; redis-check-aof --truncate-to-timestamp cuts at them).
  void set_timestamps(bool on) { timestamps_ = on; }
  // DEBUG AOF-FLUSH-SLEEP: sleep before each write of the buffer (a test hook).
  void set_flush_sleep_us(int64_t us) { flush_sleep_us_ = us; }

  // Shutdown: writes and fsyncs everything (may block; the server is stopping).
  absl::Status FlushAndSync();
  // A write error stops writes (MISCONF) until the file accepts data again.
  bool write_failed() const { return !stats_.last_write_ok; }
  int write_errno() const { return stats_.last_write_errno; }
  // An fdatasync finished. True when more bytes are now durable. With
  // hold_next the next fsync waits for ResumeSyncs() (the fsync window).
  bool OnFsyncDone(uint32_t token, int result, bool hold_next = false) {
    if (!syncer_) return false;
    const bool advanced = syncer_->OnDone(token, result, hold_next);
    if (result >= 0) ++stats_.fsyncs;
    // With `always` replies wait for it: the latency event Redis takes
    // around its blocking fsync.
    if (latency_ != nullptr && always()) {
      latency_->AddIfNeeded("aof-fsync-always", syncer_->last_duration_us() / 1000);
    }
    return advanced;
  }
  // Ends OnFsyncDone's hold: the queued fsync, if any, starts now.
  void ResumeSyncs() {
    if (syncer_) syncer_->Resume();
  }
  // How long the last fdatasync took, submission to completion (µs).
  int64_t last_fsync_us() const { return syncer_ ? syncer_->last_duration_us() : 0; }
  // LATENCY's aof-write* / aof-fsync-always / aof-fstat / aof-rename events.
  void set_latency_monitor(LatencyMonitor* m) { latency_ = m; }
  // An fsync failed (with `always` the server must stop).
  int sync_error() const { return syncer_ ? syncer_->last_error() : 0; }

  // Deletes the history files the manifest names (unless
  // aof-disable-auto-gc), off the main thread.
  void DeleteHistory();

  const AofStats& stats() const { return stats_; }
  void AppendInfo(std::string* out) const;
  // The FUNCTION libraries a rewrite's base carries.
  void set_functions_source(std::function<std::vector<std::string>()> fn) { functions_ = std::move(fn); }

 private:
  std::string DirPath() const;
  std::string PathOf(const std::string& file_name) const;
  std::string prefix() const { return config_->Str("appendfilename"); }
  absl::Status PersistManifest(const AofManifest& manifest);
  // The manifest in the AOF directory (empty when there is none).
  absl::Status LoadManifestFromDisk(AofManifest* out) const;
  // Redis 6's single AOF in `dir` becomes the base of the directory.
  absl::Status UpgradeSingleFile();
  // A new incremental file as the current one; `persist`: the manifest
  // names it at once.
  absl::Status OpenNewIncr(bool persist);
  // Where the writes go while the AOF is being turned on.
  std::string TempIncrName() const { return StrCat("temp-", prefix(), ".incr"); }
  // A rewrite's child succeeded: the new base, the files it replaces.
  // False when the files could not be put in place.
  bool FinishRewrite(const std::string& tmp);
  // Redis's aofRewriteLimited: true while repeated failures hold
  // automatic and scheduled rewrites back.
  bool RewriteLimited(int64_t now_s);
  void SwitchFd(int fd);
  absl::Status CreateBaseNow(int64_t now_ms);
  RdbSaveOptions BaseOptions(int64_t now_ms) const;
  uint64_t FileSize(const std::string& name) const;
  void WriteBuffer();

  Config* config_;
  std::function<std::vector<std::string>()> functions_;
  core::Keyspace* keyspace_;
  ChildProcess* child_;
  AofSyncer::Submit submit_fsync_;
  UnlinkInBackground unlink_in_background_;
  std::unique_ptr<AofSyncer> syncer_;  // created when the AOF opens
  AofState state_ = AofState::kOff;
  FsyncPolicy policy_ = FsyncPolicy::kEverysec;
  AofManifest manifest_;
  int fd_ = -1;                   // current incremental file
  LatencyMonitor* latency_ = nullptr;
  int selected_db_ = -1;
  std::string buf_;               // fed, not yet written
  uint64_t written_ = 0;          // offset written to the page cache
  uint64_t sync_requested_ = 0;   // offset last handed to the syncer
  uint64_t synced_when_off_ = 0;  // what counts as synced while the AOF is off or was flushed at shutdown
  int64_t last_sync_ms_ = 0;
  bool no_fsync_on_rewrite_ = false;  // no-appendfsync-on-rewrite
  uint64_t unsynced_released_ = 0;    // written while a child ran and fsync was skipped
  uint64_t incr_size_ = 0;        // bytes of the current incremental file
  uint64_t current_size_ = 0;     // base + incremental files (aof_current_size)
  uint64_t base_size_ = 0;        // size after the last rewrite (aof_base_size)
  bool rewrite_scheduled_ = false;
  bool timestamps_ = false;
  int64_t last_timestamp_s_ = 0;
  int64_t flush_sleep_us_ = 0;
  int64_t limit_delay_minutes_ = 0;   // RewriteLimited's back-off
  int64_t limit_next_rewrite_s_ = 0;
  std::string rewrite_tmp_;       // the child's temp file
  AofStats stats_;
};

// Writes a base file to fd: an RDB (aof-use-rdb-preamble yes) or AOF
// commands (SELECT, SET & co., PEXPIREAT; snapshot_encoder.h), with
// `options`' functions, fsync pacing and rdb-key-save-delay.
absl::Status WriteBase(core::Keyspace& ks, int fd, bool rdb_preamble, const RdbSaveOptions& options);

}  // namespace ringkv::server
