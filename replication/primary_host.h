// PrimaryHost: what the primary side's cron (Primary::Cron, primary_cron.cc)
// needs from the server that owns the Primary -- closing a replica's client,
// describing it, freeing the backlog, a keep-alive byte on its socket.
// replication/ cannot see server/, so the server implements this interface
// (Server::PrimaryGlue, server/primary_glue.h) and hands it to the cron.
//
// Only the cron calls through it, once per tick of a server with a backlog:
// a standalone server never does, and no client's command pays a virtual
// call for it.
//
// Re-entrancy: FreeBacklog destroys the Primary whose cron called; the cron
// returns at once then, touching nothing.
//
// Thread-safety: main thread only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "replication/primary.h"

namespace ringkv::repl {

// What one cron tick reads of the configuration and the server's state.
struct PrimaryCronSettings {
  int hz = 10;                   // ticks per second
  int64_t start_time_ms = 0;     // when the server started serving
  int64_t backlog_ttl_s = 3600;  // repl-backlog-ttl (0: never freed)
  int64_t ping_period_s = 10;    // repl-ping-replica-period
  int64_t timeout_ms = 60000;    // repl-timeout, in ms
  uint64_t soft_limit_bytes = 0;  // client-output-buffer-limit replica soft bytes (0: none)
  int64_t soft_limit_ms = 0;      // ... and how long a replica may stay over them
  bool is_replica = false;        // this server relays its primary's stream only
  // No PING: a failover (FAILOVER, or a cluster manual failover) froze the
  // stream so the target's acknowledgement can catch up with its offset.
  bool stream_frozen = false;
  bool diskless_transfer = false;  // a diskless payload is being streamed
};

class PrimaryHost {
 public:
  // Closes the replica's client (logging "Connection with replica ... lost.")
  // and forgets its link, as a replica whose connection dropped.
  virtual void DropReplica(uint64_t client_id) = 0;
  // CLIENT LIST's line for the client, nullopt when it is gone.
  virtual std::optional<std::string> ClientInfoLine(uint64_t client_id, int64_t now_ms) = 0;
  // Destroys the Primary (the backlog) and starts a new history from
  // `offset`: a new replication id, no secondary one.
  virtual void FreeBacklog(int64_t offset) = 0;
  // Queues "\n" to a replica waiting for its snapshot (its read timeout
  // does not fire during a long BGSAVE).
  virtual void SendKeepAlive(ReplicaLink& link) = 0;

 protected:
  ~PrimaryHost() = default;
};

}  // namespace ringkv::repl
