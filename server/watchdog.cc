#include "server/watchdog.h"

#include <execinfo.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "core/strings.h"
#include "server/logging.h"

namespace ringkv::server {
namespace {

// Appends the decimal form of v to buf at *len (async-signal-safe).
void AppendNumber(char* buf, size_t cap, size_t* len, long long v) {
  char digits[24];
  int n = 0;
  const bool negative = v < 0;
  unsigned long long u = negative ? 0ULL - static_cast<unsigned long long>(v) : static_cast<unsigned long long>(v);
  do {
    digits[n++] = static_cast<char>('0' + u % 10);
    u /= 10;
  } while (u != 0);
  if (negative && *len < cap) buf[(*len)++] = '-';
  while (n > 0 && *len < cap) buf[(*len)++] = digits[--n];
}

void AppendText(char* buf, size_t cap, size_t* len, const char* text) {
  for (; *text != '\0' && *len < cap; ++text) buf[(*len)++] = *text;
}

// Redis's serverLogFromHandler: "pid:signal-handler (unix-time) message",
// written with nothing but write(2).
void LogFromHandler(const char* message) {
  char line[256];
  size_t len = 0;
  AppendNumber(line, sizeof(line), &len, getpid());
  AppendText(line, sizeof(line), &len, ":signal-handler (");
  AppendNumber(line, sizeof(line), &len, static_cast<long long>(time(nullptr)));
  AppendText(line, sizeof(line), &len, ") ");
  AppendText(line, sizeof(line), &len, message);
  if (len < sizeof(line)) line[len++] = '\n';
  LogRawFromHandler(line, len);
}

int64_t WatchdogNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The one watched BlockingWork: its thread (0: none), when it began, and
// whether it was reported. Written by the worker, read by the main thread.
std::atomic<pid_t> g_blocking_tid{0};
std::atomic<int64_t> g_blocking_since_ms{0};
std::atomic<bool> g_blocking_reported{true};  // true while none is watched

void OnWatchdogExpired(int /*sig*/, siginfo_t* /*info*/, void* /*context*/) {
  const int saved_errno = errno;
  LogFromHandler("\n--- WATCHDOG TIMER EXPIRED ---");
  void* frames[64];
  const int n = backtrace(frames, 64);
  // Frame 0 is this handler; the rest is where the thread was stuck (the
  // main thread, or a BlockingWork's worker).
  backtrace_symbols_fd(frames + 1, std::max(n - 1, 0), LogFileDescriptor());
  LogFromHandler("--------\n");
  errno = saved_errno;
}

// The crash report (crash-log-enabled): Redis's words that tools and its
// test suite look for, the stack of the crashing thread, then the signal's
// default action (a core dump where enabled), as Redis.
[[maybe_unused]] void OnCrash(int sig, siginfo_t* info, void* /*context*/) {
  char line[128];
  size_t len = 0;
  AppendText(line, sizeof(line), &len, "ringkv crashed by signal: ");
  AppendNumber(line, sizeof(line), &len, sig);
  AppendText(line, sizeof(line), &len, ", si_code: ");
  AppendNumber(line, sizeof(line), &len, info != nullptr ? info->si_code : 0);
  line[len] = '\0';
  LogFromHandler("\n\n=== RINGKV BUG REPORT START: Cut & paste starting from here ===");
  LogFromHandler(line);
  LogFromHandler("\n------ STACK TRACE ------\n");
  void* frames[64];
  const int n = backtrace(frames, 64);
  backtrace_symbols_fd(frames + 1, std::max(n - 1, 0), LogFileDescriptor());
  LogFromHandler("\n=== RINGKV BUG REPORT END. Make sure to include from START to END. ===\n");
  // SA_RESETHAND restored the default action: the signal again ends the process.
  raise(sig);
}

constexpr int kCrashSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

}  // namespace

void SetCrashLog(bool on) {
#if defined(__SANITIZE_ADDRESS__)
  (void)on;  // the sanitizers' own reports are worth more than ours
#else
  if (on) {
    void* warm[1];
    backtrace(warm, 1);  // loads libgcc now, not inside the handler
  }
  struct sigaction sa {};
  sigemptyset(&sa.sa_mask);
  if (on) {
    sa.sa_sigaction = OnCrash;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_RESETHAND;
  } else {
    sa.sa_handler = SIG_DFL;
  }
  for (int sig : kCrashSignals) sigaction(sig, &sa, nullptr);
#endif
}

Watchdog::~Watchdog() {
  if (have_timer_) timer_delete(timer_);
}

bool Watchdog::EnsureTimer() {
  if (have_timer_) return true;
  // backtrace() loads libgcc on its first call, which may allocate: do it
  // now, outside any signal handler.
  void* warm[1];
  backtrace(warm, 1);
  struct sigaction sa {};
  sa.sa_sigaction = OnWatchdogExpired;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGALRM, &sa, nullptr);
  sigevent ev{};
  ev.sigev_notify = SIGEV_THREAD_ID;  // the main thread's stack, not a random thread's
  ev.sigev_signo = SIGALRM;
  ev._sigev_un._tid = static_cast<pid_t>(syscall(SYS_gettid));
  if (timer_create(CLOCK_MONOTONIC, &ev, &timer_) != 0) {
    Log(kWarning, StrCat("Watchdog disabled: timer_create failed: ", std::strerror(errno)));
    return false;
  }
  have_timer_ = true;
  return true;
}

