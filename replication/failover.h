// Failover: FAILOVER's state machine on the primary that hands over (Redis
// 7.0's coordinated failover). FAILOVER [TO host port] [TIMEOUT ms] [FORCE]
// creates one; the server pauses writes, asks its replicas for an ACK, and
// calls Cron every tick until the target replica has acknowledged the whole
// stream (or, with FORCE, the timeout passed): then it demotes itself to
// that replica's replica with PSYNC ... FAILOVER (in_progress), and the
// sync's end decides (ReplicaHost::EndFailover). No target in sync by the
// timeout, or no replicas at all, ends it.
//
// The server owns one only while a failover runs: a server that never ran
// FAILOVER allocates nothing. This class decides; the server acts (pausing,
// REPLICAOF, logging the end).
//
// Thread-safety: main thread only.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "replication/primary.h"

namespace ringkv::repl {

class Failover {
 public:
  // The error FAILOVER gets on this server, or "" when one may start:
  // `is_replica`, `running` (one already runs), the replicas (`primary`,
  // null when none ever attached) and the target named by TO (`host` empty:
  // any replica).
  static std::string Refusal(bool is_replica, bool running, const Primary* primary, const std::string& host,
                             int port);

  // `deadline_ms` 0: no timeout.
  Failover(std::string host, int port, bool force, int64_t deadline_ms);

  // INFO's master_failover_state.
  const char* StateName() const { return in_progress_ ? "failover-in-progress" : "waiting-for-sync"; }
  // Demoted: syncing with the target, which decides.
  bool in_progress() const { return in_progress_; }
  // The one REPLCONF GETACK was sent: the stream is frozen after it.
  bool ack_requested() const { return ack_requested_; }
  void set_ack_requested() { ack_requested_ = true; }
  // The target: as TO named it, or once Cron chose one, the first replica
  // in sync.
  const std::string& host() const { return host_; }
  int port() const { return port_; }

  struct Step {
    enum class Kind { kWait, kAbort, kHandOver } kind = Kind::kWait;
    std::string why;  // kAbort: for "FAILOVER aborted: <why>"
  };
  // Once per cron tick. kHandOver: the target has the whole stream (or
  // FORCE and the deadline passed) -- in_progress from now; the server
  // becomes the replica of host():port(). kAbort: give up. Waits while in
  // progress (the sync decides then).
  Step Cron(const Primary* primary, uint64_t offset, int64_t now_ms);

 private:
  std::string host_;
  int port_ = 0;
  bool force_ = false;
  int64_t deadline_ms_ = 0;
  bool in_progress_ = false;
  bool ack_requested_ = false;
};

}  // namespace ringkv::repl
