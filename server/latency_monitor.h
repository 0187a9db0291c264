// LatencyMonitor: the latency events LATENCY LATEST / HISTORY / GRAPH /
// DOCTOR report, as Redis 7.0's latency.c keeps them.
//
// An event is a name ("command", "fast-command", "fork", "expire-cycle",
// "aof-write", ...; docs/observability.md lists where each is measured).
// Each gets, on its first sample, a ring of the last 160 samples -- at most
// one per second: a later sample in the same second only raises that
// second's latency -- and the largest latency it ever had. Samples are
// taken only while latency-monitor-threshold (milliseconds) is set and the
// latency reaches it, so AddIfNeeded costs one compare when monitoring is
// off (the default).
//
// Example:
//   monitor.set_threshold_ms(100);
//   monitor.AddIfNeeded("fork", fork_us / 1000);
//
// Thread-safety: main thread only.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ringkv::server {

class LatencyMonitor {
 public:
  static constexpr int kSamples = 160;
  struct Sample {
    int32_t time = 0;  // unix seconds; 0: an unused slot
    uint32_t latency = 0;  // milliseconds
  };
  struct Series {
    std::string name;
    std::array<Sample, kSamples> samples{};
    int next = 0;          // the slot the next second's sample takes
    uint32_t max = 0;      // the all-time high
    const Sample& latest() const { return samples[(next + kSamples - 1) % kSamples]; }
    // The samples present, oldest first.
    std::vector<Sample> InOrder() const;
  };

  void set_threshold_ms(int64_t ms) { threshold_ms_ = ms; }
  int64_t threshold_ms() const { return threshold_ms_; }

  // Redis's latencyAddSampleIfNeeded.
  void AddIfNeeded(std::string_view event, int64_t latency_ms) {
    if (threshold_ms_ > 0 && latency_ms >= threshold_ms_) Add(event, latency_ms, NowSeconds());
  }
  void Add(std::string_view event, int64_t latency_ms, int64_t now_s);

  // LATENCY RESET: every event, or those named `event` in any case; returns
  // how many were dropped.
  int ResetAll();
  int Reset(std::string_view event);
  // By its exact name; nullptr when it has no samples.
  const Series* Find(std::string_view event) const;
  // In the order they first got a sample.
  const std::vector<std::unique_ptr<Series>>& events() const { return events_; }

  static int64_t NowSeconds();

 private:
  int64_t threshold_ms_ = 0;
  std::vector<std::unique_ptr<Series>> events_;
};

// Times one operation for an event, only while monitoring is on (a null
// monitor: never):
//   LatencyTimer t(monitor);
//   rename(...);
//   t.End("aof-rename");
class LatencyTimer {
 public:
  explicit LatencyTimer(LatencyMonitor* m) : monitor_(m != nullptr && m->threshold_ms() > 0 ? m : nullptr) {
    if (monitor_ != nullptr) start_ = std::chrono::steady_clock::now();
  }
  bool active() const { return monitor_ != nullptr; }
  int64_t ElapsedMs() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start_).count();
  }
  void End(std::string_view event) const {
    if (monitor_ != nullptr) monitor_->AddIfNeeded(event, ElapsedMs());
  }

 private:
  LatencyMonitor* monitor_;
  std::chrono::steady_clock::time_point start_;
};

// What LATENCY DOCTOR weighs besides the samples.
struct LatencyDoctorInput {
  int64_t threshold_ms = 0;
  int64_t slowlog_log_slower_than_us = 0;
  double fork_rate_gb_per_s = 0;  // Redis's stat_fork_rate: used memory / duration of the last fork
  bool appendfsync_always = false;
  int hz = 10;
  bool anon_huge_pages = false;  // the process has transparent huge pages
};

// LATENCY DOCTOR's report, Redis 7.0's words.
std::string LatencyDoctorReport(const LatencyMonitor& monitor, const LatencyDoctorInput& in, int64_t now_s);
// LATENCY GRAPH's ASCII art: a header, then Redis's sparkline (80 columns,
// 4 rows) with each sample's age as a vertical label.
std::string LatencyGraph(const LatencyMonitor::Series& series, int64_t now_s);
// A percentile as Redis prints it: "%f" without trailing zeros ("99.9",
// "50", "-0").
std::string FormatPercentile(double p);
// Whether /proc/self/smaps_rollup shows AnonHugePages in use.
bool ProcessHasAnonHugePages();

}  // namespace ringkv::server
