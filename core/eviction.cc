#include "core/eviction.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace ringkv::core {

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
      key.assign(node->key().view());
      e = &node->value;
    }
    if (e == nullptr) continue;
    uint64_t score;
    if (p.policy == EvictionPolicy::kVolatileTtl) {
      score = UINT64_MAX - static_cast<uint64_t>(when);  // sooner deadline = better
    } else if (p.lfu()) {
      score = 255 - LfuFrequency(p, e->lru(), now_ms);
    } else {
      score = static_cast<uint64_t>(IdleSeconds(e->lru(), now_ms));
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

bool Evictor::EvictOne(Keyspace& ks, const AccessPolicy& p, int64_t now_ms, size_t* freed) {
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
        key.assign(node->key().view());
      } else {
        int64_t when;
        if (!db.SampleVolatile(rng, &key, &when)) continue;
      }
      Delete(db, key, freed);
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
      Delete(ks.db(c.db), c.key, freed);
      return true;
    }
  }
  return false;
}

void Evictor::Delete(Database& db, const std::string& key, size_t* freed) {
  const Entry* e = db.Peek(key);
  *freed = e != nullptr ? Database::EntryMemory(key, *e) : 0;
  if (!time_deletions_) {
    db.Evict(key);
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  db.Evict(key);
  const int64_t us =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count();
  slowest_deletion_us_ = std::max(slowest_deletion_us_, us);
}

bool Evictor::EvictUntil(Keyspace& ks, const AccessPolicy& p, const std::function<size_t()>& used_bytes, size_t limit,
                         int64_t now_ms, uint64_t* evicted) {
  slowest_deletion_us_ = 0;
  running_ = false;
  if (p.policy == EvictionPolicy::kNoEviction) return used_bytes() <= limit;
  // Bounded time per call (maxmemory-eviction-tenacity), so one command
  // never pauses for a huge eviction; the clock is read every 16 keys.
  const size_t used = used_bytes();
  if (used <= limit) return true;
  const size_t to_free = used - limit;
  size_t freed = 0;
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t i = 1;; ++i) {
    if (freed >= to_free) return true;
    size_t bytes = 0;
    if (!EvictOne(ks, p, now_ms, &bytes)) return false;
    freed += bytes;
    ++*evicted;
    if (time_limit_us_ >= 0 && i % 16 == 0 &&
        std::chrono::steady_clock::now() - start > std::chrono::microseconds(time_limit_us_)) {
      running_ = freed < to_free;
      return !running_;
    }
  }
}

int64_t EvictionTimeLimitUs(int64_t tenacity) {
  if (tenacity <= 10) return 50 * tenacity;
  if (tenacity < 100) return static_cast<int64_t>(500.0 * std::pow(1.15, static_cast<double>(tenacity - 10)));
  return -1;
}

}  // namespace ringkv::core
