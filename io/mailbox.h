// Mailbox<T>: a multi-producer, single-consumer queue between threads with an
// eventfd wake-up.
//
// Producers Post() under a mutex; the consumer takes the whole queue at once
// (Drain) so one lock round-trip moves a loop turn's worth of messages. The
// eventfd is written only on the empty -> non-empty transition, so a consumer
// that is busy draining costs producers no syscall. The consumer keeps a read
// of eventfd() armed in its io_uring and must Drain() before it sleeps.
#pragma once

#include <sys/eventfd.h>
#include <unistd.h>

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
    }
    msgs.clear();
    if (wake) Wake();
  }

  // Swaps the queue into *out (which should be empty).
  void Drain(std::vector<T>* out) {
    absl::MutexLock lock(&mu_);
    out->swap(queue_);
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
};

}  // namespace ringkv::io
