// Server: the latency events the server itself measures beside what
// LatencyStats records (latency_stats.h), and LATENCY DOCTOR's inputs.
// docs/observability.md lists every event and where it is taken.
#include "server/memory_stats.h"
#include "server/server.h"

namespace ringkv::server {

void Server::NoteEvictionLatency(uint64_t start_ticks, uint64_t evicted_before, bool fits) {
  // As Redis's performEvictions: a cycle counts only when memory was over
  // the limit (something was evicted, or nothing could be).
  if (stats_.evicted_keys == evicted_before && fits) return;
  LatencyMonitor& monitor = latency_.monitor();
  monitor.AddIfNeeded("eviction-cycle", clock_.TicksToMicros(Clock::Ticks() - start_ticks) / 1000);
  monitor.AddIfNeeded("eviction-del", evictor_.slowest_deletion_us() / 1000);
}

LatencyDoctorInput Server::LatencyDoctorInputs() const {
  LatencyDoctorInput in;
  in.threshold_ms = latency_.monitor().threshold_ms();
  in.slowlog_log_slower_than_us = slowlog_.threshold_us();
  in.fork_rate_gb_per_s = latency_.fork_rate_gb_per_s();
  in.appendfsync_always = config_->Str("appendfsync") == "always";
  in.hz = hz_;
  in.anon_huge_pages = ProcessHasAnonHugePages();
  return in;
}

}  // namespace ringkv::server
