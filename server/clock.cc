#include "server/clock.h"

#include <cpuid.h>
#include <sys/time.h>
#include <time.h>
#include <x86intrin.h>

#include <algorithm>
#include <chrono>


namespace ringkv::server {
namespace {

bool InvariantTsc() {
  unsigned a, b, c, d;
  if (__get_cpuid_max(0x80000000, nullptr) < 0x80000007) return false;
  __cpuid(0x80000007, a, b, c, d);
  return (d & (1u << 8)) != 0;
}

uint64_t MonoNanos() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace

int64_t UnixMs() {
  timeval tv;
  gettimeofday(&tv, nullptr);
  return static_cast<int64_t>(tv.tv_sec) * 1000 + tv.tv_usec / 1000;
}

int64_t UnixUs() {
  timeval tv;
  gettimeofday(&tv, nullptr);
  return static_cast<int64_t>(tv.tv_sec) * 1000000 + tv.tv_usec;
}

int64_t SteadyUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

uint64_t Clock::Ticks() { return __rdtsc(); }

Clock::Clock() {
  // The rate is calibrated even without an invariant TSC: durations
  // (TicksToMicros) are then approximate, the wall clock is not derived.
  // 20 ms against the monotonic clock: enough for well under 0.1% error.
  tsc_ = InvariantTsc();
  uint64_t n0 = MonoNanos(), t0 = Ticks();
  timespec req{0, 20000000};
  nanosleep(&req, nullptr);
  uint64_t n1 = MonoNanos(), t1 = Ticks();
  if (t1 > t0 && n1 > n0) {
    micros_per_tick_ = static_cast<double>(n1 - n0) / 1000.0 / static_cast<double>(t1 - t0);
    ms_per_tick_ = micros_per_tick_ / 1000.0;
  } else {
    tsc_ = false;
  }
  Anchor();
}

void Clock::Anchor() {
  const int64_t now_us = UnixUs();
  const uint64_t now_ticks = Ticks();
  anchor_ms_ = now_us / 1000;
  // The ticks of the start of that millisecond: anchored at the truncated
  // millisecond itself, WallMs would run up to 1 ms behind the wall clock
  // (a PXAT a client computed from its clock would show a PTTL too long).
  const uint64_t into_ms = tsc_ ? static_cast<uint64_t>(static_cast<double>(now_us % 1000) / micros_per_tick_) : 0;
  anchor_ticks_ = now_ticks - std::min(into_ms, now_ticks);
}

int64_t Clock::WallMsAt(uint64_t ticks) const {
  if (!tsc_) return UnixMs();
  return anchor_ms_ + static_cast<int64_t>(static_cast<double>(ticks - anchor_ticks_) * ms_per_tick_);
}

}  // namespace ringkv::server
