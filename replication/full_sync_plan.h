// PlanFullSync: which replicas waiting for a full sync (kWaitBgsaveStart)
// the next snapshot serves, and how it reaches them -- a file written by a
// BGSAVE, or streamed from the fork child (diskless). The decision only:
// the server forks the child and drops the replicas refused.
//
// One snapshot per request: the replicas asking for what the first one
// asks for (REPLCONF rdb-filter-only) go now, the others after it. A
// filtered snapshot is always streamed (as Redis: it is never a file other
// replicas or a restart could read), so a replica asking for one without
// the EOF capability is refused. A streamed transfer on a diskless primary
// waits repl-diskless-sync-delay after the first request, so that replicas
// arriving together share one child, unless
// repl-diskless-sync-max-replicas of them already wait.
//
// Thread-safety: main thread only (it reads the Primary's links).
#pragma once

#include <cstdint>
#include <vector>

#include "replication/primary.h"

namespace ringkv::repl {

struct FullSyncSettings {
  bool diskless_sync = false;   // repl-diskless-sync
  int64_t delay_s = 5;          // repl-diskless-sync-delay
  int64_t max_replicas = 0;     // repl-diskless-sync-max-replicas (0: no cap)
};

struct FullSyncPlan {
  enum class Kind {
    kNone,      // no replica to serve now
    kDelay,     // a streamed transfer waits for more replicas: ask again later
    kDisk,      // BGSAVE to the RDB file, sent to `replicas` when written
    kDiskless,  // the fork child streams the snapshot to `replicas`
  };
  Kind kind = Kind::kNone;
  // Asked for a filtered snapshot without the EOF capability: to be
  // disconnected, in this order, before anything else is done.
  std::vector<ReplicaLink*> refused;
  // The replicas the snapshot serves (kDisk, kDiskless; for kDelay those
  // that will wait). They all asked for the same snapshot.
  std::vector<ReplicaLink*> replicas;
};

// The plan for the replicas of `primary` waiting for a full sync, at `now_ms`.
FullSyncPlan PlanFullSync(const Primary& primary, const FullSyncSettings& settings, int64_t now_ms);

}  // namespace ringkv::repl
