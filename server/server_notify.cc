// Server: what follows a change to the keyspace beyond the change itself --
// WATCH invalidation and blocked clients on FLUSH / SWAPDB, and the
// keyspace's own deletions (expiry, eviction: propagated as DEL or UNLINK,
// core::KeyspaceObserver) -- keyspace notifications are PubSub's
// (server/pubsub/pubsub.h) -- and MONITOR's feed of every command (its
// clients and lines: monitors.h).
#include <string>

#include "io/thread_check.h"
#include "server/server.h"

namespace ringkv::server {

// Redis's touchAllWatchedKeysInDb(emptied, replaced_with): the watchers of
// database `db` whose key `emptied` held, or `replacement` (if any) holds,
// become dirty -- unless the key stays logically absent (WatchedKeys::TouchDb).
void Server::TouchWatchedDb(int db, core::Database& emptied, core::Database* replacement) {
  WatchedKeys& watched = transactions_.watched();
  if (watched.empty()) return;
  const int64_t now_ms = clock_.WallMs();
  watched.TouchDb(
      db, [&](std::string_view key) { return emptied.Peek(key) != nullptr; },
      [&](std::string_view key) { return replacement != nullptr && replacement->Peek(key) != nullptr; },
      [&](std::string_view key) { return replacement != nullptr && replacement->IsLogicallyExpired(key, now_ms); });
}

void Server::SignalFlushingDb(int db) {
  // Clients blocked on its keys are looked at once it is empty (a consumer
  // group's reader is told its stream is gone).
  blocking_.SignalDbChanged(db);
  TouchWatchedDb(db, keyspace_.db(db), nullptr);
}

void Server::DatasetReplacing(core::Keyspace* incoming) {
  RINGKV_DCHECK_MAIN_THREAD();
  for (int i = 0; i < keyspace_.count(); ++i) {
    blocking_.SignalDbChanged(i);
    TouchWatchedDb(i, keyspace_.db(i), incoming != nullptr ? &incoming->db(i) : nullptr);
  }
  // Every tracking client drops everything (trackingInvalidateKeysOnFlush);
  // DEBUG RELOAD's own client after its reply.
  tracking_.Flushed(current_client_id());
}

void Server::SignalSwappedDbs(int a, int b) {
  // After the swap: the watchers of database x saw what y holds now, and
  // see what x holds now.
  TouchWatchedDb(a, keyspace_.db(b), &keyspace_.db(a));
  TouchWatchedDb(b, keyspace_.db(a), &keyspace_.db(b));
  // Clients blocked on a key that the swap brought in (or took away) are looked at.
  // Brought in, or gone (a stream's group reader is told).
  blocking_.SignalDbChanged(a);
  blocking_.SignalDbChanged(b);
}

void Server::FeedMonitors(const Client& c, Argv argv, int64_t now_us) {
  const std::string line = Monitors::Line(c, argv, now_us);
  for (uint64_t id : monitors_.ids()) {
    Client* m = FindClient(id);
    if (m == nullptr || m->closing) continue;
    ReplyTarget(*m).Append(line);
  }
}

std::vector<std::string> Server::ClientComponents(const Client& c) const {
  std::vector<std::string> names;
  if (c.meta) names.emplace_back("meta");
  if (c.deferred) names.emplace_back("deferred");
  if (blocking_.IsBlocked(c.id())) names.emplace_back("blocking");
  if (transactions_.Find(c) != nullptr) names.emplace_back("multi");
  if (transactions_.Watching(c)) names.emplace_back("watch");
  if (pubsub_.Subscribed(c.id())) names.emplace_back("pubsub");
  if (c.monitor) names.emplace_back("monitor");
  if (c.tracking) names.emplace_back("tracking");
  if (c.held_replies) names.emplace_back("durable-replies");
  if (c.over_soft_limit) names.emplace_back("output-soft-limit");
  return names;
}

void Server::OnKeyExpired(int db, std::string_view key) {
  RINGKV_DCHECK_MAIN_THREAD();
  if (replica_side_.is_replica()) return;  // a replica never propagates deletions of its own
  std::string k(key);  // the key's storage goes away with the entry
  std::string_view del[] = {lazy_expire_ ? "UNLINK" : "DEL", k};
  propagation_.Propagate(db, del);
  KeyDeletedByServer(notify::kExpired, "expired", db, k);
}

void Server::OnKeyEvicted(int db, std::string_view key) {
  RINGKV_DCHECK_MAIN_THREAD();
  std::string k(key);
  if (!replica_side_.is_replica()) {
    std::string_view del[] = {lazy_eviction_ ? "UNLINK" : "DEL", k};
    propagation_.Propagate(db, del);
  }
  KeyDeletedByServer(notify::kEvicted, "evicted", db, k);
}

void Server::OnKeyCreated(int db, std::string_view key) {
  NotifyKeyspaceEvent(notify::kNew, "new", db, key);
  blocking_.SignalReady(db, key);  // Redis's dbAdd readies the key (nothing when nobody waits on it)
}
void Server::OnKeyMiss(int db, std::string_view key) { NotifyKeyspaceEvent(notify::kKeyMiss, "keymiss", db, key); }

}  // namespace ringkv::server
