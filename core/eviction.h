// Access tracking and eviction under maxmemory, as Redis 7.0 does it:
// approximate LRU / LFU by sampling, random, and volatile-ttl.
//
// Every entry carries 32 bits of access state (Entry::lru):
//   LRU policies: the LRU clock in seconds at the last access.
//   LFU policies: (minutes clock & 0xFFFF) << 8 | logarithmic counter (8 bits),
//                 decayed by one per lfu-decay-time minutes, incremented with
//                 probability 1 / ((counter - 5) * lfu-log-factor + 1).
// Eviction samples maxmemory-samples keys per database into a pool of the 16
// best candidates seen so far and evicts the best one still present, the
// algorithm of Redis's evict.c. It does not need a global ordering.
//
// Thread-safety: main thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/random/random.h"
#include "core/keyspace.h"

namespace ringkv::core {

enum class EvictionPolicy : uint8_t {
  kNoEviction, kAllKeysLru, kAllKeysLfu, kAllKeysRandom, kVolatileLru, kVolatileLfu, kVolatileRandom, kVolatileTtl
};
// Parses a maxmemory-policy name; false when unknown.
bool ParseEvictionPolicy(std::string_view name, EvictionPolicy* out);

struct AccessPolicy {
  EvictionPolicy policy = EvictionPolicy::kNoEviction;
  int samples = 5;         // maxmemory-samples
  int lfu_log_factor = 10;
  int lfu_decay_time = 1;  // minutes
  // A forked child is saving: accesses are not recorded, so reads do not
  // dirty pages the child shares copy-on-write (Redis does the same).
  bool frozen = false;
  bool lfu() const { return policy == EvictionPolicy::kAllKeysLfu || policy == EvictionPolicy::kVolatileLfu; }
};

inline constexpr uint8_t kLfuInitValue = 5;

// The access state a new entry starts with.
uint32_t InitialAccess(const AccessPolicy& p, int64_t now_ms);
// Records an access (GET, SET, ... not OBJECT or TTL).
void RecordAccess(const AccessPolicy& p, Entry& e, int64_t now_ms, absl::BitGen& rng);
// LFU counter after decay (OBJECT FREQ).
uint32_t LfuFrequency(const AccessPolicy& p, const Entry& e, int64_t now_ms);
// Seconds since the last access (OBJECT IDLETIME, LRU policies).
int64_t IdleSeconds(const Entry& e, int64_t now_ms);
// Access state restored from an RDB record or RESTORE's IDLETIME / FREQ, as
// Redis's objectSetLRUOrLFU: an idle time counts under LRU policies, a
// frequency under LFU ones; otherwise the entry keeps `current`.
uint32_t RestoredAccess(const AccessPolicy& p, int64_t idle_s, int freq, int64_t now_ms, uint32_t current);

class Evictor {
 public:
  // Evicts keys until used_bytes() <= limit. Returns false when still over
  // the limit because nothing (more) can be evicted. `evicted` counts keys.
  bool EvictUntil(Keyspace& ks, const AccessPolicy& p, const std::function<size_t()>& used_bytes, size_t limit,
                  int64_t now_ms, uint64_t* evicted);

 private:
  struct Candidate {
    uint64_t score;  // higher = better to evict
    int db;
    std::string key;
  };
  void Populate(Database& db, int index, const AccessPolicy& p, int64_t now_ms, absl::BitGen& rng);
  bool EvictOne(Keyspace& ks, const AccessPolicy& p, int64_t now_ms);

  std::vector<Candidate> pool_;  // sorted by score, at most kPoolSize
  int next_random_db_ = 0;
  static constexpr size_t kPoolSize = 16;
};

}  // namespace ringkv::core
