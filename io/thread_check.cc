#include "io/thread_check.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace ringkv::io {
namespace {

// A default-constructed id names no thread: nothing bound yet.
std::atomic<std::thread::id> g_main_thread{};

}  // namespace

void BindMainThread() { g_main_thread.store(std::this_thread::get_id(), std::memory_order_relaxed); }

bool OnMainThread() {
  const std::thread::id self = std::this_thread::get_id();
  std::thread::id bound = g_main_thread.load(std::memory_order_relaxed);
  if (bound == self) return true;
  if (bound != std::thread::id()) return false;
  // Nothing bound yet: the first thread to ask is the main thread.
  return g_main_thread.compare_exchange_strong(bound, self, std::memory_order_relaxed) || bound == self;
}

void MainThreadCheckFailed(const char* file, int line, const char* function) {
  std::fprintf(stderr, "%s:%d: %s: main-thread-only function called from another thread\n", file, line, function);
  std::fflush(stderr);
  std::abort();
}

}  // namespace ringkv::io
