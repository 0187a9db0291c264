#include "server/persistence/aof_fsync.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace ringkv::server {

AofSyncer::~AofSyncer() {
  for (const Job& j : queue_) {
    if (j.close_after) ::close(j.fd);
  }
}

void AofSyncer::Request(int fd, uint64_t offset, bool close_after) {
  if (!queue_.empty() && queue_.back().fd == fd && !queue_.back().close_after) {
    queue_.back().offset = std::max(queue_.back().offset, offset);
    queue_.back().close_after = close_after;
  } else {
    queue_.push_back(Job{fd, offset, close_after});
  }
  if (!running_) SubmitNext();
}

void AofSyncer::SubmitNext() {
  if (held_ || queue_.empty()) return;
  running_ = queue_.front();
  queue_.pop_front();
  submitted_at_ = std::chrono::steady_clock::now();
  submit_(running_->fd, ++token_);
}

bool AofSyncer::OnDone(uint32_t token, int result, bool hold_next) {
  if (!running_ || token != token_) return false;  // settled by SyncAllNow
  const Job job = *running_;
  running_.reset();
  last_duration_us_ =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - submitted_at_).count();
  bool advanced = false;
  if (result < 0 && result != -EINVAL) {
    last_error_ = -result;  // nothing of this job counts as durable
  } else if (job.offset > synced_) {
    synced_ = job.offset;
    advanced = true;
  }
  if (job.close_after) ::close(job.fd);
  held_ = hold_next;
  SubmitNext();
  return advanced;
}

void AofSyncer::SyncAllNow() {
  if (running_) {
    if (::fdatasync(running_->fd) == 0) synced_ = std::max(synced_, running_->offset);
    // The fd stays open: the kernel may still be using it for the submitted job.
    running_.reset();
  }
  for (const Job& j : queue_) {
    if (::fdatasync(j.fd) == 0) synced_ = std::max(synced_, j.offset);
    if (j.close_after) ::close(j.fd);
  }
  queue_.clear();
}

}  // namespace ringkv::server
