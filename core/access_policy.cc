#include "core/access_policy.h"

#include <algorithm>

namespace ringkv::core {
namespace {

uint32_t MinutesClock(int64_t now_ms) { return static_cast<uint32_t>(now_ms / 60000) & 0xFFFF; }

uint32_t DecayedCounter(const AccessPolicy& p, uint32_t access, int64_t now_ms) {
  uint32_t ldt = access >> 8;
  uint32_t counter = access & 0xFF;
  uint32_t now = MinutesClock(now_ms);
  uint32_t elapsed = now >= ldt ? now - ldt : 65535 - ldt + now;
  uint32_t periods = p.lfu_decay_time > 0 ? elapsed / static_cast<uint32_t>(p.lfu_decay_time) : 0;
  return periods > counter ? 0 : counter - periods;
}

}  // namespace

bool ParseEvictionPolicy(std::string_view name, EvictionPolicy* out) {
  static const std::pair<std::string_view, EvictionPolicy> kNames[] = {
      {"noeviction", EvictionPolicy::kNoEviction},       {"allkeys-lru", EvictionPolicy::kAllKeysLru},
      {"allkeys-lfu", EvictionPolicy::kAllKeysLfu},      {"allkeys-random", EvictionPolicy::kAllKeysRandom},
      {"volatile-lru", EvictionPolicy::kVolatileLru},    {"volatile-lfu", EvictionPolicy::kVolatileLfu},
      {"volatile-random", EvictionPolicy::kVolatileRandom}, {"volatile-ttl", EvictionPolicy::kVolatileTtl}};
  for (auto [n, policy] : kNames) {
    if (n == name) {
      *out = policy;
      return true;
    }
  }
  return false;
}

uint32_t InitialAccess(const AccessPolicy& p, int64_t now_ms) {
  if (p.lfu()) return (MinutesClock(now_ms) << 8) | kLfuInitValue;
  return LruClock(now_ms);
}

uint32_t RecordLfuAccess(const AccessPolicy& p, uint32_t access, int64_t now_ms, absl::BitGen& rng) {
  uint32_t counter = DecayedCounter(p, access, now_ms);
  if (counter < 255) {
    double base = std::max(0.0, static_cast<double>(counter) - kLfuInitValue);
    if (absl::Uniform(rng, 0.0, 1.0) < 1.0 / (base * p.lfu_log_factor + 1)) ++counter;
  }
  return (MinutesClock(now_ms) << 8) | counter;
}

uint32_t LfuFrequency(const AccessPolicy& p, uint32_t access, int64_t now_ms) { return DecayedCounter(p, access, now_ms); }

int64_t IdleSeconds(uint32_t access, int64_t now_ms) {
  // Modulo the clock's range: an access before the clock wrapped is still
  // in the past (Redis's estimateObjectIdleTime).
  return (LruClock(now_ms) - (access & kAccessMask)) & kAccessMask;
}

uint32_t RestoredAccess(const AccessPolicy& p, int64_t idle_s, int freq, int64_t now_ms, uint32_t current) {
  if (p.lfu()) return freq >= 0 ? (MinutesClock(now_ms) << 8) | static_cast<uint32_t>(freq & 0xFF) : current;
  if (idle_s >= 0) return LruClock(std::max<int64_t>(0, now_ms - std::min<int64_t>(idle_s, kAccessMask) * 1000));
  return current;
}

}  // namespace ringkv::core
