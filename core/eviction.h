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
  // Evicts keys until used_bytes() <= limit. Returns false when still over
  // the limit because nothing (more) can be evicted. `evicted` counts keys.
  bool EvictUntil(Keyspace& ks, const AccessPolicy& p, const std::function<size_t()>& used_bytes, size_t limit,
                  int64_t now_ms, uint64_t* evicted);
  // For the latency monitor ("eviction-del"): while on, EvictUntil times
  // each deletion and keeps the slowest of its call, in microseconds.
  void set_time_deletions(bool on) { time_deletions_ = on; }
  int64_t slowest_deletion_us() const { return slowest_deletion_us_; }

 private:
  struct Candidate {
    uint64_t score;  // higher = better to evict
    int db;
    std::string key;
  };
  void Populate(Database& db, int index, const AccessPolicy& p, int64_t now_ms, absl::BitGen& rng);
  bool EvictOne(Keyspace& ks, const AccessPolicy& p, int64_t now_ms);
  void Delete(Database& db, const std::string& key);

  std::vector<Candidate> pool_;  // sorted by score, at most kPoolSize
  int next_random_db_ = 0;
  bool time_deletions_ = false;
  int64_t slowest_deletion_us_ = 0;
  static constexpr size_t kPoolSize = 16;
};

}  // namespace ringkv::core
