// ServerStats: the server's own counters -- what INFO's stats section and
// rdb_changes_since_last_save report -- and the instantaneous_ops_per_sec
// sampler.
//
// A plain value owned by the Server: the gate, the components' glue and the
// replication code count into it directly; CONFIG RESETSTAT resets what
// Redis resets. Thread-safety: main thread only.
#pragma once

#include <cstdint>

namespace ringkv::server {

struct ServerStats {
  uint64_t total_connections = 0;
  uint64_t rejected_connections = 0;
  uint64_t total_commands = 0;
  uint64_t total_error_replies = 0;
  uint64_t unexpected_error_replies = 0;
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
  // instantaneous_ops_per_sec: a ring of samples taken by the cron, as Redis does.
  static constexpr int kSamples = 16;
  uint64_t ops_samples[kSamples] = {};
  int sample_index = 0;
  int64_t last_sample_ms = 0;
  uint64_t last_sample_commands = 0;

  // The cron's sample, at most every 100 ms: commands per second since the
  // previous one (0 for the first).
  void SampleOps(int64_t now_ms) {
    if (now_ms - last_sample_ms < 100) return;
    const int64_t dt = now_ms - last_sample_ms;
    const uint64_t ops = total_commands - last_sample_commands;
    ops_samples[sample_index] = last_sample_ms == 0 ? 0 : ops * 1000 / static_cast<uint64_t>(dt);
    sample_index = (sample_index + 1) % kSamples;
    last_sample_ms = now_ms;
    last_sample_commands = total_commands;
  }
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
    evicted_keys = evicted_clients = 0;
    sync_full = sync_partial_ok = sync_partial_err = 0;
    expire_cycle_us = 0;
    eviction_exceeded_total_us = 0;
  }
  // The mean of the samples.
  uint64_t instantaneous_ops() const {
    uint64_t sum = 0;
    for (uint64_t s : ops_samples) sum += s;
    return sum / kSamples;
  }
};

}  // namespace ringkv::server
