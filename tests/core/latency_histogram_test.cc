#include "core/latency_histogram.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <utility>
#include <vector>

namespace ringkv::core {
namespace {

// A plain model of HdrHistogram(1, 1e9, 2) as Redis 7.0 uses it: every one
// of its 3,072 counters, hdr_value_at_percentile, and the logarithmic
// iterator (first bucket 1024, base 2) with Redis's "report a step only
// when the cumulative count grew". LatencyHistogram must answer the same.
class HdrModel {
 public:
  void RecordMicros(int64_t us) {
    int64_t v = us * 1000;
    if (v < 1) v = 1;
    if (v > 1000000000) v = 1000000000;
    ++counts_[Index(v)];
    ++total_;
  }
  int64_t ValueAtPercentile(double p) const {
    const double requested = p < 100.0 ? p : 100.0;
    int64_t wanted = static_cast<int64_t>((requested / 100) * static_cast<double>(total_) + 0.5);
    if (wanted < 1) wanted = 1;
    int64_t sum = 0;
    for (int i = 0; i < kLen; ++i) {
      sum += counts_[i];
      if (sum >= wanted) {
        const int64_t v = ValueAt(i);
        return p == 0.0 ? Lowest(v) : Highest(v);
      }
    }
    return 0;
  }
  // The iterator of hdr_iter_log_init(h, 1024, 2), step by step.
  std::vector<std::pair<int64_t, int64_t>> LogSteps() const {
    std::vector<std::pair<int64_t, int64_t>> out;
    int index = -1;
    int64_t cumulative = 0, highest = 0, previous = 0;
    int64_t level = 1024, level_lowest = Lowest(1024);
    auto peek = [&] { return ValueAt(index + 1); };
    auto emit = [&] {
      if (cumulative > previous) out.emplace_back(highest / 1000, cumulative);
      previous = cumulative;
    };
    for (int guard = 0; guard < 100; ++guard) {
      if (!(cumulative < total_ || peek() > level_lowest)) break;
      bool reported = false;
      while (!reported) {
        if (peek() > level_lowest) {
          level *= 2;
          level_lowest = Lowest(level);
          reported = true;
          break;
        }
        if (++index >= kLen) {
          reported = true;
          break;
        }
        cumulative += counts_[index];
        highest = Highest(ValueAt(index));
      }
      emit();
    }
    return out;
  }

 private:
  static constexpr int kLen = 3072;
  static int Bucket(int64_t v) { return 64 - __builtin_clzll(static_cast<uint64_t>(v | 255)) - 8; }
  static int Index(int64_t v) {
    const int b = Bucket(v);
    return ((b + 1) << 7) + static_cast<int>(v >> b) - 128;
  }
  static int64_t ValueAt(int i) {
    int b = (i >> 7) - 1, sub = (i & 127) + 128;
    if (b < 0) {
      sub -= 128;
      b = 0;
    }
    return static_cast<int64_t>(sub) << b;
  }
  static int64_t Lowest(int64_t v) { return (v >> Bucket(v)) << Bucket(v); }
  static int64_t Highest(int64_t v) { return Lowest(v) + (int64_t{1} << Bucket(v)) - 1; }

