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
  // The mean of the samples.
  uint64_t instantaneous_ops() const {
    uint64_t sum = 0;
    for (uint64_t s : ops_samples) sum += s;
    return sum / kSamples;
  }
};

}  // namespace ringkv::server
