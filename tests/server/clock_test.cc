// Clock: the wall time derived from one TSC reading.
#include "server/clock.h"

#include <gtest/gtest.h>

namespace ringkv::server {
namespace {

TEST(ClockTest, WallMsAtAgreesWithWallMsAndTheSystemClock) {
  Clock clock;
  const int64_t before = UnixMs();
  const uint64_t ticks = Clock::Ticks();
  const int64_t at = clock.WallMsAt(ticks);
  const int64_t now = clock.WallMs();
  const int64_t after = UnixMs();
  // Within a millisecond of the system clock on either side (Anchor's rounding).
  EXPECT_GE(at, before - 1);
  EXPECT_LE(at, after + 1);
  EXPECT_LE(at, now);  // a later reading never goes back
  EXPECT_LE(now, after + 1);
}

TEST(ClockTest, WallMsAtIsAPureFunctionOfTheReading) {
  Clock clock;
  const uint64_t ticks = Clock::Ticks();
  EXPECT_EQ(clock.WallMsAt(ticks), clock.WallMsAt(ticks));
  // Monotonic in the reading.
  const uint64_t later = Clock::Ticks();
  EXPECT_LE(clock.WallMsAt(ticks), clock.WallMsAt(later));
}

TEST(ClockTest, TicksToMicrosMeasuresADuration) {
  Clock clock;
  const uint64_t start = Clock::Ticks();
  const int64_t start_us = UnixUs();
  while (UnixUs() - start_us < 2000) {
  }
  const int64_t us = clock.TicksToMicros(Clock::Ticks() - start);
  EXPECT_GE(us, 1800);
  EXPECT_LT(us, 200000);
}

// A running script's age (busy-reply-threshold) is read this way.
TEST(ClockTest, TicksToMillisMeasuresADuration) {
  Clock clock;
  const uint64_t start = Clock::Ticks();
  const int64_t start_us = UnixUs();
  while (UnixUs() - start_us < 5000) {
  }
  const int64_t ms = clock.TicksToMillis(Clock::Ticks() - start);
  EXPECT_GE(ms, 4);
  EXPECT_LT(ms, 200);
}

}  // namespace
}  // namespace ringkv::server
