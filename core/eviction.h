// Eviction under maxmemory, as Redis 7.0 does it: approximate LRU / LFU by
// sampling, random, and volatile-ttl, on the access state of
// core/access_policy.h.
//
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
#include "core/access_policy.h"
#include "core/keyspace.h"

namespace ringkv::core {

class Evictor {
 public:
  // Evicts keys until they add up to what used_bytes() exceeds `limit` by
  // when called, or until the call's time limit is spent (then running() is
  // true until a later call finishes). Returns false when that much could
  // not be freed. `evicted` counts keys.
  //
  // As Redis's performEvictions, a key counts for its own memory
  // (Database::EntryMemory) -- not for what deleting it makes others
  // allocate: the DEL propagated, the invalidations to clients that cached
  // it, notifications. Counting those would keep evicting to make room for
  // the eviction's own messages, until the keyspace is empty.
  bool EvictUntil(Keyspace& ks, const AccessPolicy& p, const std::function<size_t()>& used_bytes, size_t limit,
                  int64_t now_ms, uint64_t* evicted);
  // For the latency monitor ("eviction-del"): while on, EvictUntil times
  // each deletion and keeps the slowest of its call, in microseconds.
  void set_time_deletions(bool on) { time_deletions_ = on; }
  int64_t slowest_deletion_us() const { return slowest_deletion_us_; }
  // The time one EvictUntil may spend (maxmemory-eviction-tenacity); < 0: none.
  void set_time_limit_us(int64_t us) { time_limit_us_ = us; }
  // The last EvictUntil stopped on its time limit while still over the
  // limit: as Redis's EVICT_RUNNING, commands are not refused for it, and
  // the caller calls again soon.
  bool running() const { return running_; }

 private:
  struct Candidate {
    uint64_t score;  // higher = better to evict
    int db;
    std::string key;
  };
  void Populate(Database& db, int index, const AccessPolicy& p, int64_t now_ms, absl::BitGen& rng);
  // Deletes one key; *freed: its memory.
  bool EvictOne(Keyspace& ks, const AccessPolicy& p, int64_t now_ms, size_t* freed);
  void Delete(Database& db, const std::string& key, size_t* freed);

  std::vector<Candidate> pool_;  // sorted by score, at most kPoolSize
  int next_random_db_ = 0;
  bool time_deletions_ = false;
  int64_t slowest_deletion_us_ = 0;
  int64_t time_limit_us_ = 500;  // tenacity 10, Redis's default
  bool running_ = false;
  static constexpr size_t kPoolSize = 16;
};

// Redis's evictionTimeLimitUs: 50 us per unit of maxmemory-eviction-tenacity
// up to 10, then 15% more per unit; 100 is unlimited (-1).
int64_t EvictionTimeLimitUs(int64_t tenacity);

}  // namespace ringkv::core
