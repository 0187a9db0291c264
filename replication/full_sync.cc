// FullSync: SYNC / PSYNC requests, and full syncs through a snapshot file
// (the diskless transfer: full_sync_diskless.cc).
#include "replication/full_sync.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "io/io_log.h"
#include "replication/full_sync_plan.h"
#include "replication/primary_host.h"

namespace ringkv::repl {
void FullSync::SendFullResync(ReplicaLink& link, uint64_t offset) {
  if (!link.old_sync) {
    host_.SendToReplica(link, absl::StrCat("+FULLRESYNC ", host_.History().replid, " ", offset, "\r\n"));
  }
}

void FullSync::OnSyncRequest(uint64_t client_id, io::Connection* conn, std::string_view replid,
                             int64_t psync_offset, bool old_sync) {
  Primary& p = host_.EnsurePrimary();
  ReplicaLink& link = p.Attach(client_id, conn);
  link.old_sync = old_sync;
  const std::string peer = conn->peer.ToString();
  const ReplicationIds& ids = host_.History();
  const bool known_history =
      replid == ids.replid ||
      (replid == ids.replid2 && psync_offset <= ids.second_offset + 1 && ids.second_offset >= 0);
  if (!old_sync && known_history && psync_offset > 0 && p.backlog().Has(static_cast<uint64_t>(psync_offset))) {
    link.state = ReplicaState::kOnline;
    link.next_offset = static_cast<uint64_t>(psync_offset);
    link.last_ack_ms = host_.NowMs();
    host_.SendToReplica(link, link.capa_psync2 ? absl::StrCat("+CONTINUE ", ids.replid, "\r\n")
                                               : std::string("+CONTINUE\r\n"));
    host_.CountSync(SyncCount::kPartialOk);
    io::Log(io::kLogNotice, absl::StrCat("Partial resynchronization request from ", peer, " accepted. Sending ",
                                         p.offset() + 1 - link.next_offset, " bytes of backlog starting from offset ",
                                         psync_offset, "."));
    return;
  }
  if (!old_sync && replid != "?") host_.CountSync(SyncCount::kPartialErr);
  host_.CountSync(SyncCount::kFull);
  io::Log(io::kLogNotice, absl::StrCat("Replica ", peer, " asks for synchronization; full resync"));
  const FullSyncConfig config = host_.ReadFullSyncConfig();
  // repl-disable-tcp-nodelay: fewer, bigger packets to a replica that
  // synchronises from scratch, as Redis's syncCommand (a partial resync keeps
  // its socket as it was). Best effort; a Unix socket has no such option.
  if (config.disable_tcp_nodelay && conn->peer.family != AF_UNIX) {
    int off = 0;
    ::setsockopt(conn->fd, IPPROTO_TCP, TCP_NODELAY, &off, sizeof(off));
  }
  link.state = ReplicaState::kWaitBgsaveStart;
  link.sync_requested_ms = host_.NowMs();
  // A file is being written for replicas: an unfiltered one may share it,
  // from its offset.
  if (save_in_progress_ && !link.filtered()) {
    link.state = ReplicaState::kWaitBgsaveEnd;
    link.next_offset = save_offset_ + 1;
    SendFullResync(link, save_offset_);
    return;
  }
  if (transfer_) {
    io::Log(io::kLogNotice, "Can't attach the replica to the current BGSAVE. Waiting for next BGSAVE for SYNC");
    return;
  }
  // A streamed transfer (diskless, or a filtered snapshot, always streamed)
  // waits repl-diskless-sync-delay on a diskless primary.
  if (config.plan.diskless_sync && (link.capa_eof || link.filtered()) && config.plan.delay_s > 0) {
    io::Log(io::kLogNotice, "Delay next BGSAVE for diskless SYNC");
    return;  // the cron starts it, so replicas arriving meanwhile share it
  }
  StartIfNeeded(host_.NowMs());
}

void FullSync::StartIfNeeded(int64_t now_ms) {
  // Retried from the cron, and when a diskless transfer ends: its child may
  // be reaped while its pipe is still being read, and a second transfer
  // would replace the first one's replicas' payload.
  Primary* primary = host_.CurrentPrimary();
  if (primary == nullptr || host_.ChildRunning() || transfer_) return;
  const FullSyncPlan plan = PlanFullSync(*primary, host_.ReadFullSyncConfig().plan, now_ms);
  for (ReplicaLink* r : plan.refused) {
    io::Log(io::kLogWarning, absl::StrCat("Replica ", r->ip(), ":", r->listening_port,
                                          " asks for a filtered snapshot without the EOF capability: disconnected"));
    host_.DropReplica(r->client_id);
  }
  switch (plan.kind) {
    case FullSyncPlan::Kind::kNone:
    case FullSyncPlan::Kind::kDelay:  // the cron tries again
      return;
    case FullSyncPlan::Kind::kDiskless:
      StartTransfer(*primary, plan.replicas, now_ms);
      return;
    case FullSyncPlan::Kind::kDisk:
      StartDiskSave(*primary, plan.replicas, now_ms);
      return;
  }
}

void FullSync::StartDiskSave(Primary& primary, const std::vector<ReplicaLink*>& replicas, int64_t now_ms) {
  primary.ForceSelect();  // the stream after the snapshot starts with SELECT
  const uint64_t offset = primary.offset();
  SnapshotSpec spec;
  spec.replid = host_.History().replid;
  spec.offset = offset;
  if (absl::Status s = host_.SaveForReplicas(spec, now_ms); !s.ok()) {
    io::Log(io::kLogWarning, absl::StrCat("BGSAVE for replication failed: ", s.message()));
    for (ReplicaLink* r : replicas) host_.DropReplica(r->client_id);
    return;
  }
  io::Log(io::kLogNotice, "Starting BGSAVE for SYNC with target: disk");
  save_in_progress_ = true;
  save_offset_ = offset;
  for (ReplicaLink* r : replicas) {
    r->state = ReplicaState::kWaitBgsaveEnd;
    r->next_offset = offset + 1;
    SendFullResync(*r, offset);
  }
}

void FullSync::OnSaveDone(bool ok) {
  if (!save_in_progress_) return;
  save_in_progress_ = false;
  const std::string path = host_.ReadFullSyncConfig().rdb_path;
  // The file this save wrote for replicas (rdb-del-sync-files may delete it
  // once nothing needs it; a later save replaces it with another inode).
  if (struct stat st; ok && ::stat(path.c_str(), &st) == 0) {
    sync_rdb_file_ = {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
  }
  Primary* primary = host_.CurrentPrimary();
  if (primary == nullptr) return;
  std::vector<ReplicaLink*> waiting;
  for (const auto& r : primary->replicas()) {
    if (r->state == ReplicaState::kWaitBgsaveEnd) waiting.push_back(r.get());
  }
  // The file is opened once and read once for all of them (a later save
  // may replace dbfilename meanwhile: the descriptor keeps this one).
  std::shared_ptr<SharedSnapshot> snapshot;
  if (ok && !waiting.empty()) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && ::fstat(fd, &st) == 0) {
      snapshot = std::make_shared<SharedSnapshot>(fd, static_cast<uint64_t>(st.st_size));
    } else if (fd >= 0) {
      ::close(fd);
    }
  }
  for (ReplicaLink* r : waiting) {
    if (!ok) {
      io::Log(io::kLogWarning, "SYNC failed. BGSAVE child returned an error");
      host_.DropReplica(r->client_id);
      continue;
    }
    if (snapshot == nullptr) {
      io::Log(io::kLogWarning, "SYNC failed: can't open the RDB file just written");
      host_.DropReplica(r->client_id);
      continue;
    }
    host_.StartBulk(*r, snapshot);
    r->last_ack_ms = host_.NowMs();
    io::Log(io::kLogNotice, absl::StrCat("Synchronization with replica ", r->conn->peer.ToString(),
                                         " started: sending ", snapshot->size(), " bytes of RDB"));
  }
  // Replicas that asked during this save. After a failed or stopped one,
  // the cron starts the next (as Redis's): a save stopped by FLUSHALL or a
  // dataset about to be replaced must not be followed at once by another
  // of the data going away.
  if (ok) StartIfNeeded(host_.NowMs());
}

