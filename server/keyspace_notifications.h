// KeyspaceNotifications: notify-keyspace-events -- which event classes are
// published, and on which channels.
//
// Owns the enabled classes (bound to the config at construction). It also
// tells the keyspace's observer whether "new" and "keymiss" events are
// wanted, so that creating keys and missing lookups cost one test when they
// are not. A member of PubSub (server/pubsub/pubsub.h), which publishes
// the events. Every write asks Enabled(): inlined, two tests of a bit mask.
//
// Thread-safety: main thread only.
#pragma once

#include <cstdint>

#include "core/keyspace.h"
#include "server/keyspace_events.h"

namespace ringkv::server {

class Config;

class KeyspaceNotifications {
 public:
  // `config` and `observer` outlive this object.
  KeyspaceNotifications(Config& config, core::KeyspaceObserver& observer);
  KeyspaceNotifications(const KeyspaceNotifications&) = delete;
  KeyspaceNotifications& operator=(const KeyspaceNotifications&) = delete;

  // Whether an event of class `type` is published at all: its class is
  // enabled, and so is one of the channel kinds (K, E).
  bool Enabled(uint32_t type) const {
    return (flags_ & type) != 0 && (flags_ & (notify::kKeyspace | notify::kKeyevent)) != 0;
  }
  // __keyspace@<db>__:<key> <event> (K) and __keyevent@<db>__:<event> <key> (E).
  bool keyspace_channel() const { return (flags_ & notify::kKeyspace) != 0; }
  bool keyevent_channel() const { return (flags_ & notify::kKeyevent) != 0; }
  // Its bit in the observer's created_key_watchers (set while "new" is on).
  static constexpr uint8_t kWatchCreatedKeys = 1;

 private:
  uint32_t flags_ = 0;
};

}  // namespace ringkv::server
