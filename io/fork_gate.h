// ForkGate: no helper thread is inside the allocator when the main thread
// forks a child (BGSAVE, BGREWRITEAOF, a disk-based full sync).
//
// Why: fork() copies only the thread that calls it. A lock another thread
// held at that instant stays held in the child, where no thread will ever
// release it, and the child hangs the first time it needs it. glibc's malloc
// takes its own locks around fork(); GCC 12's AddressSanitizer allocator
// does not (a child was caught waiting forever on a size-class lock that the
// lazy-free thread held at the fork: docs/performance.md 43.1), and mimalloc's
// cross-thread free has a short state that only the freeing thread ends.
// So every allocation and free a helper thread makes through operator new
// and delete happens under that thread's gate, and Fork() closes every gate
// first: the child starts with no allocation half done.
//
// Usage:
//   // A helper thread, registered before this returns:
//   std::thread t = io::ForkGate::StartHelperThread([this] { Run(); });
//   // Or, first thing on a helper thread started otherwise:
//   io::ForkGate::HelperThread gate;
//   // In the allocator's entry points (server/memory_stats.cc):
//   io::ForkGate::AllocationScope scope;  // one TLS load on other threads
//   // Instead of ::fork():
//   pid_t pid = io::ForkGate::Fork();
//
// Thread-safety: HelperThread and AllocationScope on any thread; Fork() on
// one thread at a time (the main thread), never on a helper thread.
// Fork() waits for at most one allocation or free per helper thread, and
// for a helper that is ending (its HelperThread destroyed) to be gone: its
// exit frees memory outside the gate (the std::thread's state, thread_local
// objects, the sanitizer's per-thread caches). A thread's start allocates
// outside any gate too (the C++ runtime's and the sanitizer's per-thread
// set-up): StartHelperThread returns only once the new thread is
// registered, so the forking thread, which starts the helpers, never forks
// beside one half started. (A helper started otherwise must be registered
// before its creator can fork: IoThread::Spawn waits for it.)
//
// In the child, locks that helpers take around their own queues (the
// lazy-free queue, the epoll fsync queue, a mailbox) may be held for good:
// a child runs its snapshot work and exits, and must not touch them.
//
// Not covered: memory a helper thread takes with malloc() inside libc (the
// sync worker's getaddrinfo). In the release build that is glibc's malloc,
// which guards its own locks across fork(), and operator new's mimalloc is
// covered by the gate; the ASan build's allocator guards nothing, so there
// the gap is those libc calls. OpenSSL's allocations are routed through the
// gate (io/tls_context.h, RouteOpenSslAllocations).
#pragma once

#include <sys/types.h>

#include <functional>
#include <mutex>
#include <thread>

namespace ringkv::io {

class ForkGate {
 public:
  struct Gate;  // one helper thread's entry (fork_gate.cc)

  // Registers the calling thread as a helper for as long as it lives.
  // REQUIRES: at most one per thread; not on the thread that forks.
  class HelperThread {
   public:
    HelperThread();
    ~HelperThread();
    HelperThread(const HelperThread&) = delete;
    HelperThread& operator=(const HelperThread&) = delete;

   private:
    Gate* gate_;  // owned by the registry, which keeps it until the thread is gone
  };

  // Starts `body` on a new thread that is a HelperThread for its whole
  // life; returns once it is registered (see above).
  static std::thread StartHelperThread(std::function<void()> body);

  // Holds the calling thread's gate, if it has one, for its scope.
  class AllocationScope {
   public:
    AllocationScope() : gate_(current_) {
      if (gate_ != nullptr) [[unlikely]] gate_->lock();
    }
    ~AllocationScope() {
      if (gate_ != nullptr) [[unlikely]] gate_->unlock();
    }
    AllocationScope(const AllocationScope&) = delete;
    AllocationScope& operator=(const AllocationScope&) = delete;

   private:
    std::mutex* const gate_;
  };

  // fork(2) with every helper thread's gate closed: returns what fork()
  // returns, in the parent (where the gates open again) and in the child
  // (which starts with no helper thread registered).
  static pid_t Fork();

  // How many helper threads are registered and not ending (tests).
  static size_t HelperThreads();

 private:
  // The calling thread's gate; null on the main thread and any thread that
  // is not a registered helper.
  // constinit: other files read it directly, with no TLS init wrapper.
  static constinit thread_local std::mutex* current_;
};

}  // namespace ringkv::io
