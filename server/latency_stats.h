// LatencyStats: what the server measures of its own latency -- LATENCY's
// events (latency-monitor-threshold), the per-command histograms of
// latency-tracking (LATENCY HISTOGRAM, INFO latencystats) and the fork rate
// LATENCY DOCTOR weighs.
//
// Owns the LatencyMonitor and the settings, bound to the config at
// construction. The histograms themselves live on each CommandSpec (created
// by the first call recorded, dropped by CONFIG RESETSTAT). The gate calls
// RecordCommand after every command: inlined, one branch when tracking is
// off and the threshold is not passed.
//
// Thread-safety: main thread only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/latency_histogram.h"
#include "server/command.h"
#include "server/latency_monitor.h"

namespace ringkv::core {
class Evictor;
}  // namespace ringkv::core

namespace ringkv::server {

class Config;

class LatencyStats {
 public:
  // Binds latency-monitor-threshold (which also makes `evictor` time its
  // deletions), latency-tracking and latency-tracking-info-percentiles.
  // `config` and `evictor` outlive this object.
  LatencyStats(Config& config, core::Evictor& evictor);
  LatencyStats(const LatencyStats&) = delete;
  LatencyStats& operator=(const LatencyStats&) = delete;

  LatencyMonitor& monitor() { return monitor_; }
  const LatencyMonitor& monitor() const { return monitor_; }
  // latency-tracking and latency-tracking-info-percentiles.
  bool tracking() const { return tracking_; }
  const std::vector<double>& percentiles() const { return percentiles_; }

  // A command's duration: its histogram (latency-tracking) and the
  // "command" / "fast-command" event.
  void RecordCommand(const CommandSpec& spec, int64_t duration_us) {
    RecordHistogram(spec, duration_us);
    // The threshold first: the event's name and milliseconds only when the
    // monitor is on (off by default), not on every command.
    if (monitor_.threshold_ms() > 0) [[unlikely]] {
      monitor_.AddIfNeeded((spec.flags & cmd::kFast) ? "fast-command" : "command", duration_us / 1000);
    }
  }
  // The histogram alone (a blocked command's first call, counted when it
  // unblocks).
  void RecordHistogram(const CommandSpec& spec, int64_t duration_us) {
    if (!tracking_) return;
    if (!spec.latency_histogram) spec.latency_histogram = std::make_unique<core::LatencyHistogram>();
    spec.latency_histogram->Record(static_cast<uint64_t>(std::max<int64_t>(0, duration_us)));
  }
  // A fork child started, taking `fork_us` with `allocated` bytes in use:
  // the "fork" event and Redis's stat_fork_rate.
  void OnForked(int64_t fork_us, uint64_t allocated);
  // GB of used memory forked per second at the last fork (LATENCY DOCTOR).
  double fork_rate_gb_per_s() const { return fork_rate_gb_per_s_; }

 private:
  LatencyMonitor monitor_;
  bool tracking_ = true;
  std::vector<double> percentiles_;
  double fork_rate_gb_per_s_ = 0;
};

}  // namespace ringkv::server