void Watchdog::Arm(int64_t ms) {
  itimerspec spec{};
  spec.it_value.tv_sec = ms / 1000;
  spec.it_value.tv_nsec = (ms % 1000) * 1000000;
  timer_settime(timer_, 0, &spec, nullptr);
}

void Watchdog::SetPeriod(int64_t period_ms, int hz) {
  if (period_ms <= 0) {
    period_ms_ = 0;
    if (have_timer_) Arm(0);  // disarms
    return;
  }
  const int64_t min_period = (1000 / std::max(hz, 1)) * 2;
  period_ms_ = std::max(period_ms, min_period);
  if (EnsureTimer()) Arm(period_ms_);
}

void Watchdog::Feed() {
  if (period_ms_ > 0 && have_timer_) {
    Arm(period_ms_);
    CheckBlockingWork();
  }
}

void Watchdog::CheckBlockingWork() {
  const pid_t tid = g_blocking_tid.load(std::memory_order_acquire);
  if (tid == 0 || g_blocking_reported.load(std::memory_order_acquire)) return;
  if (WatchdogNowMs() - g_blocking_since_ms.load(std::memory_order_relaxed) < period_ms_) return;
  g_blocking_reported.store(true, std::memory_order_relaxed);
  // The handler is installed (have_timer_), so the signal only logs. The
  // BlockingWork may have just ended; its thread is then still alive (its
  // scope ended, not the thread: workers are joined on the main thread), or
  // gone, when tgkill fails with ESRCH and nothing happens.
  syscall(SYS_tgkill, getpid(), tid, SIGALRM);
}

Watchdog::BlockingWork::BlockingWork() {
  pid_t expected = 0;
  const pid_t self = static_cast<pid_t>(syscall(SYS_gettid));
  registered_ = g_blocking_tid.compare_exchange_strong(expected, self, std::memory_order_acq_rel);
  if (!registered_) return;
  // `since` is published by the release store of `reported`: the main
  // thread reads `since` only after it saw reported == false.
  g_blocking_since_ms.store(WatchdogNowMs(), std::memory_order_relaxed);
  g_blocking_reported.store(false, std::memory_order_release);
}

Watchdog::BlockingWork::~BlockingWork() {
  if (!registered_) return;
  g_blocking_reported.store(true, std::memory_order_release);
  g_blocking_tid.store(0, std::memory_order_release);
}

}  // namespace ringkv::server
