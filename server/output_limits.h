// OutputLimits: client-output-buffer-limit and maxmemory-clients -- the
// limits, cached from the config, and the soft-limit clocks.
//
// Three classes, as in Redis: normal clients (checked after each command),
// pubsub clients (checked as messages are delivered) and replicas (the hard
// limit bounds how far a replica may fall behind the backlog; the soft one
// is checked by the replication component). A client over its hard limit,
// or over its soft limit for longer than the soft seconds, is to be closed
// at once (Clients::CloseForOutputLimit, server/clients.h);
// maxmemory-clients closes the biggest clients (Clients::EvictIfNeeded).
// What a client holds is
// measured by the server, which knows its buffers; this component judges.
//
// Owns: the cached limits, and since when each client over its soft limit
// has been (a client's `over_soft_limit` bit says it has an entry).
// Thread-safety: main thread only.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "server/client.h"
#include "server/config.h"

namespace ringkv::server {

class OutputLimits {
 public:
  // Binds client-output-buffer-limit, maxmemory and maxmemory-clients (set
  // now, refreshed by CONFIG SET). `config` outlives this object.
  explicit OutputLimits(Config& config);
  OutputLimits(const OutputLimits&) = delete;
  OutputLimits& operator=(const OutputLimits&) = delete;

  const Config::OutputBufferLimit& normal() const { return normal_; }
  const Config::OutputBufferLimit& pubsub() const { return pubsub_; }
  const Config::OutputBufferLimit& replica() const { return replica_; }
  // The class limit of a normal or pub/sub client, and whether it sets any
  // limit (one cached flag: checked after every command).
  const Config::OutputBufferLimit& of(const Client& c) const { return c.pubsub ? pubsub_ : normal_; }
  bool on(const Client& c) const { return c.pubsub ? pubsub_on_ : normal_on_; }
  bool pubsub_on() const { return pubsub_on_; }

  // Whether `c`, with `unsent` bytes of output, is over `limit`: past the
  // hard limit, or above the soft one for longer than its seconds (the
  // clock starts the first time it is seen above, restarts once below).
  bool Over(Client& c, const Config::OutputBufferLimit& limit, uint64_t unsent, int64_t now_ms);
  // The ids of the clients above their soft limit, whose clocks run: the
  // cron judges them again, so that one whose output stopped growing is
  // still closed once its seconds are up (Redis 7.0's clientsCron).
  std::vector<uint64_t> OverSoftLimitIds() const {
    std::vector<uint64_t> ids;
    ids.reserve(over_soft_limit_since_.size());
    for (const auto& [id, since] : over_soft_limit_since_) ids.push_back(id);
    return ids;
  }
  // `c` closed: its soft-limit clock goes.
  void Forget(const Client& c) {
    if (c.over_soft_limit) over_soft_limit_since_.erase(c.id());
  }

  // maxmemory-clients in bytes (0: off), cached.
  uint64_t client_eviction_limit() const { return client_eviction_limit_; }
  // The limit as the config says now: absolute, or a percentage of
  // maxmemory; never below 128 KiB, as Redis.
  static uint64_t ClientEvictionLimit(const Config& config);

 private:
  Config::OutputBufferLimit normal_, pubsub_, replica_;
  bool normal_on_ = false, pubsub_on_ = false;  // a hard or soft limit is set
  uint64_t client_eviction_limit_ = 0;
  absl::flat_hash_map<uint64_t, int64_t> over_soft_limit_since_;
};

}  // namespace ringkv::server
