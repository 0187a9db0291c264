#include "server/pubsub/registry.h"

#include <algorithm>

#include "core/glob.h"
#include "core/key_slot.h"

namespace ringkv::server {

bool PubSubRegistry::Subscribe(uint64_t client, Kind kind, std::string_view name) {
  std::vector<uint64_t>& subscribers = Table(kind)[name];
  if (std::find(subscribers.begin(), subscribers.end(), client) != subscribers.end()) return false;
  if (kind == Kind::kShard && subscribers.empty()) IndexShardChannel(name, true);
  subscribers.push_back(client);
  ClientSubscriptions& mine = clients_[client];
  mine.name_bytes += HeapBytes(mine.of_kind[static_cast<int>(kind)].emplace_back(name));
  return true;
}

bool PubSubRegistry::Unsubscribe(uint64_t client, Kind kind, std::string_view name) {
  Subscribers& table = Table(kind);
  auto it = table.find(name);
  if (it == table.end()) return false;
  auto pos = std::find(it->second.begin(), it->second.end(), client);
  if (pos == it->second.end()) return false;
  it->second.erase(pos);
  if (it->second.empty()) {
    if (kind == Kind::kShard) IndexShardChannel(name, false);
    table.erase(it);
  }
  auto c = clients_.find(client);
  std::vector<std::string>& mine = c->second.of_kind[static_cast<int>(kind)];
  auto name_it = std::find(mine.begin(), mine.end(), name);
  c->second.name_bytes -= HeapBytes(*name_it);
  mine.erase(name_it);
  const ClientSubscriptions& s = c->second;
  if (s.of_kind[0].empty() && s.of_kind[1].empty() && s.of_kind[2].empty()) clients_.erase(c);
  return true;
}

size_t PubSubRegistry::MemoryOf(uint64_t client) const {
  auto c = clients_.find(client);
  if (c == clients_.end()) return 0;
  const ClientSubscriptions& s = c->second;
  size_t bytes = sizeof(ClientSubscriptions) + s.name_bytes;
  for (const std::vector<std::string>& names : s.of_kind) bytes += names.capacity() * sizeof(std::string) + names.size() * sizeof(uint64_t);
  return bytes;
}

std::vector<std::string> PubSubRegistry::Subscriptions(uint64_t client, Kind kind) const {
  auto c = clients_.find(client);
  return c == clients_.end() ? std::vector<std::string>{} : c->second.of_kind[static_cast<int>(kind)];
}

size_t PubSubRegistry::Count(uint64_t client, Kind kind) const {
  auto c = clients_.find(client);
  return c == clients_.end() ? 0 : c->second.of_kind[static_cast<int>(kind)].size();
}

void PubSubRegistry::RemoveClient(uint64_t client) {
  for (Kind kind : {Kind::kChannel, Kind::kPattern, Kind::kShard}) {
    for (const std::string& name : Subscriptions(client, kind)) Unsubscribe(client, kind, name);
  }
}

std::vector<std::string> PubSubRegistry::Channels(Kind kind, std::optional<std::string_view> pattern) const {
  std::vector<std::string> out;
  for (const auto& [name, subscribers] : Table(kind)) {
    if (!pattern || core::GlobMatch(*pattern, name)) out.push_back(name);
  }
  return out;
}

void PubSubRegistry::IndexShardChannel(std::string_view name, bool add) {
  const auto slot = static_cast<uint16_t>(core::KeyHashSlot(name));
  if (add) {
    shard_channels_by_slot_[slot].emplace_back(name);
    return;
  }
  auto it = shard_channels_by_slot_.find(slot);
  if (it == shard_channels_by_slot_.end()) return;
  std::vector<std::string>& names = it->second;
  auto pos = std::find(names.begin(), names.end(), name);
  if (pos != names.end()) {
    *pos = std::move(names.back());
    names.pop_back();
  }
  if (names.empty()) shard_channels_by_slot_.erase(it);
}

std::vector<std::string> PubSubRegistry::ShardChannelsInSlot(int slot) const {
  auto it = shard_channels_by_slot_.find(static_cast<uint16_t>(slot));
  return it == shard_channels_by_slot_.end() ? std::vector<std::string>{} : it->second;
}

size_t PubSubRegistry::NumSub(Kind kind, std::string_view channel) const {
  const Subscribers& table = Table(kind);
  auto it = table.find(channel);
  return it == table.end() ? 0 : it->second.size();
}

}  // namespace ringkv::server
