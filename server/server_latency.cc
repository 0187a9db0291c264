// Latency monitoring (LATENCY's events) and latency tracking (per-command
// histograms): their settings and the events the server itself measures.
// docs/observability.md lists every event and where it is taken.
#include <cstdlib>

#include "core/strings.h"
#include "server/memory_stats.h"
#include "server/server.h"

namespace ringkv::server {

void Server::BindLatencyConfig() {
  Config& c = *config_;
  c.Bind("latency-monitor-threshold", [this] {
    latency_.set_threshold_ms(config_->Int("latency-monitor-threshold"));
    evictor_.set_time_deletions(latency_.threshold_ms() > 0);
  });
  c.Bind("latency-tracking", &latency_tracking_);
  // The canonical value is checked already (config_params.cc): numbers
  // between 0 and 100 separated by single spaces, or "".
  c.Bind("latency-tracking-info-percentiles", [this] {
    latency_percentiles_.clear();
    for (std::string_view p : Split(config_->Str("latency-tracking-info-percentiles"), ' ', /*skip_empty=*/true)) {
      latency_percentiles_.push_back(std::strtod(std::string(p).c_str(), nullptr));
    }
  });
}

void Server::OnForked() {
  const int64_t fork_us = child_.last_fork_us();
  // Redis's stat_fork_rate: GB of used memory forked per second.
  if (fork_us > 0) {
    fork_rate_gb_per_s_ = static_cast<double>(AllocatedBytes()) * 1000000 / static_cast<double>(fork_us) /
                          (1024.0 * 1024 * 1024);
  }
  latency_.AddIfNeeded("fork", fork_us / 1000);
}

void Server::NoteEvictionLatency(uint64_t start_ticks, uint64_t evicted_before, bool fits) {
  // As Redis's performEvictions: a cycle counts only when memory was over
  // the limit (something was evicted, or nothing could be).
  if (stats_.evicted_keys == evicted_before && fits) return;
  latency_.AddIfNeeded("eviction-cycle", clock_.TicksToMicros(Clock::Ticks() - start_ticks) / 1000);
  latency_.AddIfNeeded("eviction-del", evictor_.slowest_deletion_us() / 1000);
}

LatencyDoctorInput Server::LatencyDoctorInputs() const {
  LatencyDoctorInput in;
  in.threshold_ms = latency_.threshold_ms();
  in.slowlog_log_slower_than_us = slowlog_.threshold_us();
  in.fork_rate_gb_per_s = fork_rate_gb_per_s_;
  in.appendfsync_always = config_->Str("appendfsync") == "always";
  in.hz = hz_;
  in.anon_huge_pages = ProcessHasAnonHugePages();
  return in;
}

}  // namespace ringkv::server
