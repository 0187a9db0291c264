// The process's open-files limit against `maxclients`, as Redis 7.0's
// adjustOpenFilesLimit: the server needs maxclients + kReservedFds
// descriptors (the rest: listeners, persistence, replication, logs). When the
// soft RLIMIT_NOFILE is lower, it raises it (soft and hard, to what is
// needed or the highest value the kernel grants, trying 16 fewer at a time)
// and, where it cannot reach the need, lowers maxclients to fit -- with
// Redis's log lines, which operators and tools know.
//
// Thread-safety: call from the main thread (it changes the process's limit).
#pragma once

#include <cstdint>

namespace ringkv::server {

inline constexpr int64_t kReservedFds = 32;  // Redis's CONFIG_MIN_RESERVED_FDS

struct OpenFilesLimit {
  int64_t maxclients = 0;     // what the limit allows: the requested value, or less
  bool cannot_start = false;  // the limit leaves no descriptor for clients (logged)
};

// Raises the limit for `maxclients` where needed and logs what it did.
OpenFilesLimit AdjustOpenFilesLimit(int64_t maxclients);

}  // namespace ringkv::server
