// AofSyncer: makes AOF bytes durable without the main thread waiting for a
// disk. An fdatasync is handed to the I/O layer (io_uring runs it on the
// kernel's worker threads) and its completion comes back as an event of the
// main loop -- no helper thread, no locks, no wake-up pipe.
//
// Group commit: at most one fdatasync is in flight. Requests made meanwhile
// merge into one queued job per file (the newest offset wins), submitted the
// moment the running one completes -- or, when the completion is told to
// hold the next (OnDone's hold_next: appendfsync always's fsync window, see
// fsync_window.h), when Resume() is called. One fsync acknowledges every
// write of the loop turns it covers. Jobs complete in order, which keeps
// synced() exact across file switches (a retired file is synced, then
// closed, before anything written after it counts as durable).
//
// Offsets are the AOF's running byte count (see Aof). Thread-safety: main
// thread only.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>

namespace ringkv::server {

class AofSyncer {
 public:
  // Starts an asynchronous fdatasync of fd; OnDone(token, result) must follow.
  using Submit = std::function<void(int fd, uint32_t token)>;
  explicit AofSyncer(Submit submit) : submit_(std::move(submit)) {}
  ~AofSyncer();  // closes retired files still queued
  AofSyncer(const AofSyncer&) = delete;
  AofSyncer& operator=(const AofSyncer&) = delete;

  // Makes fd durable up to `offset`; with close_after, closes fd afterwards
  // (the file was replaced). Offsets must not decrease.
  void Request(int fd, uint64_t offset, bool close_after = false);
  // The fdatasync `token` finished. Returns true when synced() advanced.
  // The next queued job starts now, or with hold_next when Resume() is
  // called (jobs requested meanwhile merge into it as usual).
  bool OnDone(uint32_t token, int result, bool hold_next = false);
  // Ends a hold: the queued job, if any and none is running, starts now.
  void Resume() {
    held_ = false;
    if (!running_) SubmitNext();
  }
  uint64_t synced() const { return synced_; }
  // Jobs queued or running (INFO aof_pending_bio_fsync).
  int pending() const { return static_cast<int>(queue_.size()) + (running_ ? 1 : 0); }
  // How long the last fdatasync took, submission to completion.
  int64_t last_duration_us() const { return last_duration_us_; }
  // errno of the last failed fdatasync, 0 if none.
  int last_error() const { return last_error_; }
  // Shutdown: syncs (blocking) and closes every queued file now. The file
  // of a running job is synced too; its completion is then a no-op.
  void SyncAllNow();

 private:
  struct Job {
    int fd;
    uint64_t offset;
    bool close_after;
  };
  void SubmitNext();

  Submit submit_;
  std::deque<Job> queue_;
  std::optional<Job> running_;
  uint32_t token_ = 0;
  std::chrono::steady_clock::time_point submitted_at_;
  int64_t last_duration_us_ = 0;
  uint64_t synced_ = 0;
  int last_error_ = 0;
  bool held_ = false;  // OnDone(hold_next) until Resume(): nothing is submitted
};

}  // namespace ringkv::server
