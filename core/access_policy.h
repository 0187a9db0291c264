// Access tracking for maxmemory policies, as Redis 7.0 keeps it: the 24 bits
// of access state every entry carries (Entry::lru), and the policy that says
// how to read them.
//   LRU policies: the LRU clock in seconds at the last access, modulo 2^24
//                 (Redis's LRU_CLOCK_MAX: it wraps every 194 days).
//   LFU policies: (minutes clock & 0xFFFF) << 8 | logarithmic counter (8 bits),
//                 decayed by one per lfu-decay-time minutes, incremented with
//                 probability 1 / ((counter - 5) * lfu-log-factor + 1).
// The functions work on the state word alone, so the keyspace records
// accesses without knowing about eviction (core/eviction.h).
//
// Thread-safety: main thread only (the policy is read on every access).
#pragma once

#include <cstdint>
#include <string_view>

#include "absl/random/random.h"

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
  // OBJECT REFCOUNT's answer for the integers 0..9999: Redis shares them
  // (refcount INT_MAX) unless maxmemory is set with an LRU or LFU policy,
  // whose per-object access clock a shared object cannot have. The server
  // keeps it in step with maxmemory and maxmemory-policy.
  bool integers_shared = true;
  // Redis's dictExpandAllowed: set (with maxmemory), it says whether a key
  // table may double now, taking `more_bytes` (Database holds the doubling
  // back otherwise, Dict::set_grow_held). Null: always.
  bool (*grow_allowed)(void* ctx, size_t more_bytes) = nullptr;
  void* grow_ctx = nullptr;
  bool lru() const { return policy == EvictionPolicy::kAllKeysLru || policy == EvictionPolicy::kVolatileLru; }
  bool lfu() const { return policy == EvictionPolicy::kAllKeysLfu || policy == EvictionPolicy::kVolatileLfu; }
};

inline constexpr uint8_t kLfuInitValue = 5;

// Every access state fits in these bits (Entry::lru is a 24-bit field).
inline constexpr uint32_t kAccessMask = 0xFFFFFF;

// The access state a new entry starts with.
uint32_t InitialAccess(const AccessPolicy& p, int64_t now_ms);
// The LRU clock: seconds, modulo 2^24.
inline uint32_t LruClock(int64_t now_ms) { return static_cast<uint32_t>(now_ms / 1000) & kAccessMask; }
// The LFU state after an access (RecordAccess's LFU half).
uint32_t RecordLfuAccess(const AccessPolicy& p, uint32_t access, int64_t now_ms, absl::BitGen& rng);
// The state after an access (GET, SET, ... not OBJECT or TTL); `access`
// itself when nothing is to change (frozen). Inline: every lookup calls it.
inline uint32_t RecordAccess(const AccessPolicy& p, uint32_t access, int64_t now_ms, absl::BitGen& rng) {
  if (p.frozen) return access;
  if (!p.lfu()) return LruClock(now_ms);
  return RecordLfuAccess(p, access, now_ms, rng);
}
// LFU counter after decay (OBJECT FREQ).
uint32_t LfuFrequency(const AccessPolicy& p, uint32_t access, int64_t now_ms);
// Seconds since the last access (OBJECT IDLETIME, LRU policies).
int64_t IdleSeconds(uint32_t access, int64_t now_ms);
// Access state restored from an RDB record or RESTORE's IDLETIME / FREQ, as
// Redis's objectSetLRUOrLFU: an idle time counts under LRU policies, a
// frequency under LFU ones; otherwise the entry keeps `current`.
uint32_t RestoredAccess(const AccessPolicy& p, int64_t idle_s, int freq, int64_t now_ms, uint32_t current);

}  // namespace ringkv::core
