#include "server/persistence/aof_fsync.h"

#include <pthread.h>
#include <unistd.h>

#include <cerrno>

namespace ringkv::server {

AofSyncThread::AofSyncThread(std::function<void()> on_synced) : on_synced_(std::move(on_synced)) {
  thread_ = std::thread([this] { Loop(); });
  pthread_setname_np(thread_.native_handle(), "aof-fsync");
}

AofSyncThread::~AofSyncThread() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

void AofSyncThread::Request(int fd, uint64_t offset, bool close_after) {
  absl::MutexLock lock(&mu_);
  queue_.push_back(Job{fd, offset, close_after});
  pending_.fetch_add(1, std::memory_order_relaxed);
}

void AofSyncThread::Drain() {
  absl::MutexLock lock(&mu_);
  auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return queue_.empty() && !busy_; };
  mu_.Await(absl::Condition(&idle));
}

void AofSyncThread::Loop() {
  std::vector<Job> jobs;
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      busy_ = false;
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_ || !queue_.empty(); };
      mu_.Await(absl::Condition(&ready));
      if (queue_.empty()) return;  // stopping, nothing left
      jobs.swap(queue_);
      busy_ = true;
    }
    uint64_t upto = 0;
    bool failed = false;
    for (size_t i = 0; i < jobs.size(); ++i) {
      const Job& j = jobs[i];
      upto = std::max(upto, j.offset);
      // One fsync per file per round: skip a job when a later one in this
      // round syncs the same file (and it is not to be closed).
      bool later_same_fd = false;
      for (size_t k = i + 1; k < jobs.size() && !j.close_after; ++k) later_same_fd |= jobs[k].fd == j.fd;
      if (later_same_fd) continue;
      if (::fdatasync(j.fd) != 0 && errno != EINVAL) {
        last_error_.store(errno, std::memory_order_relaxed);
        failed = true;  // nothing from this round is reported durable
      }
      if (j.close_after) ::close(j.fd);
    }
    pending_.fetch_sub(static_cast<int>(jobs.size()), std::memory_order_relaxed);
    jobs.clear();
    if (!failed) synced_.store(std::max(synced_.load(std::memory_order_relaxed), upto), std::memory_order_release);
    if (on_synced_) on_synced_();
  }
}

}  // namespace ringkv::server
