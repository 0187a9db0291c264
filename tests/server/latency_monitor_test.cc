#include "server/latency_monitor.h"

#include <gtest/gtest.h>

#include <string>

namespace ringkv::server {
namespace {

constexpr int64_t kNow = 1700000000;

TEST(LatencyMonitor, AddIfNeededHonoursTheThreshold) {
  LatencyMonitor m;
  m.AddIfNeeded("command", 500);  // off
  EXPECT_TRUE(m.events().empty());
  m.set_threshold_ms(100);
  m.AddIfNeeded("command", 99);
  EXPECT_TRUE(m.events().empty());
  m.AddIfNeeded("command", 100);
  ASSERT_NE(m.Find("command"), nullptr);
  EXPECT_EQ(m.Find("command")->max, 100u);
}

TEST(LatencyMonitor, OneSamplePerSecondKeepsTheLargest) {
  LatencyMonitor m;
  m.Add("fork", 10, kNow);
  m.Add("fork", 30, kNow);
  m.Add("fork", 20, kNow);
  m.Add("fork", 5, kNow + 1);
  const LatencyMonitor::Series* ts = m.Find("fork");
  ASSERT_NE(ts, nullptr);
  const auto samples = ts->InOrder();
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].time, kNow);
  EXPECT_EQ(samples[0].latency, 30u);
  EXPECT_EQ(samples[1].time, kNow + 1);
  EXPECT_EQ(samples[1].latency, 5u);
  EXPECT_EQ(ts->latest().latency, 5u);
  EXPECT_EQ(ts->max, 30u);
}

TEST(LatencyMonitor, KeepsTheLast160Seconds) {
  LatencyMonitor m;
  for (int i = 0; i < 200; ++i) m.Add("expire-cycle", i, kNow + i);
  const auto samples = m.Find("expire-cycle")->InOrder();
  ASSERT_EQ(samples.size(), 160u);
  EXPECT_EQ(samples.front().time, kNow + 40);
  EXPECT_EQ(samples.back().time, kNow + 199);
  EXPECT_EQ(m.Find("expire-cycle")->max, 199u);
}

TEST(LatencyMonitor, FindIsExactResetIgnoresCase) {
  LatencyMonitor m;
  m.Add("command", 1, kNow);
  m.Add("fork", 1, kNow);
  EXPECT_EQ(m.Find("COMMAND"), nullptr);
  EXPECT_EQ(m.Reset("nosuch"), 0);
  EXPECT_EQ(m.Reset("COMMAND"), 1);
  EXPECT_EQ(m.Find("command"), nullptr);
  ASSERT_EQ(m.events().size(), 1u);
  EXPECT_EQ(m.ResetAll(), 1);
  EXPECT_TRUE(m.events().empty());
}

TEST(LatencyDoctor, DisabledAndQuiet) {
  LatencyMonitor m;
  LatencyDoctorInput in;
  EXPECT_EQ(LatencyDoctorReport(m, in, kNow).rfind("I'm sorry, Dave, I can't do that.", 0), 0u);
  in.threshold_ms = 100;
  EXPECT_EQ(LatencyDoctorReport(m, in, kNow),
            "Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest "
            "bit. I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n");
}

TEST(LatencyDoctor, ReportsEventsAndAdvice) {
  LatencyMonitor m;
  m.Add("command", 300, kNow - 10);
  m.Add("command", 500, kNow);
  m.Add("fork", 120, kNow);
  LatencyDoctorInput in;
  in.threshold_ms = 100;
  in.slowlog_log_slower_than_us = -1;
  in.fork_rate_gb_per_s = 12.5;
  const std::string r = LatencyDoctorReport(m, in, kNow);
  EXPECT_EQ(r.rfind("Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, "
                    "do you Dave?\n\n1. command: 2 latency spikes (average 400ms, mean deviation 100ms, period 5.00 "
                    "sec). Worst all time event 500ms.\n2. fork: 1 latency spikes (average 120ms, mean deviation "
                    "0ms, period 1.00 sec). Worst all time event 120ms. Fork rate is 12.50 GB/sec (poor).\n\nI have "
                    "a few advices for you:\n\n- If you are using a virtual machine",
                    0),
            0u)
      << r;
  EXPECT_NE(r.find("'CONFIG SET slowlog-log-slower-than 100000'. If the Slow log is disabled"), std::string::npos);
  EXPECT_NE(r.find("- Check your Slow Log"), std::string::npos);
  EXPECT_EQ(r.find("hz"), std::string::npos);
}

TEST(LatencyDoctor, AdviceThatDependsOnSettings) {
  LatencyMonitor m;
  m.Add("aof-fsync-always", 200, kNow);
  LatencyDoctorInput in;
  in.threshold_ms = 100;
  // The advice counts but is not printed unless appendfsync is always, as in Redis.
  EXPECT_EQ(LatencyDoctorReport(m, in, kNow).find("Your fsync policy"), std::string::npos);
  in.appendfsync_always = true;
  EXPECT_NE(LatencyDoctorReport(m, in, kNow).find("Your fsync policy is set to 'always'."), std::string::npos);
  m.ResetAll();
  m.Add("while-blocked-cron", 200, kNow);
  EXPECT_NE(LatencyDoctorReport(m, in, kNow).find("\nWhile there are latency events logged, I'm not able to suggest"),
            std::string::npos);
}

TEST(LatencyGraph, RendersRedisSparkline) {
  LatencyMonitor m;
  m.Add("command", 100, kNow - 125);
  m.Add("command", 200, kNow - 12);
  m.Add("command", 300, kNow);
  const std::string expected =
      "command - high 300 ms, low 100 ms (all time high 300 ms)\n" + std::string(80, '-') +
      "\n"
      "  #\n"
      " _|\n"
      " ||\n"
      "_||\n"
      "   \n"
      "210\n"
      "m2s\n"
      " s \n";
  EXPECT_EQ(LatencyGraph(*m.Find("command"), kNow), expected);
}

TEST(LatencyGraph, WrapsAfterEightyColumns) {
  LatencyMonitor m;
  for (int i = 0; i < 90; ++i) m.Add("command", 100, kNow - 89 + i);
  const std::string g = LatencyGraph(*m.Find("command"), kNow);
  // Equal samples: the bottom row only; then the labels; a blank line
  // between the two blocks.
  EXPECT_NE(g.find(std::string(80, '_') + "\n"), std::string::npos);
  EXPECT_NE(g.find("\n\n" + std::string(10, ' ') + "\n" + std::string(10, ' ') + "\n" + std::string(10, ' ') + "\n" +
                   std::string(10, '_') + "\n"),
            std::string::npos)
      << g;
}

TEST(FormatPercentile, AsRedisPrintsIt) {
  EXPECT_EQ(FormatPercentile(50), "50");
  EXPECT_EQ(FormatPercentile(99.9), "99.9");
  EXPECT_EQ(FormatPercentile(-0.0), "-0");
  EXPECT_EQ(FormatPercentile(33.333333333), "33.333333");
  EXPECT_EQ(FormatPercentile(99.9999999), "100");
}

}  // namespace
}  // namespace ringkv::server
