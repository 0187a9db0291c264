// AofSyncThread: the background thread that fsyncs AOF files, so fsync never
// runs on the main thread.
//
// The main thread writes AOF bytes (to the page cache) and then asks for them
// to be made durable with Request(fd, offset), where offset is the AOF's
// running byte count after those bytes. Requests queue in order; the thread
// takes everything queued, fsyncs each file once (one fsync covers every
// request for that file: group commit), closes files that were retired, and
// publishes the highest offset now durable. `on_synced` runs on the sync
// thread after each round (the server turns it into a main-loop wake-up).
//
// Thread-safety: Request / synced / pending are thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace ringkv::server {

class AofSyncThread {
 public:
  explicit AofSyncThread(std::function<void()> on_synced);
  ~AofSyncThread();  // finishes queued work, then joins
  AofSyncThread(const AofSyncThread&) = delete;
  AofSyncThread& operator=(const AofSyncThread&) = delete;

  // Makes fd durable up to `offset`; with close_after, closes fd afterwards
  // (the file was replaced). Offsets must not decrease.
  void Request(int fd, uint64_t offset, bool close_after = false);
  // The highest offset known durable.
  uint64_t synced() const { return synced_.load(std::memory_order_acquire); }
  // Requests not yet done (INFO aof_pending_bio_fsync).
  int pending() const { return pending_.load(std::memory_order_relaxed); }
  // Blocks until everything requested so far is durable (shutdown).
  void Drain();
  // fsync failures seen (errno of the last one, 0 if none).
  int last_error() const { return last_error_.load(std::memory_order_relaxed); }

 private:
  struct Job {
    int fd;
    uint64_t offset;
    bool close_after;
  };
  void Loop();

  std::function<void()> on_synced_;
  absl::Mutex mu_;
  std::vector<Job> queue_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool busy_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<uint64_t> synced_{0};
  std::atomic<int> pending_{0};
  std::atomic<int> last_error_{0};
  std::thread thread_;
};

}  // namespace ringkv::server
