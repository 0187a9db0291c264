// PubSub: publish / subscribe with its delivery -- the subscriptions
// (channels, patterns, shard channels: PubSubRegistry, registry.h),
// PUBLISH / SPUBLISH's delivery to every receiver, client-output-buffer-limit
// pubsub for the subscribers it writes to, dropping the shard channels of a
// slot that left this node's shard, and keyspace notifications
// (notify-keyspace-events, published as messages).
//
// Delivery: a message is encoded once per protocol version (and per matching
// pattern) and appended to each receiver's reply path (reply_paths.h) -- the
// held one when that client's replies wait for an AOF fsync, so a message
// never overtakes an earlier reply; otherwise the fan-out path, which
// gathers a busy channel's messages into fewer writes
// (IoSystem::PrepareFanoutWrite). A keyspace event for the running
// command's own client, made after the point where Redis writes its reply,
// waits in HeldPushes (held_pushes.h) instead. A subscriber found over the pubsub output
// limit is closed once the delivery ends (through Hooks).
//
// What it needs of the server -- closing a slow subscriber -- comes through
// Hooks, which the Server implements (inline in server.h). The clients, the
// persistence (held replies), the I/O system and the output limits are
// borrowed at construction and must outlive it.
//
//   PubSub pubsub(hooks, config, observer, clients, persistence, io, limits);
//   pubsub.Subscribe(c.id(), PubSub::Kind::kChannel, "news");
//   size_t receivers = pubsub.Publish(PubSub::Kind::kChannel, "news", "hello");
//   pubsub.NotifyKeyspaceEvent(notify::kString, "set", 0, "key");  // on a write
//
// Cost: per receiver, a registry lookup and an append, as direct calls (no
// virtual call, nothing allocated but the one encoding per version and
// pattern); Hooks only for a subscriber being closed. Every write asks
// NotifyKeyspaceEvent: inlined, two tests of a bit mask when disabled.
//
// Thread-safety: main thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/keyspace.h"
#include "io/io_system.h"
#include "server/client.h"
#include "server/client_registry.h"
#include "server/config.h"
#include "server/keyspace_notifications.h"
#include "server/held_pushes.h"
#include "server/output_limits.h"
#include "server/persistence/persistence.h"
#include "server/pubsub/registry.h"

namespace ringkv::server {

// The registry is a private base whose queries and changes are re-exported
// by name (using-declarations, no forwarding bodies): PUBSUB, CLIENT LIST,
// INFO and (UN)SUBSCRIBE read it as server.pubsub().Count(...) and so on.
class PubSub final : private PubSubRegistry {
 public:
  // What pub/sub asks of the server.
  class Hooks {
   public:
    // Closes `c` at once, dropping its output, and logs why: a subscriber
    // past client-output-buffer-limit pubsub (Clients::CloseForOutputLimit).
    virtual void CloseSlowSubscriber(Client& c, int64_t now_ms) = 0;
    // A message was written to `c` while maxmemory-clients is set: it may
    // have grown past the clients' limit (Clients::Weigh). Called after the
    // delivery, one subscriber at a time; may close `c`.
    virtual void WeighSubscriber(Client& c, int64_t now_ms) = 0;

   protected:
    ~Hooks() = default;
  };

  // Binds notify-keyspace-events (KeyspaceNotifications tells `observer`
  // whether "new" and "keymiss" events are wanted). REQUIRES: the arguments
  // outlive this object; `io` is only used once clients exist.
  PubSub(Hooks& hooks, Config& config, core::KeyspaceObserver& observer, const ClientRegistry& clients,
         Persistence& persistence, io::IoSystem& io, OutputLimits& limits, HeldPushes& held);
  PubSub(const PubSub&) = delete;
  PubSub& operator=(const PubSub&) = delete;

  // ---- the subscriptions (registry.h) ----------------------------------------
  using PubSubRegistry::Kind;
  using PubSubRegistry::Subscribe;
  using PubSubRegistry::Unsubscribe;
  using PubSubRegistry::Subscriptions;
  using PubSubRegistry::Count;
  using PubSubRegistry::ChannelAndPatternCount;
  using PubSubRegistry::Subscribed;
  using PubSubRegistry::MemoryOf;
  using PubSubRegistry::RemoveClient;
  using PubSubRegistry::Channels;
  using PubSubRegistry::NumSub;
  using PubSubRegistry::NumPatterns;
  using PubSubRegistry::NumChannels;

  // ---- delivery ---------------------------------------------------------------------
  // PUBLISH / SPUBLISH (and a message the cluster bus brought): delivers the
  // message to every receiver and returns how many there were, closing
  // the ones it found over the pubsub output limit. A closing client gets
  // nothing; CLIENT REPLY OFF does not silence messages.
  size_t Publish(Kind kind, std::string_view channel, std::string_view message);
  // A slot of myself's shard was unassigned (Redis's removeChannelsInSlot):
  // each shard channel hashing to it is dropped, its subscribers told
  // "sunsubscribe <channel> <their shard channels left>".
  void UnsubscribeShardChannelsInSlot(int slot);

  // ---- keyspace notifications --------------------------------------------------------
  // A key changed (class `type`, name `event`): published when
  // notify-keyspace-events enables it, as __keyspace@<db>__:<key> <event>
  // then __keyevent@<db>__:<event> <key> (Redis's notifyKeyspaceEvent).
  void NotifyKeyspaceEvent(uint32_t type, std::string_view event, int db, std::string_view key) {
    if (notifications_.Enabled(type)) PublishKeyspaceEvent(event, db, key);
  }
  const KeyspaceNotifications& notifications() const { return notifications_; }

 private:
  void PublishKeyspaceEvent(std::string_view event, int db, std::string_view key);

  Hooks& hooks_;
  const ClientRegistry& connected_;  // the server's clients, by id
  Persistence& persistence_;
  io::IoSystem& io_;
  OutputLimits& limits_;
  HeldPushes& held_;  // the running command's own pushes after its reply point
  KeyspaceNotifications notifications_;
};

}  // namespace ringkv::server
