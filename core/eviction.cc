#include "core/eviction.h"

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
  return static_cast<uint32_t>(now_ms / 1000);
}

void RecordAccess(const AccessPolicy& p, Entry& e, int64_t now_ms, absl::BitGen& rng) {
  if (p.frozen) return;
  if (!p.lfu()) {
    const uint32_t now_s = static_cast<uint32_t>(now_ms / 1000);
    if (e.lru != now_s) e.lru = now_s;  // no store when unchanged: keeps the line (and page) clean
    return;
  }
  uint32_t counter = DecayedCounter(p, e.lru, now_ms);
  if (counter < 255) {
    double base = std::max(0.0, static_cast<double>(counter) - kLfuInitValue);
    if (absl::Uniform(rng, 0.0, 1.0) < 1.0 / (base * p.lfu_log_factor + 1)) ++counter;
  }
  e.lru = (MinutesClock(now_ms) << 8) | counter;
}

uint32_t LfuFrequency(const AccessPolicy& p, const Entry& e, int64_t now_ms) { return DecayedCounter(p, e.lru, now_ms); }

int64_t IdleSeconds(const Entry& e, int64_t now_ms) {
  return std::max<int64_t>(0, now_ms / 1000 - static_cast<int64_t>(e.lru));
}

uint32_t RestoredAccess(const AccessPolicy& p, int64_t idle_s, int freq, int64_t now_ms, uint32_t current) {
  if (p.lfu()) return freq >= 0 ? (MinutesClock(now_ms) << 8) | static_cast<uint32_t>(freq & 0xFF) : current;
  if (idle_s >= 0) return static_cast<uint32_t>(std::max<int64_t>(0, now_ms / 1000 - idle_s));
  return current;
}

void Evictor::Populate(Database& db, int index, const AccessPolicy& p, int64_t now_ms, absl::BitGen& rng) {
  const bool volatile_only = p.policy == EvictionPolicy::kVolatileLru || p.policy == EvictionPolicy::kVolatileLfu ||
                             p.policy == EvictionPolicy::kVolatileTtl;
  for (int i = 0; i < p.samples; ++i) {
    std::string key;
    const Entry* e = nullptr;
    int64_t when = -1;
    if (volatile_only) {
      if (!db.SampleVolatile(rng, &key, &when)) return;
      e = db.Peek(key);
    } else {
      auto* node = db.SampleAny(rng);
      if (node == nullptr) return;
      key.assign(node->key.view());
      e = &node->value;
    }
    if (e == nullptr) continue;
    uint64_t score;
    if (p.policy == EvictionPolicy::kVolatileTtl) {
      score = UINT64_MAX - static_cast<uint64_t>(when);  // sooner deadline = better
    } else if (p.lfu()) {
      score = 255 - LfuFrequency(p, *e, now_ms);
    } else {
      score = static_cast<uint64_t>(IdleSeconds(*e, now_ms));
    }
    bool present = std::any_of(pool_.begin(), pool_.end(),
                               [&](const Candidate& c) { return c.db == index && c.key == key; });
    if (present) continue;
    if (pool_.size() >= kPoolSize && score <= pool_.front().score) continue;
    auto pos = std::lower_bound(pool_.begin(), pool_.end(), score,
                                [](const Candidate& c, uint64_t s) { return c.score < s; });
    pool_.insert(pos, Candidate{score, index, std::move(key)});
    if (pool_.size() > kPoolSize) pool_.erase(pool_.begin());
  }
}

bool Evictor::EvictOne(Keyspace& ks, const AccessPolicy& p, int64_t now_ms) {
  absl::BitGen& rng = ks.rng();
  if (p.policy == EvictionPolicy::kAllKeysRandom || p.policy == EvictionPolicy::kVolatileRandom) {
    for (int tries = 0; tries < ks.count(); ++tries) {
      int index = next_random_db_;
      next_random_db_ = (next_random_db_ + 1) % ks.count();
      Database& db = ks.db(index);
      std::string key;
      if (p.policy == EvictionPolicy::kAllKeysRandom) {
        auto* node = db.SampleAny(rng);
        if (node == nullptr) continue;
        key.assign(node->key.view());
      } else {
        int64_t when;
        if (!db.SampleVolatile(rng, &key, &when)) continue;
      }
      db.Evict(key);
      return true;
    }
    return false;
  }
  for (int i = 0; i < ks.count(); ++i) Populate(ks.db(i), i, p, now_ms, rng);
  // Best candidates are at the back; skip ones that no longer exist.
  while (!pool_.empty()) {
    Candidate c = std::move(pool_.back());
    pool_.pop_back();
    if (ks.db(c.db).Peek(c.key) != nullptr) {
      ks.db(c.db).Evict(c.key);
      return true;
    }
  }
  return false;
}

bool Evictor::EvictUntil(Keyspace& ks, const AccessPolicy& p, const std::function<size_t()>& used_bytes, size_t limit,
                         int64_t now_ms, uint64_t* evicted) {
  if (p.policy == EvictionPolicy::kNoEviction) return used_bytes() <= limit;
  // Bounded work per call, so one command never pauses for a huge eviction;
  // the next command continues (Redis bounds it by time, "tenacity").
  for (int i = 0; i < 10000; ++i) {
    if (used_bytes() <= limit) return true;
    if (!EvictOne(ks, p, now_ms)) return false;
    ++*evicted;
  }
  return used_bytes() <= limit;
}

}  // namespace ringkv::core
