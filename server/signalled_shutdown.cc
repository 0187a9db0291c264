#include "server/signalled_shutdown.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>

#include "server/logging.h"

namespace ringkv::server {
namespace {

std::atomic<bool> g_under_way{false};
static_assert(std::atomic<bool>::is_always_lock_free);

// Appends the decimal form of v (async-signal-safe).
size_t AppendPid(char* out, size_t at, long v) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  while (n > 0) out[at++] = digits[--n];
  return at;
}

}  // namespace

void SetSignalledShutdown(bool under_way) { g_under_way.store(under_way, std::memory_order_relaxed); }

bool SignalledShutdownUnderWay() { return g_under_way.load(std::memory_order_relaxed); }

void ExitOnInsistentSignal() {
  static constexpr char kLine[] = "You insist on killing ringkv, exiting now.\n";
  LogRawFromHandler(kLine, sizeof(kLine) - 1);
  // The final snapshot's temp file (server/persistence/rdb_saver.cc names it).
  char path[48] = "temp-";
  size_t len = AppendPid(path, 5, static_cast<long>(getpid()));
  for (const char* s = ".rdb"; *s != '\0'; ++s) path[len++] = *s;
  path[len] = '\0';
  ::unlink(path);
  _exit(1);
}

}  // namespace ringkv::server
