#include "replication/failover.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "io/io_log.h"

namespace ringkv::repl {
std::string Failover::Refusal(bool is_replica, bool running, const Primary* primary, const std::string& host,
                              int port) {
  if (is_replica) return "ERR FAILOVER is not valid when server is a replica.";
  if (running) return "ERR FAILOVER already in progress.";
  if (primary == nullptr || primary->online() == 0) return "ERR FAILOVER requires connected replicas.";
  if (!host.empty()) {
    bool found = false;
    for (const auto& r : primary->replicas()) {
      const std::string ip = r->ip();
      found |= r->state == ReplicaState::kOnline && ip == host && r->listening_port == port;
    }
    if (!found) return "ERR FAILOVER target HOST and PORT is not a replica.";
  }
  return "";
}

Failover::Failover(std::string host, int port, bool force, int64_t deadline_ms)
    : host_(std::move(host)), port_(port), force_(force), deadline_ms_(deadline_ms) {}

Failover::Step Failover::Cron(const Primary* primary, uint64_t offset, int64_t now_ms) {
  if (in_progress_) return {};  // the sync decides
  if (primary == nullptr) return {Step::Kind::kAbort, "no replicas"};
  const ReplicaLink* target = nullptr;
  for (const auto& r : primary->replicas()) {
    if (r->state != ReplicaState::kOnline) continue;
    const std::string ip = r->ip();
    const bool chosen = host_.empty() ? r->ack_offset == offset : ip == host_ && r->listening_port == port_;
    if (!chosen) continue;
    if (host_.empty()) {
      host_ = ip;
      port_ = r->listening_port;
    }
    target = r.get();
    break;
  }
  const bool timed_out = deadline_ms_ > 0 && now_ms >= deadline_ms_;
  if (target == nullptr || (target->ack_offset < offset && !(timed_out && force_))) {
    if (timed_out) return {Step::Kind::kAbort, "timeout waiting for the target to catch up"};
    return {};
  }
  // The target has everything (or FORCE and the timeout passed): become its
  // replica, asking it to take over with PSYNC ... FAILOVER (it promotes
  // itself and continues our history).
  if (target->ack_offset < offset) {
    io::Log(io::kLogNotice, absl::StrCat("FAILOVER to ", host_, ":", port_, " time out exceeded, failing over."));
  } else {
    io::Log(io::kLogNotice, absl::StrCat("Failover target ", host_, ":", port_, " is synced, failing over."));
  }
  in_progress_ = true;
  return {Step::Kind::kHandOver, ""};
}

}  // namespace ringkv::repl
