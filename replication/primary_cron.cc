// Primary::Cron: the primary side's once-a-tick duties (replicationCron's
// primary half in Redis 7.0) -- the backlog's time to live without
// replicas, keep-alive newlines and PINGs, and the replicas dropped for a
// timeout or the soft output limit. Log lines as redis-server 7.0 writes
// them.
#include <algorithm>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "io/io_log.h"
#include "replication/primary.h"
#include "replication/primary_host.h"

namespace ringkv::repl {
std::string Primary::ReplicaName(uint64_t client_id) const {
  const ReplicaLink* link = Find(client_id);
  if (link == nullptr) return "?";
  return absl::StrCat(link->ip(), ":", link->listening_port);
}

int Primary::GoodReplicas(int64_t now_ms, int64_t max_lag_s) const {
  int n = 0;
  for (const auto& r : replicas_) {
    if (r->state == ReplicaState::kOnline && now_ms - r->last_ack_ms <= max_lag_s * 1000) ++n;
  }
  return n;
}

bool Primary::Cron(PrimaryHost& host, const PrimaryCronSettings& s, int64_t now_ms) {
  // A primary without replicas frees its backlog after repl-backlog-ttl
  // seconds (a new history then starts, as in Redis).
  if (replicas_.empty() && !s.is_replica) {
    if (no_replicas_since_ms_ == 0) no_replicas_since_ms_ = now_ms;
    const int64_t ttl_s = s.backlog_ttl_s;
    if (ttl_s > 0 && ttl_s < INT64_MAX / 1000 && now_ms - no_replicas_since_ms_ > ttl_s * 1000) {
      io::Log(io::kLogNotice, absl::StrCat("Replication backlog freed after ", ttl_s,
                                           " seconds without connected replicas."));
      host.FreeBacklog(static_cast<int64_t>(offset()));  // destroys this
      return false;
    }
  } else {
    no_replicas_since_ms_ = 0;
  }
  // Replicas waiting for a snapshot get a newline each second, so their
  // read timeout does not fire during a long BGSAVE (as Redis). Not while a
  // diskless payload streams to them: the newline would land inside it.
  if (now_ms / 1000 != (now_ms - 1000 / s.hz) / 1000) {
    for (const auto& r : replicas_) {
      if (r->state == ReplicaState::kWaitBgsaveStart ||
          (r->state == ReplicaState::kWaitBgsaveEnd && !s.diskless_transfer)) {
        host.SendKeepAlive(*r);
      }
    }
  }
  // PING on the seconds since start-up that are multiples of the period, as
  // Redis's replicationCron counts its loops (not in the first second, when
  // Redis has no replica yet): a replica attaching does not get one at once.
  const int64_t period_s = std::max<int64_t>(1, s.ping_period_s);
  const int64_t second = (now_ms - s.start_time_ms) / 1000;
  // Not during a failover's pause: the PING would move the offset the
  // replica must reach.
  if (online() > 0 && !s.is_replica && !s.stream_frozen && second > 0 && second != last_ping_s_ &&
      second % period_s == 0) {
    last_ping_s_ = second;
    const std::string_view ping[] = {"PING"};
    FeedRaw(ping);
  }
  std::vector<uint64_t> stale;
  for (const auto& r : replicas_) {
    if (r->state == ReplicaState::kOnline && !r->old_sync && now_ms - r->last_ack_ms > s.timeout_ms) {
      stale.push_back(r->client_id);
    }
  }
  for (uint64_t id : stale) {
    io::Log(io::kLogWarning, absl::StrCat("Disconnecting timedout replica (streaming sync): ", ReplicaName(id)));
    host.DropReplica(id);
  }
  // A disk-based payload is read from the file at the replica's pace, but a
  // diskless one holds the fork child: a replica stuck in it is dropped.
  if (s.diskless_transfer) {
    stale.clear();
    CheckStalledTransfers(s.timeout_ms, now_ms, &stale);
    for (uint64_t id : stale) {
      io::Log(io::kLogWarning, absl::StrCat("Disconnecting timedout replica (full sync): ", ReplicaName(id)));
      host.DropReplica(id);
    }
  }
  // client-output-buffer-limit replica: the soft limit here (the hard one,
  // raised to repl-backlog-size as Redis 7.0 does, in the server's flush).
  // A replica cut while the backlog still holds its offset resyncs partially.
  std::vector<uint64_t> over;
  CheckSoftLimit(s.soft_limit_bytes, s.soft_limit_ms, now_ms, &over);
  for (uint64_t id : over) {
    if (std::optional<std::string> info = host.ClientInfoLine(id, now_ms)) {
      io::Log(io::kLogWarning, absl::StrCat("Client ", *info,
                                            " scheduled to be closed ASAP for overcoming of output buffer limits."));
    }
    host.DropReplica(id);
  }
  return true;
}

}  // namespace ringkv::repl
