#include "server/blocking.h"

namespace ringkv::server {

void KeyWaiters::Add(uint64_t client, int db, const std::vector<std::string>& keys, BlockState* state) {
  auto& table = by_db_[db];
  for (const std::string& key : keys) {
    auto [it, inserted] = table.try_emplace(key);
    if (inserted) ++keys_;
    it->second.push_back(client);
    state->places.emplace_back(key, std::prev(it->second.end()));
  }
}

void KeyWaiters::Remove(const BlockState& state) {
  auto db_it = by_db_.find(state.db);
  if (db_it == by_db_.end()) return;
  for (const auto& [key, place] : state.places) {
    auto it = db_it->second.find(key);
    if (it == db_it->second.end()) continue;
    it->second.erase(place);
    if (it->second.empty()) {
      db_it->second.erase(it);
      --keys_;
    }
  }
  if (db_it->second.empty()) by_db_.erase(db_it);
}

const std::list<uint64_t>* KeyWaiters::Waiting(int db, std::string_view key) const {
  auto db_it = by_db_.find(db);
  if (db_it == by_db_.end()) return nullptr;
  auto it = db_it->second.find(key);
  return it == db_it->second.end() ? nullptr : &it->second;
}

void KeyWaiters::MarkReady(int db, std::string_view key) {
  auto [it, inserted] = ready_set_[db].try_emplace(key, true);
  if (inserted) ready_.emplace_back(db, std::string(key));
}

std::vector<std::pair<int, std::string>> KeyWaiters::TakeReady() {
  std::vector<std::pair<int, std::string>> out;
  out.swap(ready_);
  ready_set_.clear();
  return out;
}

std::vector<std::string> KeyWaiters::KeysOf(int db) const {
  std::vector<std::string> keys;
  auto db_it = by_db_.find(db);
  if (db_it == by_db_.end()) return keys;
  for (const auto& [key, clients] : db_it->second) keys.push_back(key);
  return keys;
}

}  // namespace ringkv::server
