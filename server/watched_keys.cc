#include "server/watched_keys.h"

#include <algorithm>

namespace ringkv::server {

void WatchedKeys::Watch(uint64_t client, int db, std::string_view key, bool expired) {
  ClientWatches& w = clients_[client];
  for (const Watched& k : w.keys) {
    if (k.db == db && k.key == key) return;  // watched already
  }
  w.keys.push_back(Watched{db, std::string(key), expired});
  if (const std::string& k = w.keys.back().key; k.capacity() > std::string().capacity()) w.key_bytes += k.capacity() + 1;
  by_key_[db][key].push_back(client);
}

void WatchedKeys::UnwatchAll(uint64_t client) {
  auto it = clients_.find(client);
  if (it == clients_.end()) return;
  for (const Watched& k : it->second.keys) {
    auto db_it = by_key_.find(k.db);
    if (db_it == by_key_.end()) continue;
    auto key_it = db_it->second.find(k.key);
    if (key_it == db_it->second.end()) continue;
    std::vector<uint64_t>& ids = key_it->second;
    ids.erase(std::find(ids.begin(), ids.end(), client));
    if (ids.empty()) db_it->second.erase(key_it);
    if (db_it->second.empty()) by_key_.erase(db_it);
  }
  clients_.erase(it);
}

size_t WatchedKeys::MemoryOf(uint64_t client) const {
  auto it = clients_.find(client);
  if (it == clients_.end()) return 0;
  const ClientWatches& w = it->second;
  return sizeof(ClientWatches) + w.keys.capacity() * sizeof(Watched) + w.key_bytes + w.keys.size() * sizeof(uint64_t);
}

size_t WatchedKeys::CountOf(uint64_t client) const {
  auto it = clients_.find(client);
  return it == clients_.end() ? 0 : it->second.keys.size();
}

WatchedKeys::Watched* WatchedKeys::Find(uint64_t client, int db, std::string_view key) {
  for (Watched& k : clients_[client].keys) {
    if (k.db == db && k.key == key) return &k;
  }
  return nullptr;
}

void WatchedKeys::TouchSlow(int db, std::string_view key, absl::FunctionRef<bool()> exists) {
  auto db_it = by_key_.find(db);
  if (db_it == by_key_.end()) return;
  auto key_it = db_it->second.find(key);
  if (key_it == db_it->second.end()) return;
  for (uint64_t id : key_it->second) {
    Watched* w = Find(id, db, key);
    if (w != nullptr && w->expired) {
      // Watched already expired: its deletion changes nothing logically, and
      // Redis 7.0 leaves such a watcher clean whatever the write.
      if (!exists()) w->expired = false;
      continue;
    }
    clients_[id].dirty = true;
  }
}

void WatchedKeys::TouchDb(int db, absl::FunctionRef<bool(std::string_view)> in_emptied,
                          absl::FunctionRef<bool(std::string_view)> in_replacement,
                          absl::FunctionRef<bool(std::string_view)> expired_in_replacement) {
  auto db_it = by_key_.find(db);
  if (db_it == by_key_.end()) return;
  for (const auto& [key, ids] : db_it->second) {
    const bool was_there = in_emptied(key);
    const bool replaced = in_replacement(key);
    if (!was_there && !replaced) continue;
    const bool replaced_expired = replaced && expired_in_replacement(key);
    for (uint64_t id : ids) {
      Watched* w = Find(id, db, key);
      if (w != nullptr && w->expired) {
        if (!replaced) {  // an expired key deleted: no logical change
          w->expired = false;
          continue;
        }
        if (replaced_expired) continue;  // expired, and still expired
      } else if (w != nullptr && !was_there && replaced_expired) {
        w->expired = true;  // no key replaced with an expired one: still absent
        continue;
      }
      clients_[id].dirty = true;
    }
  }
}

bool WatchedKeys::Dirty(uint64_t client, const std::function<bool(int, std::string_view)>& expired_now) const {
  auto it = clients_.find(client);
  if (it == clients_.end()) return false;
  if (it->second.dirty) return true;
  for (const Watched& k : it->second.keys) {
    if (!k.expired && expired_now(k.db, k.key)) return true;
  }
  return false;
}

}  // namespace ringkv::server
