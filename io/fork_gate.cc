#include "io/fork_gate.h"

#include <errno.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <latch>
#include <memory>
#include <thread>
#include <vector>

namespace ringkv::io {

// One helper thread's entry. The registry owns it: it outlives the thread's
// HelperThread object, until the thread is known to have exited.
struct ForkGate::Gate {
  std::mutex mu;     // held by the thread during each allocation, by Fork() across fork()
  pid_t tid = 0;     // the thread's kernel id
  bool exiting = false;  // its HelperThread is gone; the thread is ending
};

namespace {

// The registered gates. The registry's lock orders registration against
// Fork(): a thread registering while a fork runs waits for it to end.
struct Registry {
  std::mutex mu;
  std::vector<std::unique_ptr<ForkGate::Gate>> gates;
};

Registry& TheRegistry() {
  static Registry* registry = new Registry;  // never destroyed: threads may outlive static destruction
  return *registry;
}

pid_t CurrentTid() { return static_cast<pid_t>(::syscall(SYS_gettid)); }

// True once thread `tid` of this process has exited: the kernel knows it no
// more, so its exit work in user space (thread_local destructors, the C++
// runtime's and the sanitizer's teardown) is over.
bool ThreadGone(pid_t tid) { return ::syscall(SYS_tgkill, ::getpid(), tid, 0) != 0 && errno == ESRCH; }

// How long Fork() waits for an exiting helper to be gone: its exit takes
// microseconds; the cap only keeps a fork from waiting forever.
constexpr auto kExitWait = std::chrono::seconds(1);

// Drops the entries of helpers that have exited. REQUIRES: r.mu held.
void ForgetExitedThreads(Registry& r) {
  std::erase_if(r.gates, [](const std::unique_ptr<ForkGate::Gate>& g) { return g->exiting && ThreadGone(g->tid); });
}

}  // namespace

constinit thread_local std::mutex* ForkGate::current_ = nullptr;

ForkGate::HelperThread::HelperThread() {
  Registry& r = TheRegistry();
  {
    // The allocations here are made before this thread's gate is in force.
    std::lock_guard<std::mutex> lock(r.mu);
    ForgetExitedThreads(r);
    auto gate = std::make_unique<Gate>();
    gate->tid = CurrentTid();
    gate_ = gate.get();
    r.gates.push_back(std::move(gate));
  }
  current_ = &gate_->mu;
}

ForkGate::HelperThread::~HelperThread() {
  current_ = nullptr;
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  gate_->exiting = true;  // Fork() now waits for the thread to be gone instead
}

pid_t ForkGate::Fork() {
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  // A helper that is ending frees memory outside its gate (its std::thread
  // state, thread_local objects, the sanitizer's per-thread caches): wait
  // until it is gone.
  const auto deadline = std::chrono::steady_clock::now() + kExitWait;
  for (const auto& g : r.gates) {
    while (g->exiting && !ThreadGone(g->tid) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
  ForgetExitedThreads(r);
  for (const auto& g : r.gates) g->mu.lock();
  const pid_t pid = ::fork();
  if (pid == 0) {
    // The helper threads do not exist in the child. Their entries are
    // leaked, not destroyed: their mutexes are locked here.
    for (auto& g : r.gates) (void)g.release();
    r.gates.clear();
    return pid;
  }
  for (const auto& g : r.gates) g->mu.unlock();
  return pid;
}

std::thread ForkGate::StartHelperThread(std::function<void()> body) {
  std::latch registered(1);
  std::thread t([&registered, body = std::move(body)] {
    HelperThread gate;
    registered.count_down();  // the last use of `registered`: the creator may return now
    body();
  });
  registered.wait();
  return t;
}

size_t ForkGate::HelperThreads() {
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  return static_cast<size_t>(std::count_if(r.gates.begin(), r.gates.end(),
                                           [](const std::unique_ptr<Gate>& g) { return !g->exiting; }));
}

}  // namespace ringkv::io
