// The server's side of the cluster bus (server/cluster/cluster_hooks.h):
// REPLICAOF for CLUSTER REPLICATE and failovers, the manual-failover write
// pause, the keys of a lost slot deleted, PUBLISH over the bus; clients
// blocked on keys of a slot that moved away redirected.
#include <string>
#include <vector>

#include "core/strings.h"
#include "io/thread_check.h"
#include "server/cluster/cluster_bus.h"
#include "server/cluster/cluster_mode.h"
#include "server/keyspace_events.h"
#include "server/server.h"

namespace ringkv::server {

ClusterHooks Server::MakeClusterHooks() {
  ClusterHooks h;
  h.io = io_.get();
  h.notify = [this] { io_->Notify(); };
  h.repl_offset = [this] { return static_cast<int64_t>(announced_repl_offset()); };
  h.set_master = [this](const std::string& host, int port) {
    if (loading_.active()) {  // the bus is served from inside a load (ServeWhileLoading)
      deferred_cluster_master_.emplace(host, port);
      return;
    }
    deferred_cluster_master_.reset();
    (void)replica_side_.ReplicaOf(host, port);
  };
  h.replicating = [this] { return replica_side_.is_replica(); };
  h.pause_writes = [this](int64_t until_ms) {
    // Redis's pauseClients(PAUSE_DURING_FAILOVER, ..., CLIENT_PAUSE_WRITE):
    // one purpose among others; the pause it replaced comes back after.
    if (!cluster_mf_paused_) pause_before_cluster_mf_ = clients_.pause().window();
    cluster_mf_paused_ = true;
    clients_.Pause(until_ms, /*all=*/false);
  };
  h.unpause_writes = [this] {
    if (!cluster_mf_paused_) return;
    cluster_mf_paused_ = false;
    if (pause_before_cluster_mf_.until_ms > UnixMs()) {
      clients_.pause().Restore(pause_before_cluster_mf_);
    } else {
      clients_.Unpause();
    }
  };
  h.delete_keys_in_slot = [this](int slot) {
    RINGKV_DCHECK_MAIN_THREAD();
    core::Database& db = keyspace_.db(0);
    const core::SlotIndex* index = db.slot_index();
    if (index == nullptr) return size_t{0};
    std::vector<std::string> keys;
    for (std::string_view k : index->Keys(slot, index->Count(slot))) keys.emplace_back(k);
    for (const std::string& k : keys) {
      KeyEvent(notify::kGeneric, "del", 0, k, /*by_server=*/true);  // told before the entry goes
      db.Erase(k);
      if (!replica_side_.is_replica()) {
        std::string_view del[] = {lazy_server_del_ ? "UNLINK" : "DEL", k};
        propagation_.Propagate(0, del);
      }
      ++stats_.dirty;
    }
    return keys.size();
  };
  h.master_data_age_ms = [this] {
    const int64_t last = replica_side_.is_replica() ? replica_side_.master_link()->last_io_ms : 0;
    return last == 0 ? INT64_MAX / 2 : UnixMs() - last;
  };
  h.tls_contexts = [this] { return std::make_pair(io_->tls().server_ctx(), io_->tls().client_ctx()); };
  h.publish_local = [this](bool shard, std::string_view channel, std::string_view message) {
    pubsub_.Publish(shard ? PubSub::Kind::kShard : PubSub::Kind::kChannel, channel, message);
  };
  return h;
}

void Server::PropagatePublish(PubSub::Kind kind, Argv argv, int db) {
  if (cluster_ != nullptr && cluster_->bus() != nullptr) {
    cluster_->bus()->PropagatePublish(kind == PubSub::Kind::kShard, argv[1], argv[2]);
    return;
  }
  // Replicas deliver it to their own subscribers (Redis propagates it there,
  // not to the AOF).
  propagation_.ToReplicas(db, argv);
}

void Server::RedirectBlockedClients() {
  if (blocking_.size() == 0) return;
  blocking_.UnblockKeyBlocksWith([&](uint64_t id, const BlockState& b) -> std::string {
    if (b.places.empty()) return "";
    const bool readonly_read = cluster_->readonly(id) && !b.argv.empty() && EqualsIgnoreCase(b.argv[0], "xread");
    const Client* c = clients_.Find(id);
    return cluster_->BlockedKeyError(b.places.front().first, readonly_read, c != nullptr && c->on_plain_connection());
  });
}

}  // namespace ringkv::server
