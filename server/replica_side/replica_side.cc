// ReplicaSide: the role changes (REPLICAOF, FAILOVER), the primary's stream
// and the cron. What the link asks of the server (repl::ReplicaHost) is in
// replica_side_host.cc.
#include "server/replica_side/replica_side.h"

#include <utility>

#include "core/strings.h"
#include "io/thread_check.h"
#include "server/clock.h"
#include "server/command_table.h"
#include "server/logging.h"
#include "server/oom_score.h"

namespace ringkv::server {

ReplicaSide::ReplicaSide(Hooks& hooks, Config& config, repl::ReplicationIds& ids, PrimarySide& primary_side,
                         Persistence& persistence, BlockedClients& blocking, core::Keyspace& keyspace,
                         LazyFreer& lazy_freer)
    : hooks_(hooks),
      config_(config),
      ids_(ids),
      primary_side_(primary_side),
      persistence_(persistence),
      blocking_(blocking),
      keyspace_(keyspace),
      lazy_freer_(lazy_freer) {}

ReplicaSide::~ReplicaSide() = default;

void ReplicaSide::BindConfig() {
  config_.Bind("replica-read-only", &read_only_);
  config_.Bind("replica-serve-stale-data", &serve_stale_data_);
}

std::string ReplicaSide::ReplicaOf(const std::string& host, int port) {
  if (host.empty()) {  // REPLICAOF NO ONE
    if (!link_) return "+OK";
    link_->CloseLink();
    link_.reset();  // with the keys its own clients gave a deadline
    keyspace_.set_expiry_mode(core::ExpiryMode::kDelete);  // every key expires here now
    if (repl::Primary* primary = primary_side_.primary()) {
      // Our own writes follow the primary's stream: the first one selects
      // its database (the stream's last SELECT was the old primary's).
      primary->ForceSelect();
      // Keep the history: the old primary's id becomes the secondary one, so
      // its other replicas can continue here with a partial resync.
      ids_.replid2 = ids_.replid;
      ids_.second_offset = static_cast<int64_t>(ReplOffset()) + 1;
      ids_.replid = repl::ReplicationIds::Fresh().replid;
      // Our replicas reconnect and continue with PSYNC under the new id.
      primary_side_.DisconnectReplicas();
    }
    SetLogRoleReplica(false);
    Log(kNotice, "MASTER MODE enabled");
    (void)ApplyOomScore(config_, OomClass::kPrimary);  // at once, as Redis; logs its own failure
    return "+OK";
  }
  if (link_ && link_->link().host == host && link_->link().port == port) {
    return "+OK Already connected to specified master";
  }
  // Our replicas stay, as Redis 7.0 keeps them: if the new primary
  // continues our history they miss nothing; they are disconnected (and
  // resync with us) only when our history changes -- a partial resync under
  // another id, or a full sync once its payload has arrived (LoadFullSync).
  if (link_) {
    // A replica moving to another primary keeps its link's database, as
    // Redis keeps its cached master.
    link_->Retarget(host, port);
  } else {
    // Clients blocked here would be served by the new primary's writes and
    // diverge from it: they are told and disconnected, as in Redis.
    blocking_.DisconnectAll(
        "UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)");
    // A primary turning replica starts from db 0 (the new primary's stream
    // starts with SELECT: it promoted itself).
    repl::ReplicaHost& host_side = *this;  // the private base: the link's view of this object
    link_ = std::make_unique<repl::ReplicaSide>(host_side, host, port, /*db=*/0);
  }
  // Expired keys stay until the primary's DEL (reads do not see them).
  keyspace_.set_expiry_mode(core::ExpiryMode::kHide);
  SetLogRoleReplica(true);
  (void)ApplyOomScore(config_, OomClass::kReplica);  // at once, as Redis; logs its own failure
  Log(kNotice, StrCat("Connecting to MASTER ", host, ":", port));
  if (hooks_.ServingSinceMs() != 0) link_->StartSync();  // at start-up: once listening
  return "+OK";
}

void ReplicaSide::OnMasterCommand(Client& c, Argv argv) {
  if (hooks_.ScriptBusy() || (link_ && link_->holding())) {
    if (link_) link_->Hold(argv);
    return;
  }
  ExecuteFromMaster(c, argv);
}

void ReplicaSide::ExecuteFromMaster(Client& c, Argv argv) {
  RINGKV_DCHECK_MAIN_THREAD();
  // The primary decided which keys are live: its commands see expired keys
  // that have not been deleted yet (its DEL comes in the stream).
  keyspace_.set_expiry_mode(core::ExpiryMode::kKeep);
  hooks_.ExecuteMasterCommand(c, argv);
  keyspace_.set_expiry_mode(core::ExpiryMode::kHide);
  // The command may have ended replication (REPLICAOF NO ONE in the stream).
  if (link_) link_->Applied(argv, c.in_multi);
}

void ReplicaSide::RememberOwnVolatileKeys(const Client& c, const CommandSpec& spec, Argv argv) {
  repl::ReplicaKeyExpiry& own = link_->own_expiry();
  core::Database& db = keyspace_.db(c.db);
  for (std::string_view key : CommandKeys(spec, argv)) own.RememberIfVolatile(db, key);
}

void ReplicaSide::ReplicaCron(int64_t now_ms) {
  if (repl::ReplicaKeyExpiry* own = link_->own_expiry_if_any()) {
    // As Redis's expireSlaveKeys: deleted here, the DEL goes to our AOF.
    own->ExpireDue(keyspace_, now_ms, [this](int db, std::string_view key) { hooks_.PropagateOwnExpiry(db, key); });
  }
  link_->Cron(now_ms);
}

// ---- FAILOVER -------------------------------------------------------------------------

std::string ReplicaSide::StartFailover(const std::string& host, int port, int64_t timeout_ms, bool force) {
  std::string refusal =
      repl::Failover::Refusal(link_ != nullptr, failover_ != nullptr, primary_side_.primary(), host, port);
  if (!refusal.empty()) return refusal;
  failover_ = std::make_unique<repl::Failover>(host, port, force, timeout_ms > 0 ? UnixMs() + timeout_ms : 0);
  // No new writes while the target catches up (Redis pauses writes too).
  hooks_.PauseWritesForFailover();
  primary_side_.RequestAcks();
  Log(kNotice, host.empty() ? std::string("FAILOVER requested to any replica.")
                            : StrCat("FAILOVER requested to ", host, ":", port, "."));
  return "";
}

std::string ReplicaSide::AbortFailover() {
  if (!failover_) return "ERR No failover in progress.";
  EndFailover(false, "aborted by user");
  return "";
}

void ReplicaSide::EndFailover(bool ok, std::string_view why) {
  if (!failover_) return;
  const bool demoted = failover_->in_progress();
  failover_.reset();
  if (!ok && demoted) ReplicaOf("", 0);  // the target did not take over: back to primary
  hooks_.ResumeWritesAfterFailover();
  Log(ok ? kNotice : kWarning, ok ? std::string("Failover target accepted: this server is now a replica.")
                                  : StrCat("FAILOVER aborted: ", why));
}

void ReplicaSide::FailoverCron(int64_t now_ms) {
  const repl::Failover::Step step = failover_->Cron(primary_side_.primary(), ReplOffset(), now_ms);
  if (step.kind == repl::Failover::Step::Kind::kAbort) {
    EndFailover(false, step.why);
  } else if (step.kind == repl::Failover::Step::Kind::kHandOver) {
    const std::string host = failover_->host();
    ReplicaOf(host, failover_->port());
  }
}

}  // namespace ringkv::server
