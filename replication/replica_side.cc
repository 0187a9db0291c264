#include "replication/replica_side.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/resp_command.h"
#include "io/io_log.h"

namespace ringkv::repl {
ReplicaSide::ReplicaSide(ReplicaHost& server, std::string host, int port, int db) : server_(server) {
  link_.host = std::move(host);
  link_.port = port;
  link_.db = db;
}

ReplicaSide::~ReplicaSide() = default;  // ~SyncWorker cancels and joins (closing an unclaimed socket)

const char* ReplicaSide::LinkStateName() const {
  switch (link_.state) {
    case MasterLink::State::kConnect:
      return "connect";
    case MasterLink::State::kConnected:
      return "connected";
    case MasterLink::State::kSyncing:
      break;
  }
  switch (worker_ ? worker_->phase() : SyncPhase::kTransfer) {
    case SyncPhase::kConnecting:
      return "connecting";
    case SyncPhase::kHandshake:
      return "handshake";
    case SyncPhase::kTransfer:
      break;
  }
  return "sync";
}

int ReplicaSide::StreamDb() const {
  // A replica's stream is its primary's, verbatim: it continues in the
  // database the primary's link has selected (Redis's rsi->repl_stream_db).
  if (link_.client_id != 0) {
    if (std::optional<int> db = server_.MasterClientDb(link_.client_id)) return *db;
  }
  return link_.db;
}

int64_t ReplicaSide::NextCronMs(int64_t now_ms) {
  // Redis reconnects from replicationCron, once a second since start-up:
  // the next such second, not a full second after the loss.
  const int64_t start_ms = server_.StartTimeMs();
  return start_ms + ((now_ms - start_ms) / 1000 + 1) * 1000;
}

void ReplicaSide::StartSync() {
  if (!worker_) worker_ = std::make_unique<SyncWorker>([this] { server_.WakeMainThread(); });
  SyncRequest req = server_.NewSyncRequest();
  req.host = link_.host;
  req.port = link_.port;
  req.failover = server_.FailoverInProgress();
  if (server_.Backlog() != nullptr) {  // we have history: ask to continue after it
    req.replid = server_.History().replid;
    req.psync_offset = static_cast<int64_t>(server_.ReplOffset()) + 1;
  }
  link_.state = MasterLink::State::kSyncing;
  io::Log(io::kLogNotice, absl::StrCat("MASTER <-> REPLICA sync started; PSYNC ", req.replid, " ", req.psync_offset));
  worker_->Start(req);
}

void ReplicaSide::PollSync() {
  if (!worker_) return;
  std::optional<SyncResult> r = worker_->Poll();
  if (r) OnSyncResult(std::move(*r));
}

void ReplicaSide::OnSyncResult(SyncResult r) {
  const int64_t now_ms = server_.NowMs();
  if (r.kind == SyncResult::Kind::kFailed) {
    io::Log(io::kLogWarning, r.error);
    server_.DropStagedLoad();
    if (server_.FailoverInProgress()) {  // the target refused: stay the primary
      // An error answered to PSYNC FAILOVER is logged with Redis's reason,
      // which operators and Redis's failover test look for. This ends the
      // replication (and `this`): nothing may follow.
      server_.EndFailover(false, r.psync_refused ? std::string("Failover target rejected psync request") : r.error);
      return;
    }
    link_.state = MasterLink::State::kConnect;
    link_.retry_at_ms = NextCronMs(now_ms);
    return;
  }
  if (r.kind == SyncResult::Kind::kFull) {
    // The stream after the snapshot continues in the database it names
    // (a primary's starts with SELECT anyway; a chained replica's may not):
    // the host sets it (set_stream_db).
    if (!server_.LoadFullSync(r, now_ms)) {
      link_.state = MasterLink::State::kConnect;
      link_.retry_at_ms = NextCronMs(now_ms);
      return;
    }
  }
  // Continue or full: adopt the socket as the primary's client.
  ReplicationIds& ids = server_.History();
  if (r.kind == SyncResult::Kind::kContinue && r.replid != ids.replid) {
    ids.replid2 = ids.replid;
    ids.second_offset = static_cast<int64_t>(server_.ReplOffset()) + 1;
    ids.replid = r.replid;
    // Our replicas learn the new id by reconnecting (they continue), as in Redis.
    if (server_.Backlog() != nullptr) server_.DropReplicas();
  }
  link_.client_id = server_.AdoptMasterSocket(r, link_.db);
  link_.state = MasterLink::State::kConnected;
  link_.last_io_ms = now_ms;
  const bool partial = r.kind == SyncResult::Kind::kContinue;
  io::Log(io::kLogNotice, partial ? "MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization."
                                  : "MASTER <-> REPLICA sync: Finished with success");
  server_.SupervisorStatus(partial ? "MASTER <-> REPLICA sync: Partial Resynchronization accepted. Ready to accept "
                                 "connections in read-write mode."
                               : "MASTER <-> REPLICA sync: Finished with success. Ready to accept connections in "
                                 "read-write mode.");
  SendAck();
  if (server_.FailoverInProgress()) server_.EndFailover(true, "");
}

void ReplicaSide::Detach(int client_db) {
  link_.db = client_db;
  link_.open_transaction.clear();  // the partial resync sends it again
  link_.held.clear();              // not applied, not counted: sent again too
  link_.client_id = 0;
}

void ReplicaSide::CloseLink() {
  if (worker_) worker_->Cancel();
  server_.DropStagedLoad();  // a diskless load cut short (the worker has stopped)
  const uint64_t id = link_.client_id;
  if (id == 0) return;
  // Detached first: the client's closing must not count as a lost link.
  if (std::optional<int> db = server_.MasterClientDb(id)) Detach(*db);
  link_.client_id = 0;
  server_.CloseMasterClient(id);
}

void ReplicaSide::Retarget(std::string host, int port) {
  CloseLink();
  const int db = link_.db;
  link_ = MasterLink{};
  link_.host = std::move(host);
  link_.port = port;
  link_.db = db;
}

void ReplicaSide::OnLinkClosed(int client_db) {
  io::Log(io::kLogWarning, "Connection with master lost.");
  Detach(client_db);
  link_.state = MasterLink::State::kConnect;
  link_.retry_at_ms = NextCronMs(server_.NowMs());
}

void ReplicaSide::ApplyHeld() {
  const uint64_t id = link_.client_id;
  bool open = id != 0 && server_.MasterClientOpen(id);
  while (open && !link_.held.empty() && !server_.ScriptBusy()) {
    std::vector<std::string> args = std::move(link_.held.front());
    link_.held.pop_front();
    std::vector<std::string_view> views(args.begin(), args.end());
    if (!server_.ApplyMasterCommand(id, views)) return;  // a REPLICAOF NO ONE it ran (FAILOVER): `this` is gone
    open = server_.MasterClientOpen(id);
  }
  if (!open) link_.held.clear();
}

void ReplicaSide::Applied(Argv argv, bool in_multi) {
  link_.last_io_ms = server_.NowMs();
  // Every byte of the primary's stream goes to our own backlog, verbatim,
  // so our replicas and a later PSYNC see the same offsets -- counted only
  // once applied: a transaction's bytes wait for its EXEC (Redis's reploff
  // does not move inside MULTI either).
  Primary* backlog = server_.Backlog();
  if (backlog == nullptr) return;
  if (in_multi || !link_.open_transaction.empty()) {
    core::AppendRespCommand(argv, &link_.open_transaction);
    if (in_multi) return;
    backlog->FeedStream(link_.open_transaction);
    link_.open_transaction.clear();
  } else {
    backlog->FeedRaw(argv);
  }
  server_.History().offset = static_cast<int64_t>(server_.ReplOffset());
}

void ReplicaSide::SendAck() {
  if (link_.client_id == 0) return;
  const uint64_t offset = server_.ReplOffset();
  // FACK: how far our AOF is fsynced (what WAITAOF counts on a primary).
  if (server_.AofSynced()) {
    link_.fsynced_offset = offset;
    aof_marks_.clear();
  }
  std::string ack;
  const std::string off = absl::StrCat(offset), fack = absl::StrCat(link_.fsynced_offset);
  const std::string_view argv[] = {"REPLCONF", "ACK", off, "FACK", fack};
  core::AppendRespCommand(argv, &ack);
  server_.WriteToMaster(link_.client_id, ack);
}

void ReplicaSide::NoteAofFed(uint64_t aof_offset) {
  const uint64_t offset = server_.ReplOffset();
  if (aof_marks_.empty() || aof_marks_.back().second != offset) aof_marks_.emplace_back(aof_offset, offset);
}

void ReplicaSide::OnAofSynced(uint64_t aof_synced) {
  bool advanced = false;
  while (!aof_marks_.empty() && aof_marks_.front().first <= aof_synced) {
    link_.fsynced_offset = std::max(link_.fsynced_offset, aof_marks_.front().second);
    aof_marks_.pop_front();
    advanced = true;
  }
  if (advanced) SendAck();
}

void ReplicaSide::Cron(int64_t now_ms) {
  if (link_.state == MasterLink::State::kConnect && now_ms >= link_.retry_at_ms) StartSync();
  if (link_.state == MasterLink::State::kConnected && now_ms - link_.last_ack_ms >= 1000) {
    link_.last_ack_ms = now_ms;  // once a second, as Redis's replicationCron
    SendAck();
  }
}

}  // namespace ringkv::repl
