// PubSubRegistry: who is subscribed to what -- channels (SUBSCRIBE),
// patterns (PSUBSCRIBE) and shard channels (SSUBSCRIBE, standalone
// semantics) -- and who receives a message published to a channel. The
// registry of the PubSub component (pubsub.h), which delivers.
//
// A client's own subscriptions are its pub/sub component: created on its
// first subscription and erased with its last, so a client that never
// subscribes has none (Client itself carries one bit, `pubsub`).
// Subscribers of a channel are kept in subscription order, and a message
// goes to the channel's subscribers first, then to the pattern subscribers,
// as in Redis.
//
// Thread-safety: main thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/glob.h"
#include "core/string_hash.h"

namespace ringkv::server {

class PubSubRegistry {
 public:
  enum class Kind : uint8_t { kChannel, kPattern, kShard };

  // True when the client was not subscribed to it yet.
  bool Subscribe(uint64_t client, Kind kind, std::string_view name);
  // True when the client was subscribed to it.
  bool Unsubscribe(uint64_t client, Kind kind, std::string_view name);
  // The client's subscriptions of a kind, in the order it made them.
  std::vector<std::string> Subscriptions(uint64_t client, Kind kind) const;
  size_t Count(uint64_t client, Kind kind) const;
  // Channels + patterns: the count SUBSCRIBE / PSUBSCRIBE replies report.
  size_t ChannelAndPatternCount(uint64_t client) const {
    return Count(client, Kind::kChannel) + Count(client, Kind::kPattern);
  }
  bool Subscribed(uint64_t client) const { return clients_.contains(client); }
  // What the client's subscriptions hold, for CLIENT LIST's tot-mem and
  // client eviction (maxmemory-clients): its lists of names and, per name,
  // its place in the name's list of subscribers. O(1).
  size_t MemoryOf(uint64_t client) const;
  // Drops every subscription of a client (it closed, or RESET).
  void RemoveClient(uint64_t client);

  // Calls fn(uint64_t client, std::string_view pattern) for every receiver
  // of a message to `channel`: its subscribers (pattern empty), then for each
  // matching pattern its subscribers. Shard channels have no patterns.
  // Returns the count. A template, so a delivery's per-receiver step is a
  // direct (inlined) call. REQUIRES: fn changes no subscription.
  template <typename Fn>
  size_t ForEachReceiver(Kind kind, std::string_view channel, Fn&& fn) const {
    size_t n = 0;
    const Subscribers& table = Table(kind);
    if (auto it = table.find(channel); it != table.end()) {
      for (uint64_t client : it->second) fn(client, static_cast<const std::string*>(nullptr));
      n += it->second.size();
    }
    if (kind != Kind::kChannel) return n;
    for (const auto& [pattern, subscribers] : patterns_) {
      if (!core::GlobMatch(pattern, channel)) continue;
      for (uint64_t client : subscribers) fn(client, &pattern);
      n += subscribers.size();
    }
    return n;
  }

  // PUBSUB: channels with subscribers (matching `pattern` when given: ""
  // matches only ""), subscribers of one channel, and distinct patterns.
  std::vector<std::string> Channels(Kind kind, std::optional<std::string_view> pattern) const;
  size_t NumSub(Kind kind, std::string_view channel) const;
  size_t NumPatterns() const { return patterns_.size(); }
  size_t NumChannels(Kind kind) const { return Table(kind).size(); }
  // The shard channels with subscribers whose key slot is `slot` (cluster
  // mode drops them when the slot leaves the node's shard): from an index
  // kept beside the table, so the cost is the channels of that slot only.
  std::vector<std::string> ShardChannelsInSlot(int slot) const;

 private:
  struct ClientSubscriptions {  // a client's pub/sub component
    std::vector<std::string> of_kind[3];
    size_t name_bytes = 0;  // the names' heap bytes (longer than the inline capacity)
  };
  // The heap bytes of a name held as a std::string (0 when inline).
  static size_t HeapBytes(const std::string& s) {
    return s.capacity() > std::string().capacity() ? s.capacity() + 1 : 0;
  }
  using Subscribers = core::StringMap<std::vector<uint64_t>>;
  const Subscribers& Table(Kind kind) const {
    return kind == Kind::kChannel ? channels_ : kind == Kind::kPattern ? patterns_ : shard_channels_;
  }
  Subscribers& Table(Kind kind) {
    return kind == Kind::kChannel ? channels_ : kind == Kind::kPattern ? patterns_ : shard_channels_;
  }

  // Keeps shard_channels_by_slot_ in step when a shard channel gains its
  // first subscriber or loses its last.
  void IndexShardChannel(std::string_view name, bool add);

  Subscribers channels_, patterns_, shard_channels_;
  absl::flat_hash_map<uint16_t, std::vector<std::string>> shard_channels_by_slot_;
  absl::flat_hash_map<uint64_t, ClientSubscriptions> clients_;
};

}  // namespace ringkv::server
