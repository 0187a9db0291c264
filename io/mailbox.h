// Mailbox<T>: a multi-producer, single-consumer queue between threads with an
// eventfd wake-up.
//
// Producers Post() under a mutex; the consumer takes the whole queue at once
// (Drain) so one lock round-trip moves a loop turn's worth of messages. The
// eventfd is written only on the empty -> non-empty transition, so a consumer
// that is busy draining costs producers no syscall. The consumer keeps a read
// of eventfd() armed in its io_uring and must Drain() before it sleeps.
//
// Drain takes no lock while nothing was posted (an atomic flag, set under the
// lock with the first message): the loops drain every turn, and most turns
// find nothing (docs/performance.md 39.2). A message posted just after the
// flag was read is not lost: it was posted to an empty queue, so it also
// wrote the eventfd, which wakes the consumer for another turn.
#pragma once

#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace ringkv::io {

template <typename T>
class Mailbox {
 public:
  Mailbox() : efd_(::eventfd(0, EFD_CLOEXEC)) {}
  ~Mailbox() {
    if (efd_ >= 0) close(efd_);
  }
  Mailbox(const Mailbox&) = delete;
  Mailbox& operator=(const Mailbox&) = delete;

  int eventfd() const { return efd_; }
  bool ok() const { return efd_ >= 0; }

  void Post(T msg) {
    bool wake;
    {
      absl::MutexLock lock(&mu_);
      wake = queue_.empty();
      queue_.push_back(std::move(msg));
      if (wake) pending_.store(true, std::memory_order_release);
    }
    if (wake) Wake();
  }

  // Posts several messages with one lock and at most one wake-up.
  void PostAll(std::vector<T>& msgs) {
    if (msgs.empty()) return;
    bool wake;
    {
      absl::MutexLock lock(&mu_);
      wake = queue_.empty();
      for (T& m : msgs) queue_.push_back(std::move(m));
      if (wake) pending_.store(true, std::memory_order_release);
    }
    msgs.clear();
    if (wake) Wake();
  }

  // Swaps the queue into *out (which should be empty); nothing, without a
  // lock, when nothing was posted since the last Drain.
  void Drain(std::vector<T>* out) {
    if (!pending_.load(std::memory_order_acquire)) return;
    absl::MutexLock lock(&mu_);
    out->swap(queue_);
    pending_.store(false, std::memory_order_relaxed);
  }

  void Wake() {
    uint64_t one = 1;
    ssize_t r = write(efd_, &one, sizeof(one));
    (void)r;  // Cannot block: the counter would need 2^64-2 unread wakes.
  }

 private:
  int efd_;
  absl::Mutex mu_;
  std::vector<T> queue_ ABSL_GUARDED_BY(mu_);
  std::atomic<bool> pending_{false};  // queue_ is not empty (written under mu_)
};

}  // namespace ringkv::io
