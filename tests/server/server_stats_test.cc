#include "server/server_stats.h"

#include <gtest/gtest.h>

namespace ringkv::server {
namespace {

// One sample per 100 ms: the rate is the mean of the last 16.
TEST(InstantaneousMetricTest, RateIsTheMeanOfTheSamples) {
  InstantaneousMetric m;
  m.Sample(1000, 0);  // the base
  for (int i = 1; i <= 16; ++i) m.Sample(1000 + 100 * i, 1000 * static_cast<uint64_t>(i));
  EXPECT_EQ(m.rate(), 10000u);  // 1,000 every 100 ms
}

// CONFIG RESETSTAT sets the totals back to 0: the metric starts over.
// Was: the next sample read the drop as 2^64 - n, and INFO showed
// instantaneous_ops_per_sec of about 10^16.
TEST(InstantaneousMetricTest, ResetCountersStartsTheRatesOver) {
  ServerStats stats;
  stats.ops.Sample(1000, 0);
  stats.total_commands = 5000;
  stats.ops.Sample(1100, stats.total_commands);
  ASSERT_GT(stats.ops.rate(), 0u);
  stats.ResetCounters();
  EXPECT_EQ(stats.ops.rate(), 0u);
  stats.ops.Sample(1200, stats.total_commands);  // 0 now: only the base
  stats.total_commands = 10;
  stats.ops.Sample(1300, stats.total_commands);
  EXPECT_EQ(stats.ops.rate(), 100u / 16);
}

}  // namespace
}  // namespace ringkv::server
