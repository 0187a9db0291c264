// LazyFreer: frees large data on a background thread so the main thread never
// pauses for it (FLUSHALL / FLUSHDB ASYNC, lazyfree-lazy-user-flush), and
// unlinks files there (the AOF's history), as Redis's bio threads do. One
// long-lived thread, not one per job: a thread that starts or ends while the
// server forks is outside io/fork_gate.h's reach.
//
// Thread-safety: Free() and the counters may be called from the main thread
// while the worker runs; the destructor drains the queue and joins.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ringkv::server {

class LazyFreer {
 public:
  LazyFreer();
  ~LazyFreer();
  LazyFreer(const LazyFreer&) = delete;
  LazyFreer& operator=(const LazyFreer&) = delete;

  // Takes ownership and destroys `data` on the worker. `objects` is what
  // INFO counts (keys, for a detached database).
  template <typename T>
  void Free(std::unique_ptr<T> data, uint64_t objects) {
    Enqueue(Job{std::shared_ptr<void>(data.release(), [](void* p) { delete static_cast<T*>(p); }), objects});
  }

  // Unlinks `paths` on the worker; no object is counted.
  void Unlink(std::vector<std::string> paths) {
    Free(std::make_unique<FilesToUnlink>(std::move(paths)), 0);
  }

  uint64_t pending_objects() const { return pending_.load(std::memory_order_relaxed); }
  uint64_t freed_objects() const { return freed_.load(std::memory_order_relaxed); }
  // CONFIG RESETSTAT (Redis's lazyfreeResetStats): INFO's lazyfreed_objects starts again at 0.
  void ResetFreedObjects() { freed_.store(0, std::memory_order_relaxed); }

 private:
  // Unlinks its files when destroyed, that is on the worker.
  struct FilesToUnlink {
    explicit FilesToUnlink(std::vector<std::string> p) : paths(std::move(p)) {}
    ~FilesToUnlink();
    FilesToUnlink(const FilesToUnlink&) = delete;
    FilesToUnlink& operator=(const FilesToUnlink&) = delete;
    std::vector<std::string> paths;
  };
  struct Job {
    std::shared_ptr<void> data;  // type-erased owner; its deleter frees the data
    uint64_t objects;
  };
  void Enqueue(Job job);
  void Run();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> queue_;
  bool stop_ = false;
  std::atomic<uint64_t> pending_{0};
  std::atomic<uint64_t> freed_{0};
  std::thread worker_;
};

}  // namespace ringkv::server