  std::vector<int64_t> counts_ = std::vector<int64_t>(kLen);
  int64_t total_ = 0;
};

std::vector<std::pair<int64_t, int64_t>> Steps(const LatencyHistogram& h) {
  std::vector<std::pair<int64_t, int64_t>> out;
  h.ForEachCumulativeStep([&](int64_t us, uint64_t n) { out.emplace_back(us, static_cast<int64_t>(n)); });
  return out;
}

// Values redis-server 7.0.15 printed in INFO latencystats (one call each).
TEST(LatencyHistogram, MatchesRedisInfoValues) {
  struct Case {
    uint64_t us;
    int64_t p0_ns, p50_ns;
  } cases[] = {{2, 2000, 2007}, {6, 5984, 6015}, {8, 8000, 8031}, {9, 8960, 9023}, {25, 24960, 25087},
               {31, 30976, 31103}, {77, 76800, 77311}, {0, 1, 1}, {1, 1000, 1003}};
  for (const Case& c : cases) {
    LatencyHistogram h;
    h.Record(c.us);
    EXPECT_EQ(h.ValueAtPercentile(0), c.p0_ns) << c.us;
    EXPECT_EQ(h.ValueAtPercentile(50), c.p50_ns) << c.us;
    EXPECT_EQ(h.ValueAtPercentile(100), c.p50_ns) << c.us;
  }
}

TEST(LatencyHistogram, EmptyAnswersZero) {
  LatencyHistogram h;
  EXPECT_EQ(h.total(), 0u);
  EXPECT_EQ(h.ValueAtPercentile(50), 0);
  EXPECT_TRUE(Steps(h).empty());
}

TEST(LatencyHistogram, StepKeysAreRedisBuckets) {
  LatencyHistogram h;
  for (uint64_t us : {0, 1, 2, 3, 5, 9, 17, 40, 100, 200, 400, 800, 1500, 3000, 6000, 12000, 20000, 50000, 100000,
                      200000, 400000, 600000, 2000000}) {
    h.Record(us);
  }
  const std::vector<std::pair<int64_t, int64_t>> expected = {
      {1, 2},     {2, 3},      {4, 4},      {8, 5},      {16, 6},      {33, 7},       {66, 8},        {132, 9},
      {264, 10},  {528, 11},   {1056, 12},  {2113, 13},  {4227, 14},   {8454, 15},    {16908, 16},    {33816, 17},
      {67633, 18}, {135266, 19}, {270532, 20}, {541065, 21}, {1073741, 23}};
  EXPECT_EQ(Steps(h), expected);
}

TEST(LatencyHistogram, SlotsCoverEveryMicrosecondInOrder) {
  int64_t previous_lowest = 0;
  int previous_slot = -1;
  for (uint64_t us = 0; us <= LatencyHistogram::kMaxMicros; ++us) {
    const int slot = LatencyHistogram::SlotOf(us);
    ASSERT_GE(slot, previous_slot);
    ASSERT_LE(slot, previous_slot + 1) << us;  // no slot is skipped
    if (slot != previous_slot) {
      ASSERT_GT(LatencyHistogram::SlotLowestNs(slot), previous_lowest);
      previous_lowest = LatencyHistogram::SlotLowestNs(slot);
    }
    // The slot's bucket is the one HdrHistogram puts us*1000 in.
    const int64_t ns = us == 0 ? 1 : static_cast<int64_t>(us) * 1000;
    ASSERT_EQ(LatencyHistogram::LowestEquivalentNs(ns), LatencyHistogram::SlotLowestNs(slot)) << us;
    previous_slot = slot;
  }
  EXPECT_EQ(LatencyHistogram::SlotOf(5000000), LatencyHistogram::SlotOf(LatencyHistogram::kMaxMicros));
}

// Random workloads: percentiles and steps equal the HdrHistogram model's.
TEST(LatencyHistogram, AgreesWithHdrHistogram) {
  std::mt19937_64 rng(7);
  const double percentiles[] = {0, 0.001, 1, 10, 12.5, 33.333333, 50, 90, 99, 99.9, 99.99, 99.99999, 100};
  for (int round = 0; round < 200; ++round) {
    LatencyHistogram h;
    HdrModel model;
    const int n = 1 + static_cast<int>(rng() % 2000);
    std::lognormal_distribution<double> dist(std::log(1 + rng() % 5000), 1.5);
    for (int i = 0; i < n; ++i) {
      int64_t us = static_cast<int64_t>(dist(rng));
      if (rng() % 50 == 0) us = static_cast<int64_t>(rng() % 3000000);
      h.Record(static_cast<uint64_t>(us));
      model.RecordMicros(us);
    }
    for (double p : percentiles) ASSERT_EQ(h.ValueAtPercentile(p), model.ValueAtPercentile(p)) << p;
    ASSERT_EQ(Steps(h), model.LogSteps()) << "round " << round;
  }
}

}  // namespace
}  // namespace ringkv::core
