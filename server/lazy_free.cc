#include "server/lazy_free.h"

#include <unistd.h>

#include "io/fork_gate.h"

namespace ringkv::server {

LazyFreer::FilesToUnlink::~FilesToUnlink() {
  for (const std::string& p : paths) ::unlink(p.c_str());
}

// A ForkGate helper (io/fork_gate.h): it frees under its gate.
LazyFreer::LazyFreer() : worker_(io::ForkGate::StartHelperThread([this] { Run(); })) {}

LazyFreer::~LazyFreer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_one();
  worker_.join();
}

void LazyFreer::Enqueue(Job job) {
  pending_.fetch_add(job.objects, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(job));
  }
  cv_.notify_one();
}

void LazyFreer::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stop requested and nothing left to free
    Job job = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    job.data.reset();  // the expensive part, off the main thread
    pending_.fetch_sub(job.objects, std::memory_order_relaxed);
    freed_.fetch_add(job.objects, std::memory_order_relaxed);
    lock.lock();
  }
}

}  // namespace ringkv::server
