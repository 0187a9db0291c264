// LatencyHistogram: the distribution of one command's latencies, for
// LATENCY HISTOGRAM and INFO latencystats.
//
// Redis 7.0 keeps one HdrHistogram per command (1 ns .. 1 s, 2 significant
// figures) and records each call as its duration in microseconds times 1000.
// This is a fixed-bucket log-linear histogram laid out so that every answer
// equals HdrHistogram's for those inputs, bucket for bucket:
//
//   - HdrHistogram's buckets for 2 significant figures: values below 256 ns
//     are exact; above, each power of two [2^k, 2^(k+1)) is cut into 128
//     equal sub-buckets (a relative width of at most 1/128).
//   - Recorded values are whole microseconds (0 us is recorded as 1 ns, as
//     Redis clamps it). Below 132 us every microsecond falls in a bucket of
//     its own (those buckets are at most 512 ns wide), so one slot per
//     microsecond; from 132 us (131,072 ns) every HdrHistogram bucket holds
//     at least one whole microsecond, so one slot per bucket, up to the one
//     holding 1 s (the clamp).
//
// That is 1,779 counters (about 14 KiB), against HdrHistogram's 3,072: the
// ones a microsecond value can never reach are left out. Recording is a
// compare, and above 131 us a multiply, a count-leading-zeros and two shifts.
//
// Example:
//   LatencyHistogram h;
//   h.Record(12);                               // 12 us
//   double p50_us = h.ValueAtPercentile(50) / 1000.0;   // 12.031 (12,031 ns)
//
// Thread-safety: none (a command's histogram is main-thread state).
#pragma once

#include <array>
#include <bit>
#include <cstdint>

namespace ringkv::core {

class LatencyHistogram {
 public:
  static constexpr uint64_t kMaxMicros = 1000000;  // 1 s: longer calls count as 1 s

  void Record(uint64_t micros) {
    ++counts_[SlotOf(micros)];
    ++total_;
  }
  uint64_t total() const { return total_; }

  // HdrHistogram's hdr_value_at_percentile, in nanoseconds: the highest
  // value of the bucket where the cumulative count reaches `percentile`
  // percent (its lowest value for percentile 0). 0 when empty.
  int64_t ValueAtPercentile(double percentile) const;

  // LATENCY HISTOGRAM's cumulative distribution: HdrHistogram's logarithmic
  // iteration from 1024 ns by powers of two. Calls fn(upper_us, cumulative)
  // for each step whose cumulative count grew: `upper_us` is the step's
  // highest value in microseconds (1, 2, 4, 8, 16, 33, 66, 132, ...),
  // `cumulative` the calls that took at most that long.
  template <typename Fn>
  void ForEachCumulativeStep(Fn fn) const {
    uint64_t cumulative = 0, reported = 0;
    int slot = 0;
    for (int step = 0; step < kLogSteps; ++step) {
      const int64_t level = int64_t{1024} << step;
      while (slot < kSlots && SlotLowestNs(slot) <= level) cumulative += counts_[slot++];
      if (cumulative > reported) {
        fn(HighestEquivalentNs(level) / 1000, cumulative);
        reported = cumulative;
      }
    }
    // The next level (2^30 ns) is past HdrHistogram's last bucket: its
    // iteration ends there with the top bucket's highest value.
    if (total_ > reported) fn(kTopHighestNs / 1000, total_);
  }

  // ---- HdrHistogram's arithmetic (public for the tests) ---------------------
  // The slot counting `micros`.
  static int SlotOf(uint64_t micros) {
    if (micros < kExactMicros) return static_cast<int>(micros);
    if (micros > kMaxMicros) micros = kMaxMicros;
    return HdrIndex(static_cast<int64_t>(micros) * 1000) - kFirstSharedIndex + kExactMicros;
  }
  // The lowest value (ns) a slot's bucket holds.
  static int64_t SlotLowestNs(int slot);
  static int64_t LowestEquivalentNs(int64_t ns) {
    const int b = BucketOf(ns);
    return (ns >> b) << b;
  }
  static int64_t HighestEquivalentNs(int64_t ns) { return LowestEquivalentNs(ns) + (int64_t{1} << BucketOf(ns)) - 1; }

 private:
  // HdrHistogram(1, 1e9, 2): 256 sub-buckets, 128 per half, unit 1 ns.
  static int BucketOf(int64_t ns) { return 64 - std::countl_zero(static_cast<uint64_t>(ns | 255)) - 8; }
  static int HdrIndex(int64_t ns) {
    const int b = BucketOf(ns);
    return ((b + 1) << 7) + static_cast<int>(ns >> b) - 128;
  }
  static int64_t HdrValueAtIndex(int index) {
    int b = (index >> 7) - 1;
    int sub = (index & 127) + 128;
    if (b < 0) {
      sub -= 128;
      b = 0;
    }
    return int64_t{sub} << b;
  }

  static constexpr int kExactMicros = 132;         // 0..131 us: a slot each
  static constexpr int kFirstSharedIndex = 1408;   // HdrIndex(131,072 ns)
  static constexpr int kLastIndex = 3054;          // HdrIndex(1e9 ns)
  static constexpr int kSlots = kExactMicros + kLastIndex - kFirstSharedIndex + 1;
  static constexpr int kLogSteps = 20;             // 1024 ns .. 2^29 ns
  static constexpr int64_t kTopHighestNs = (int64_t{1} << 30) - 1;  // HdrHistogram's last bucket ends there

  std::array<uint64_t, kSlots> counts_{};
  uint64_t total_ = 0;
};

}  // namespace ringkv::core
