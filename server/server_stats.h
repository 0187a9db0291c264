// ServerStats: the server's own counters -- what INFO's stats section and
// rdb_changes_since_last_save report -- and the instantaneous_ops_per_sec
// sampler.
//
// A plain value owned by the Server: the gate, the components' glue and the
// replication code count into it directly; CONFIG RESETSTAT resets what
// Redis resets. Thread-safety: main thread only.
#pragma once

#include <cstdint>

#include "io/net_stats.h"

namespace ringkv::server {

// A rate over the last 16 samples (Redis's STATS_METRIC_SAMPLES), one per
// cron tick at most every 100 ms: units per second since the previous one.
class InstantaneousMetric {
 public:
  void Sample(int64_t now_ms, uint64_t total) {
    if (now_ms - last_ms_ < 100) return;
    const int64_t dt = now_ms - last_ms_;
    samples_[index_] = last_ms_ == 0 ? 0 : (total - last_total_) * 1000 / static_cast<uint64_t>(dt);
    index_ = (index_ + 1) % kSamples;
    last_ms_ = now_ms;
    last_total_ = total;
  }
  // Starts over (CONFIG RESETSTAT, as Redis's resetServerStats): the
  // samples go, and the next one only sets the base. Without it a total
  // reset to 0 would read as a drop of 2^64.
  void Reset() { *this = InstantaneousMetric(); }
  // The mean of the samples.
  uint64_t rate() const {
    uint64_t sum = 0;
    for (uint64_t s : samples_) sum += s;
    return sum / kSamples;
  }

 private:
  static constexpr int kSamples = 16;
  uint64_t samples_[kSamples] = {};
  int index_ = 0;
  int64_t last_ms_ = 0;
  uint64_t last_total_ = 0;
};

struct ServerStats {
  uint64_t total_connections = 0;
  uint64_t rejected_connections = 0;
  uint64_t total_commands = 0;
  uint64_t total_error_replies = 0;
  uint64_t unexpected_error_replies = 0;
  uint64_t dump_payload_sanitizations = 0;  // packed blobs of RESTORE payloads sanitized
  uint64_t evicted_keys = 0;
  uint64_t evicted_clients = 0;  // maxmemory-clients
  uint64_t sync_full = 0;
  uint64_t sync_partial_ok = 0;
  uint64_t sync_partial_err = 0;
  uint64_t dirty = 0;  // changes since the last successful save (rdb_changes_since_last_save)
  uint64_t expire_cycle_us = 0;  // time in the active expire cycle (expire_cycle_cpu_milliseconds)
  // Time used memory stayed above maxmemory with eviction unable to bring it
  // back (Redis's stat_total_eviction_exceeded_time): the closed periods,
  // and the start of the open one (monotonic microseconds; 0 when none).
  uint64_t eviction_exceeded_total_us = 0;
  uint64_t eviction_exceeded_since_us = 0;
  // instantaneous_ops_per_sec and the instantaneous_*_kbps: rates sampled
  // by the cron, as Redis's trackInstantaneousMetric.
  InstantaneousMetric ops, net_input, net_output, net_repl_input, net_repl_output;
  // The I/O threads' counts at the last CONFIG RESETSTAT (they only grow;
  // INFO shows what came after).
  io::NetTotals net_base;

  // After an eviction attempt at `now_us`: `fits` closes an open period of
  // exceeded memory, a failure opens one (Redis's performEvictions metrics).
  void NoteEvictionResult(bool fits, uint64_t now_us) {
    if (!fits) {
      if (eviction_exceeded_since_us == 0) eviction_exceeded_since_us = now_us;
    } else if (eviction_exceeded_since_us != 0) {
      eviction_exceeded_total_us += now_us - eviction_exceeded_since_us;
      eviction_exceeded_since_us = 0;
    }
  }
  uint64_t current_eviction_exceeded_us(uint64_t now_us) const {
    return eviction_exceeded_since_us == 0 ? 0 : now_us - eviction_exceeded_since_us;
  }
  // CONFIG RESETSTAT: the counters Redis's resetServerStats zeroes (not
  // `dirty`, not an open eviction period's start).
  void ResetCounters() {
    total_connections = rejected_connections = total_commands = 0;
    total_error_replies = unexpected_error_replies = 0;
    dump_payload_sanitizations = 0;
    evicted_keys = evicted_clients = 0;
    sync_full = sync_partial_ok = sync_partial_err = 0;
    expire_cycle_us = 0;
    eviction_exceeded_total_us = 0;
    for (InstantaneousMetric* m : {&ops, &net_input, &net_output, &net_repl_input, &net_repl_output}) m->Reset();
  }
};

}  // namespace ringkv::server
