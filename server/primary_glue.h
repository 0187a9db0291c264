// Server::PrimaryGlue: the server's repl::PrimaryHost -- what the primary
// side asks of the server. For the cron (repl::Primary::Cron): dropping a
// replica's client, its CLIENT LIST line, freeing the backlog (a new
// history), a keep-alive newline. For full syncs (repl::FullSync): the
// history, the Primary, the sync counters, the replica sockets, and the
// fork child writing the snapshot (primary_glue.cc). A member class, so it
// reaches the server's private state without the server carrying the
// interface (and a vtable) as a base; made by the first SYNC / PSYNC or the
// first cron tick of a server with a backlog.
//
// Included by the files that create or destroy it (server.cc,
// server_replication.cc, primary_glue.cc), nowhere else.
//
// Thread-safety: main thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "replication/full_sync.h"
#include "replication/primary_host.h"
#include "server/server.h"

namespace ringkv::server {

class Server::PrimaryGlue final : public repl::PrimaryHost {
 public:
  explicit PrimaryGlue(Server& s) : s_(s) {}

  // ---- the cron ----
  void DropReplica(uint64_t client_id) override { s_.DropReplica(client_id); }
  std::optional<std::string> ClientInfoLine(uint64_t client_id, int64_t now_ms) override {
    const Client* c = s_.FindClient(client_id);
    return c != nullptr ? std::optional<std::string>(s_.ClientInfoLine(*c, now_ms)) : std::nullopt;
  }
  void FreeBacklog(int64_t offset) override {
    s_.primary_.reset();
    s_.repl_ids_ = repl::ReplicationIds::Fresh();
    s_.repl_ids_.offset = offset;
  }
  void SendKeepAlive(repl::ReplicaLink& link) override { s_.io_->PrepareWrite(link.conn).Append("\n"); }

  // ---- full syncs ----
  int64_t NowMs() override { return UnixMs(); }
  repl::FullSyncConfig ReadFullSyncConfig() override;
  const repl::ReplicationIds& History() override { return s_.repl_ids_; }
  repl::Primary& EnsurePrimary() override { return s_.EnsurePrimary(); }
  repl::Primary* CurrentPrimary() override { return s_.primary_.get(); }
  void CountSync(repl::SyncCount what) override;
  void SendToReplica(repl::ReplicaLink& link, std::string_view bytes) override {
    s_.io_->PrepareWrite(link.conn).Append(bytes);
  }
  void CloseReplicaAfterReply(repl::ReplicaLink& link) override { s_.io_->CloseAfterReply(link.conn); }
  void StartBulk(repl::ReplicaLink& link, std::shared_ptr<repl::SharedSnapshot> snapshot) override {
    s_.primary_->StartBulk(link, std::move(snapshot), *s_.io_);
  }
  bool ChildRunning() override { return s_.persistence_.child().running(); }
  bool RdbChildRunning() override { return s_.persistence_.child().type() == ChildType::kRdb; }
  void KillRdbChild(bool remove_temp_file) override { s_.persistence_.KillChild(remove_temp_file); }
  void ReapChild() override { s_.persistence_.ReapChild(UnixMs()); }
  absl::Status SaveForReplicas(const repl::SnapshotSpec& spec, int64_t now_ms) override;
  absl::StatusOr<int> ForkSnapshotToPipe(const repl::SnapshotSpec& spec, int64_t now_ms, int read_fd, int write_fd,
                                         std::string prefix, std::string suffix) override;
  void WatchPipe(int fd, uint32_t token) override { s_.io_->WatchReadable(fd, token); }
  void WakeSoon() override { s_.io_->WakeTimerIn(1); }
  repl::DisklessTransfer::Progress PumpTransfer(repl::DisklessTransfer& transfer) override {
    return transfer.Pump(*s_.primary_, *s_.io_);
  }

 private:
  Server& s_;
};

}  // namespace ringkv::server
