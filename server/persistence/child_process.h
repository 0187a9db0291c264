// ChildProcess: the one forked child a server may have at a time -- an RDB
// save (BGSAVE) or an AOF rewrite -- as Redis allows one fork at a time.
//
// The child works on the copy-on-write image of the keyspace taken at fork
// time, so the parent keeps serving; the parent reaps it from its cron with
// Poll() (never blocking). While it works the child reports its progress
// through a pipe (keys written, and about once a second the memory dirtied so
// far by copy-on-write: INFO current_*); before exiting it reports the final
// copy-on-write, which INFO shows as *_last_cow_size.
//
// Thread-safety: main thread only. The forked child must only use
// async-signal-safe facilities plus its private copy of memory; it ends with
// _exit(), never running destructors or atexit handlers.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"

namespace ringkv::server {

enum class ChildType : uint8_t { kNone, kRdb, kAof };

struct ChildResult {
  ChildType type = ChildType::kNone;
  pid_t pid = -1;             // 0 for in-process work (no child, no pid-named temp file)
  bool in_process = false;
  bool ok = false;            // exited with status 0
  bool killed_by_us = false;  // stopped with Kill() (not an error, as in Redis)
  uint64_t cow_bytes = 0;
  int64_t duration_ms = 0;
};

// Work done in this process instead of a forked child (snapshot-fork no),
// driven a bounded step at a time from the event loop. Its destructor
// abandons unfinished work and removes what it wrote.
class InProcessWork {
 public:
  static constexpr int64_t kFinished = -1;
  virtual ~InProcessWork() = default;
  // A bounded share of the work. Returns the microseconds until it wants
  // its next step (0: the next loop turn), or kFinished once all is done
  // (ok() then says how it went).
  virtual int64_t Step() = 0;
  virtual bool ok() const = 0;
  virtual uint64_t keys_processed() const = 0;
  // What it had to copy ahead of its order because the data was about to
  // change: the counterpart of a child's copy-on-write (current_cow_size).
  virtual uint64_t copied_bytes() const = 0;
  // Memory it holds for its output (not the dataset's: maxmemory leaves it out).
  virtual uint64_t buffered_bytes() const = 0;
};

class ChildProcess {
 public:
  ChildProcess() = default;
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Called with true when a child starts and false when it is reaped or
  // killed (the server freezes access stats and resizing meanwhile).
  void set_on_running_changed(std::function<void(bool)> fn) { on_running_changed_ = std::move(fn); }
  // Forks and runs `work` in the child; its return value is the exit status.
  // `keys_total`: the keys the child is to write (INFO current_save_keys_total).
  absl::Status Start(ChildType type, const std::function<int()>& work, uint64_t keys_total = 0);
  // The same job done in this process: it counts as the running child for
  // everyone (running(), type(), INFO, Poll, Kill) but forks nothing, so
  // on_running_changed is not called and no fork is counted.
  absl::Status StartInProcess(ChildType type, std::unique_ptr<InProcessWork> work, uint64_t keys_total);
  // Runs a step of in-process work; returns when it wants the next one
  // (microseconds, 0 = next turn), or -1 when none runs or it has finished
  // (Poll then reaps it).
  int64_t StepInProcess();
  bool running() const { return pid_ > 0 || work_ != nullptr; }
  bool in_process() const { return work_ != nullptr; }
  uint64_t in_process_buffered_bytes() const { return work_ != nullptr ? work_->buffered_bytes() : 0; }
  ChildType type() const { return running() ? type_ : ChildType::kNone; }
  // The child's pid; 0 for in-process work (there is no other process to
  // name, and the server's own must never be taken for a child's).
  pid_t pid() const;
  int64_t start_ms() const { return start_ms_; }
  // Reaps the child if it has exited; returns true and fills *result then.
  bool Poll(ChildResult* result);
  // Stops the child (SIGUSR1) and reaps it; its temp files are the caller's.
  void Kill(ChildResult* result);
  // How long the last fork() took, in microseconds (INFO latest_fork_usec).
  int64_t last_fork_us() const { return last_fork_us_; }
  uint64_t total_forks() const { return total_forks_; }
  // The running child's progress as last reported (zeros when none runs):
  // the current_* fields of INFO persistence, with Redis's names.
  void AppendCurrentInfo(std::string* out, int64_t now_ms) const;

 private:
  void Finish(int status, ChildResult* result);
  void FinishInProcess(bool killed, ChildResult* result);
  // Reads the reports the child has sent so far (never blocking).
  void DrainReports();
  void ResetProgress();
  pid_t pid_ = -1;
  ChildType type_ = ChildType::kNone;
  int64_t start_ms_ = 0;
  int info_fd_ = -1;  // read end of the child's report pipe
  bool killing_ = false;
  int64_t last_fork_us_ = 0;
  uint64_t total_forks_ = 0;
  std::function<void(bool)> on_running_changed_;
  // Progress of the running child (ResetProgress when it ends).
  uint64_t keys_total_ = 0;
  uint64_t keys_processed_ = 0;
  uint64_t cow_bytes_ = 0;
  uint64_t cow_peak_ = 0;
  int64_t cow_updated_ms_ = 0;  // 0: no copy-on-write reported yet
  uint64_t final_cow_ = 0;      // from the child's last report, sent as it exits
  std::unique_ptr<InProcessWork> work_;  // in-process work, instead of pid_
  bool work_finished_ = false;
};

// In a child started by ChildProcess: reports that `keys_processed` keys are
// written. At most one report a second reaches the parent, each with the
// copy-on-write so far (the first one at once). A no-op in any other process,
// so snapshot writers call it unconditionally.
void ChildReportProgress(uint64_t keys_processed);

// In the child: the bytes of private memory it has dirtied so far (from
// /proc/self/smaps_rollup), i.e. what copy-on-write cost.
uint64_t ChildDirtyBytes();

}  // namespace ringkv::server