void FullSync::OnWaitingReplicaGone() {
  // A snapshot written only for replicas that are all gone is of no use: the
  // child is stopped (it would hold memory and the next full sync back), as
  // Redis does -- unless save points make the file worth having anyway.
  if (!save_in_progress_ || !host_.RdbChildRunning()) return;
  if (host_.ReadFullSyncConfig().has_save_points) return;
  if (Primary* primary = host_.CurrentPrimary()) {
    for (const auto& r : primary->replicas()) {
      if (r->state == ReplicaState::kWaitBgsaveEnd) return;
    }
  }
  io::Log(io::kLogNotice,
          "Background saving for replication is useless now (no replica waits for it): killing the child");
  host_.KillRdbChild(/*remove_temp_file=*/true);
  save_in_progress_ = false;
}

void FullSync::RemoveRdbIfUseless() {
  const FullSyncConfig config = host_.ReadFullSyncConfig();
  if (!config.remove_sync_rdb || host_.ChildRunning()) return;
  if (const Primary* primary = host_.CurrentPrimary()) {
    for (const auto& r : primary->replicas()) {
      if (r->state == ReplicaState::kWaitBgsaveStart || r->state == ReplicaState::kWaitBgsaveEnd ||
          r->state == ReplicaState::kSendBulk) {
        return;
      }
    }
  }
  struct stat st;
  if (::stat(config.rdb_path.c_str(), &st) == 0 && static_cast<uint64_t>(st.st_dev) == sync_rdb_file_.first &&
      static_cast<uint64_t>(st.st_ino) == sync_rdb_file_.second) {
    io::Log(io::kLogNotice,
            "Removing the RDB file used to feed replicas in a persistence-less instance");
    ::unlink(config.rdb_path.c_str());
  }
  sync_rdb_file_ = {};
}

}  // namespace ringkv::repl
