// Server::ReplicaGlue: the server's repl::ReplicaHost -- what the replica
// side of replication (repl::ReplicaSide) asks of the server: the sync
// settings, loading a full sync's payload, the primary's client, running
// its commands through the gate. A member class, so it reaches the server's
// private state without the server carrying the interface (and a vtable)
// as a base; only a replica ever calls it.
//
// Included by the files that create or destroy it (server.cc,
// server_replica.cc), nowhere else.
//
// Thread-safety: main thread only, except WakeMainThread (any thread).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

#include "replication/replica_host.h"
#include "server/clock.h"
#include "server/server.h"
#include "server/supervision.h"

namespace ringkv::server {

class Server::ReplicaGlue final : public repl::ReplicaHost {
 public:
  explicit ReplicaGlue(Server& s) : s_(s) {}

  int64_t NowMs() override { return UnixMs(); }
  int64_t StartTimeMs() override { return s_.start_time_ms_; }
  void WakeMainThread() override { s_.io_->Notify(); }
  repl::SyncRequest NewSyncRequest() override { return s_.NewSyncRequest(); }
  void DropStagedLoad() override { s_.sync_staging_.reset(); }
  repl::ReplicationIds& History() override { return s_.repl_ids_; }
  repl::Primary* Backlog() override { return s_.primary_side_.primary(); }
  uint64_t ReplOffset() override { return s_.master_repl_offset(); }
  void DropReplicas() override { s_.primary_side_.DisconnectReplicas(); }
  bool LoadFullSync(repl::SyncResult& r, int64_t now_ms) override { return s_.LoadFullSync(r, now_ms); }

  uint64_t AdoptMasterSocket(repl::SyncResult& r, int db) override {
    io::Connection* conn = s_.io_->AdoptSocket(r.fd, std::move(r.tls));
    s_.io_->MarkReplication(conn, io::Connection::kReplInput);
    auto* c = static_cast<Client*>(conn->owner);
    c->is_master = true;
    c->authenticated = true;
    c->db = db;
    return c->id();
  }
  void CloseMasterClient(uint64_t client_id) override {
    if (Client* m = s_.FindClient(client_id)) {
      m->closing = true;
      s_.io_->CloseNow(m->conn);
    }
  }
  bool MasterClientOpen(uint64_t client_id) override {
    const Client* m = s_.FindClient(client_id);
    return m != nullptr && !m->closing;
  }
  std::optional<int> MasterClientDb(uint64_t client_id) override {
    const Client* m = s_.FindClient(client_id);
    return m != nullptr ? std::optional<int>(m->db) : std::nullopt;
  }
  bool WriteToMaster(uint64_t client_id, std::string_view bytes) override {
    Client* m = s_.FindClient(client_id);
    if (m == nullptr) return false;
    s_.io_->PrepareWrite(m->conn).Append(bytes);
    return true;
  }
  bool ApplyMasterCommand(uint64_t client_id, Argv argv) override {
    if (Client* m = s_.FindClient(client_id)) s_.ExecuteFromMaster(*m, argv);
    return s_.replica_ != nullptr;
  }
  bool ScriptBusy() override { return s_.script_busy_; }
  bool AofSynced() override { return s_.persistence_.aof().enabled() && !s_.persistence_.aof().has_unsynced(); }
  void SupervisorStatus(std::string_view status) override { NotifyStatus(status); }
  bool FailoverInProgress() override { return s_.failover_ && s_.failover_->in_progress(); }
  void EndFailover(bool ok, std::string_view why) override { s_.EndFailover(ok, why); }

 private:
  Server& s_;
};

}  // namespace ringkv::server
