// Clock: cheap time for the command path.
//
// Reading the TSC costs a few nanoseconds; clock_gettime costs several times
// that (more under virtualization), and a command needs the wall time (for
// expiry) and two timestamps (for INFO commandstats and SLOWLOG). Clock reads
// the TSC and converts, with the rate calibrated at start-up and the wall
// clock re-anchored by the cron (Anchor()) so it never drifts by more than a
// tick's worth of TSC error. Without an invariant TSC the wall time falls
// back to gettimeofday and durations (TicksToMicros / TicksToMillis, also
// a running script's age for busy-reply-threshold) are approximate.
//
// Ticks() is static (a plain TSC read): code without the Server's Clock,
// such as a script's start, takes a reading and converts it later through
// Server::clock().
//
// Thread-safety: main thread only (Anchor and WallMs share state).
#pragma once

#include <cstdint>

namespace ringkv::server {

class Clock {
 public:
  Clock();
  // Monotonic ticks; TicksToMicros converts a difference.
  static uint64_t Ticks();
  int64_t TicksToMicros(uint64_t ticks) const { return static_cast<int64_t>(ticks * micros_per_tick_); }
  int64_t TicksToMillis(uint64_t ticks) const { return static_cast<int64_t>(ticks * ms_per_tick_); }
  // Unix time in milliseconds.
  int64_t WallMs() const { return WallMsAt(Ticks()); }
  // Unix time in milliseconds at `ticks` (a Ticks() reading taken since the
  // last Anchor()): the command path reads the TSC once and derives both the
  // wall time and the start of its duration from that one reading.
  int64_t WallMsAt(uint64_t ticks) const;
  // Re-reads the system clock (called by the cron every tick).
  void Anchor();

 private:
  double micros_per_tick_ = 0.001;
  double ms_per_tick_ = 0.000001;
  uint64_t anchor_ticks_ = 0;
  int64_t anchor_ms_ = 0;
  bool tsc_ = false;
};

// Current wall-clock time in milliseconds / microseconds (gettimeofday:
// for what is not on the command path).
int64_t UnixMs();
int64_t UnixUs();
// Monotonic microseconds (steady_clock): for durations and deadlines that
// must not move with the wall clock.
int64_t SteadyUs();

}  // namespace ringkv::server
