#include "core/latency_histogram.h"

#include <algorithm>

namespace ringkv::core {

int64_t LatencyHistogram::SlotLowestNs(int slot) {
  if (slot == 0) return 1;  // 0 us, recorded as 1 ns
  if (slot < kExactMicros) return LowestEquivalentNs(int64_t{slot} * 1000);
  return HdrValueAtIndex(slot - kExactMicros + kFirstSharedIndex);
}

int64_t LatencyHistogram::ValueAtPercentile(double percentile) const {
  const double requested = percentile < 100.0 ? percentile : 100.0;
  const int64_t wanted = std::max<int64_t>(
      1, static_cast<int64_t>((requested / 100) * static_cast<double>(total_) + 0.5));
  uint64_t cumulative = 0;
  for (int slot = 0; slot < kSlots; ++slot) {
    cumulative += counts_[slot];
    if (cumulative >= static_cast<uint64_t>(wanted)) {
      const int64_t value = SlotLowestNs(slot);
      return percentile == 0.0 ? LowestEquivalentNs(value) : HighestEquivalentNs(value);
    }
  }
  return 0;
}

}  // namespace ringkv::core
