#include "server/keyspace_notifications.h"

#include <algorithm>

#include "server/config.h"

namespace ringkv::server {

KeyspaceNotifications::KeyspaceNotifications(Config& config, core::KeyspaceObserver& observer) {
  config.Bind("notify-keyspace-events", [this, &config, &observer] {
    const int64_t flags = notify::ParseFlags(config.Str("notify-keyspace-events"));
    flags_ = static_cast<uint32_t>(std::max<int64_t>(0, flags));
    observer.WatchCreatedKeys(kWatchCreatedKeys, (flags_ & notify::kNew) != 0);
    observer.wants_key_misses = (flags_ & notify::kKeyMiss) != 0;
  });
}

}  // namespace ringkv::server
