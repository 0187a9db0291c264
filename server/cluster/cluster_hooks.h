// ClusterHooks: what the cluster bus asks of the server it runs in, as
// callbacks, so server/cluster/ needs no Server header (the server fills
// them in server_cluster.cc).
//
// Thread-safety: every hook is called on the main command thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>

#include "io/io_system.h"
#include "io/tls_context.h"

namespace ringkv::server {

struct ClusterHooks {
  // The I/O system the bus's links run on (io/link_sink.h); outlives the bus.
  io::IoSystem* io = nullptr;
  // Wakes the main thread (IoSystem::Notify): it then runs OnBusEvents.
  std::function<void()> notify;
  // The offset PING headers carry: master_repl_offset on a master, the
  // offset processed from its master on a replica.
  std::function<int64_t()> repl_offset;
  // REPLICAOF host port; an empty host is REPLICAOF NO ONE.
  std::function<void(const std::string&, int)> set_master;
  // Whether the server has a primary now.
  std::function<bool()> replicating;
  // A master's manual failover (MFSTART): client writes paused until
  // `until_ms` (Redis's PAUSE_DURING_FAILOVER), and the pause ended; while
  // it lasts the master sends replicas no replication PING (it would move
  // the offset the replica must reach).
  std::function<void(int64_t until_ms)> pause_writes;
  std::function<void()> unpause_writes;
  // Redis's delKeysInSlot: every key of the slot deleted (propagated as
  // DEL, or UNLINK with lazyfree-lazy-server-del, and signalled); returns
  // how many.
  std::function<size_t(int slot)> delete_keys_in_slot;
  // How long, in ms, the replica's link to its master has been idle or
  // down (Redis's data_age before the node timeout is taken off): huge
  // when it never synced.
  std::function<int64_t()> master_data_age_ms;
  // A PUBLISH (shard: SPUBLISH) received over the bus, delivered to this
  // node's subscribers only.
  std::function<void(bool shard, std::string_view channel, std::string_view message)> publish_local;
  // The server's current TLS contexts (server side, client side), for the
  // bus's links with tls-cluster; null before TLS is configured. A new pair
  // after a certificate rotation.
  std::function<std::pair<io::SslCtxPtr, io::SslCtxPtr>()> tls_contexts;
};

}  // namespace ringkv::server
