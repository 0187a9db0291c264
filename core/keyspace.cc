#include "core/keyspace.h"

#include <chrono>

namespace ringkv::core {

Entry* Database::Find(std::string_view key, int64_t now_ms) {
  auto it = map_.find(key);
  if (it == map_.end()) return nullptr;
  if (IsExpired(it->second, now_ms)) {
    RemoveExpireRecord(it->second.expire_index);
    map_.erase(it);
    ++stats_->expired_keys;
    return nullptr;
  }
  return &it->second;
}

Entry* Database::FindOrInsert(std::string_view key, int64_t now_ms, bool* created) {
  auto [it, inserted] = map_.try_emplace(key);  // builds a Key only when inserting
  Entry& e = it->second;
  if (!inserted && IsExpired(e, now_ms)) {
    RemoveExpireRecord(e.expire_index);
    e = Entry{};
    ++stats_->expired_keys;
    inserted = true;
  }
  *created = inserted;
  return &e;
}

bool Database::Erase(std::string_view key) {
  auto it = map_.find(key);
  if (it == map_.end()) return false;
  if (it->second.expire_index >= 0) RemoveExpireRecord(it->second.expire_index);
  map_.erase(it);
  return true;
}

void Database::SetExpire(std::string_view key, Entry* e, int64_t when_ms) {
  if (when_ms < 0) {
    if (e->expire_index >= 0) {
      RemoveExpireRecord(e->expire_index);
      e->expire_index = -1;
    }
    return;
  }
  if (e->expire_index >= 0) {
    expires_[e->expire_index].when_ms = when_ms;
    return;
  }
  e->expire_index = static_cast<int32_t>(expires_.size());
  expires_.push_back({std::string(key), when_ms});
}

void Database::RemoveExpireRecord(int32_t index) {
  // Swap-remove; the moved record's entry learns its new position.
  int32_t last = static_cast<int32_t>(expires_.size()) - 1;
  if (index != last) {
    expires_[index] = std::move(expires_[last]);
    auto it = map_.find(std::string_view(expires_[index].key));
    if (it != map_.end()) it->second.expire_index = index;
  }
  expires_.pop_back();
}

int64_t Database::AverageTtl(int64_t now_ms) const {
  if (expires_.empty()) return 0;
  // A bounded sample keeps INFO cheap on big databases.
  size_t n = std::min<size_t>(expires_.size(), 1000);
  int64_t sum = 0;
  for (size_t i = 0; i < n; ++i) sum += std::max<int64_t>(0, expires_[i].when_ms - now_ms);
  return sum / static_cast<int64_t>(n);
}

void Database::Clear() {
  map_.clear();
  expires_.clear();
}

void Database::Swap(Database& other) {
  map_.swap(other.map_);
  expires_.swap(other.expires_);
}

void Database::ForEach(int64_t now_ms, const std::function<void(std::string_view, const Entry&)>& fn) const {
  for (const auto& [key, entry] : map_) {
    if (!IsExpired(entry, now_ms)) fn(key.view(), entry);
  }
}

int Database::ExpireSample(int64_t now_ms, int samples, absl::BitGen& rng) {
  int expired = 0;
  for (int i = 0; i < samples && !expires_.empty(); ++i) {
    size_t idx = absl::Uniform<size_t>(rng, 0, expires_.size());
    if (expires_[idx].when_ms <= now_ms) {
      std::string key = expires_[idx].key;
      Erase(key);
      ++stats_->expired_keys;
      ++expired;
    }
  }
  return expired;
}

Keyspace::Keyspace(int databases) {
  for (int i = 0; i < databases; ++i) dbs_.push_back(std::make_unique<Database>(&stats_));
}

void Keyspace::ActiveExpireCycle(int64_t now_ms, int64_t budget_us) {
  constexpr int kSample = 20;
  auto start = std::chrono::steady_clock::now();
  uint64_t sampled = 0, stale = 0;
  for (auto& db : dbs_) {
    while (db->expires() > 0) {
      int n = static_cast<int>(std::min<size_t>(kSample, db->expires()));
      int expired = db->ExpireSample(now_ms, n, rng_);
      sampled += n;
      stale += expired;
      if (expired * 10 <= n) break;  // at most 10% stale: this database is clean enough
      auto spent = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start);
      if (spent.count() > budget_us) return;
    }
  }
  stats_.expired_stale_perc_x100 = sampled ? stale * 10000 / sampled : 0;
}

}  // namespace ringkv::core
