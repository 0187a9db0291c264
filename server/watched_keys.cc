#include "server/watched_keys.h"

#include <algorithm>

namespace ringkv::server {

void WatchedKeys::Watch(uint64_t client, int db, std::string_view key, bool expired) {
  ClientWatches& w = clients_[client];
  for (const Watched& k : w.keys) {
    if (k.db == db && k.key == key) return;  // watched already
  }
  w.keys.push_back(Watched{db, std::string(key), expired});
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

size_t WatchedKeys::CountOf(uint64_t client) const {
  auto it = clients_.find(client);
  return it == clients_.end() ? 0 : it->second.keys.size();
}

void WatchedKeys::TouchSlow(int db, std::string_view key) {
  auto db_it = by_key_.find(db);
  if (db_it == by_key_.end()) return;
  auto key_it = db_it->second.find(key);
  if (key_it == db_it->second.end()) return;
  for (uint64_t id : key_it->second) clients_[id].dirty = true;
}

void WatchedKeys::TouchDb(int db, const std::function<bool(std::string_view)>& affected) {
  auto db_it = by_key_.find(db);
  if (db_it == by_key_.end()) return;
  for (const auto& [key, ids] : db_it->second) {
    if (!affected(key)) continue;
    for (uint64_t id : ids) clients_[id].dirty = true;
  }
}

bool WatchedKeys::Dirty(uint64_t client, const std::function<bool(int, std::string_view)>& expired_now) const {
  auto it = clients_.find(client);
  if (it == clients_.end()) return false;
  if (it->second.dirty) return true;
  for (const Watched& k : it->second.keys) {
    if (!k.expired_when_watched && expired_now(k.db, k.key)) return true;
  }
  return false;
}

}  // namespace ringkv::server
