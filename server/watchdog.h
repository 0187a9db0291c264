// Watchdog: Redis's software watchdog (`watchdog-period <ms>`).
//
// While a period is set, every cron tick re-arms a one-shot timer of that
// length aimed at the main thread. A main thread stuck longer than the
// period (a slow command, DEBUG SLEEP, a blocking load) gets SIGALRM; the
// handler logs Redis's "--- WATCHDOG TIMER EXPIRED ---" report with the
// main thread's stack, and the server carries on: the watchdog reports, it
// never kills. The period is raised to at least two cron ticks, as in Redis,
// so a healthy server never trips it.
//
// Work that clients wait on but that runs off the main thread -- a replica
// loading a payload of another history, while every client gets -LOADING --
// is watched too: the worker marks it with a BlockingWork scope, and once
// it has run a whole period the next cron tick sends SIGALRM to that worker,
// which logs the same report with the worker's stack (where the load is
// stuck: usually a read from the primary). That is what Redis reports for
// its main thread blocked in such a load, and the worker's blocking reads
// are written to be interrupted by it (EINTR is retried). One report per
// BlockingWork, as Redis's one-shot timer gives one per blocked stretch.
//
// Thread-safety: construct, SetPeriod and Feed on the main thread only (the
// timer targets the thread that created the Watchdog). BlockingWork on any
// thread; at most one is watched at a time (a second one nested or
// concurrent is not watched).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <ctime>

namespace ringkv::server {

// crash-log-enabled: on SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT, log
// Redis's crash report ("crashed by signal", "------ STACK TRACE ------",
// the crashing thread's stack) before the signal's default action; off, the
// default action alone. Redis's memory test after the report
// (crash-memcheck-enabled) is not built. ASan builds keep the sanitizer's
// handlers. Main thread; the handler is process-wide.
void SetCrashLog(bool on);

class Watchdog {
 public:
  Watchdog() = default;
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // period_ms 0 turns the watchdog off (and cancels a pending expiry);
  // otherwise the next Feed() arms it. `hz` is the cron frequency.
  void SetPeriod(int64_t period_ms, int hz);
  // Called once per cron tick: pushes the expiry one period ahead.
  void Feed();
  int64_t period_ms() const { return period_ms_; }

  // RAII: the calling thread runs work that clients wait on, from now until
  // destruction.
  class BlockingWork {
   public:
    BlockingWork();
    ~BlockingWork();
    BlockingWork(const BlockingWork&) = delete;
    BlockingWork& operator=(const BlockingWork&) = delete;

   private:
    bool registered_ = false;
  };

 private:
  // Signals the registered BlockingWork's thread once it has run a period.
  void CheckBlockingWork();

  // Creates the timer and installs the SIGALRM handler on first use.
  bool EnsureTimer();
  void Arm(int64_t ms);

  int64_t period_ms_ = 0;
  bool have_timer_ = false;
  timer_t timer_{};
};

}  // namespace ringkv::server
