// FullSync: the diskless transfer (repl-diskless-sync yes). The fork child
// writes "$EOF:<mark>\r\n", the RDB and the mark into a pipe; the main
// thread reads the pipe when it is readable and hands each block to every
// replica of the transfer by reference (DisklessTransfer). When the pipe
// has ended and the child exited cleanly, the replicas go online; as in
// Redis 7.0, their stream starts on their first REPLCONF ACK, so nothing
// follows the payload on the socket until the replica has read all of it.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "io/io_log.h"
#include "replication/full_sync.h"
#include "replication/primary_host.h"

namespace ringkv::repl {
void FullSync::StartTransfer(Primary& primary, const std::vector<ReplicaLink*>& replicas, int64_t now_ms) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    io::Log(io::kLogWarning,
            absl::StrCat("Can't start diskless SYNC: pipe: ", std::strerror(errno)));
    for (ReplicaLink* r : replicas) host_.DropReplica(r->client_id);
    return;
  }
  primary.ForceSelect();  // the stream after the snapshot starts with SELECT
  const uint64_t offset = primary.offset();
  // Every replica of the transfer asked for the same snapshot (SameSnapshotAs).
  SnapshotSpec spec;
  spec.replid = host_.History().replid;
  spec.offset = offset;
  spec.exclude_data = replicas.front()->exclude_data;
  spec.exclude_functions = replicas.front()->exclude_functions;
  const std::string mark = NewEofMark();
  const int read_fd = fds[0], write_fd = fds[1];
  absl::StatusOr<int> pid =
      host_.ForkSnapshotToPipe(spec, now_ms, read_fd, write_fd, absl::StrCat("$EOF:", mark, "\r\n"), mark);
  ::close(write_fd);
  if (!pid.ok()) {
    ::close(read_fd);
    io::Log(io::kLogWarning,
            absl::StrCat("BGSAVE for replication failed: ", pid.status().message()));
    for (ReplicaLink* r : replicas) host_.DropReplica(r->client_id);
    return;
  }
  ::fcntl(read_fd, F_SETFL, O_NONBLOCK);
  io::Log(io::kLogNotice, "Starting BGSAVE for SYNC with target: replicas sockets");
  // pid 0: the snapshot is written by this process (snapshot-fork no).
  io::Log(io::kLogNotice, *pid > 0 ? absl::StrCat("Background RDB transfer started by pid ", *pid)
                                   : std::string("Background RDB transfer started in this process"));
  std::vector<uint64_t> ids;
  for (ReplicaLink* r : replicas) {
    r->state = ReplicaState::kWaitBgsaveEnd;
    r->next_offset = offset + 1;
    r->acked = false;
    ids.push_back(r->client_id);
    SendFullResync(*r, offset);
  }
  transfer_ = std::make_unique<DisklessTransfer>(read_fd, std::move(ids));
  transfer_eof_ = false;
  transfer_child_ok_.reset();
  host_.WatchPipe(read_fd, ++transfer_token_);
}

void FullSync::OnReadable(uint32_t token) {
  if (transfer_ && token == transfer_token_) PumpTransfer();
}

void FullSync::BeforeFlush() {
  if (retry_transfer_ && transfer_) {
    retry_transfer_ = false;
    PumpTransfer();
  }
}

void FullSync::PumpTransfer() {
  switch (host_.PumpTransfer(*transfer_)) {
    case DisklessTransfer::Progress::kWaiting:
      host_.WatchPipe(transfer_->fd(), ++transfer_token_);
      return;
    case DisklessTransfer::Progress::kThrottled:
      retry_transfer_ = true;  // after the replicas' sockets drained some (BeforeFlush / cron)
      host_.WakeSoon();
      return;
    case DisklessTransfer::Progress::kEof: {
      transfer_eof_ = true;
      Primary* primary = host_.CurrentPrimary();
      size_t up = 0;  // the replicas of the transfer still connected
      for (uint64_t id : transfer_->replica_ids()) {
        const ReplicaLink* link = primary != nullptr ? primary->Find(id) : nullptr;
        up += link != nullptr && link->state == ReplicaState::kWaitBgsaveEnd;
      }
      io::Log(io::kLogNotice,
              absl::StrCat("Diskless rdb transfer, done reading from pipe, ", up, " replicas still up."));
      for (uint64_t id : transfer_->replica_ids()) {  // those that already loaded it and ACKed
        if (ReplicaLink* link = primary != nullptr ? primary->Find(id) : nullptr) OnlineIfLoaded(*link);
      }
      host_.ReapChild();  // the child may still run: the cron reaps it and finishes the transfer then
      // It may also have been reaped before its pipe was drained (the child
      // writes its last bytes and exits without waiting for us): then
      // transfer_child_ok_ holds its result and no reap will come again, so
      // the transfer ends here (MaybeFinishTransfer checks both are there).
      MaybeFinishTransfer();
      return;
    }
    case DisklessTransfer::Progress::kNoReplicas:
      AbortTransfer("Diskless rdb transfer, last replica dropped, killing fork child.");
      return;
    case DisklessTransfer::Progress::kError:
      AbortTransfer(
          absl::StrCat("Diskless rdb transfer, error reading from the child pipe: ", std::strerror(errno)));
      return;
  }
}

void FullSync::OnReplicaAck(ReplicaLink& link) { OnlineIfLoaded(link); }

void FullSync::OnlineIfLoaded(ReplicaLink& link) {
  // Every payload byte was handed over and the replica ACKed: it read the
  // whole payload, mark included, and loaded it. Online now, not when the
  // cron reaps the child.
  if (link.state == ReplicaState::kWaitBgsaveEnd && link.acked && transfer_ && transfer_eof_) {
    link.state = ReplicaState::kOnline;
    link.last_ack_ms = host_.NowMs();
  }
}

void FullSync::OnTransferChildExited(bool ok) {
  if (!ok) io::Log(io::kLogWarning, "Background transfer error");
  transfer_child_ok_ = ok;
  MaybeFinishTransfer();
}

void FullSync::AbortTransfer(std::string_view why) {
  io::Log(io::kLogWarning, why);
  if (!transfer_child_ok_ && host_.RdbChildRunning()) host_.KillRdbChild(/*remove_temp_file=*/false);
  std::vector<uint64_t> ids = transfer_->replica_ids();
  transfer_.reset();
  transfer_child_ok_.reset();
  retry_transfer_ = false;
  Primary* primary = host_.CurrentPrimary();
  for (uint64_t id : ids) {
    if (ReplicaLink* link = primary != nullptr ? primary->Find(id) : nullptr;
        link != nullptr && link->state == ReplicaState::kWaitBgsaveEnd) {
      host_.DropReplica(id);
    }
  }
  // Replicas still waiting get their sync from the cron (see OnSaveDone).
}

void FullSync::MaybeFinishTransfer() {
  if (!transfer_ || !transfer_child_ok_ || !transfer_eof_) return;
  if (!*transfer_child_ok_) {
    AbortTransfer("Background transfer error");
    return;
  }
  io::Log(io::kLogNotice, "Background RDB transfer terminated with success");
  const int64_t now_ms = host_.NowMs();
  Primary* primary = host_.CurrentPrimary();
  for (uint64_t id : transfer_->replica_ids()) {
    ReplicaLink* link = primary != nullptr ? primary->Find(id) : nullptr;
    if (link == nullptr || link->state != ReplicaState::kWaitBgsaveEnd) continue;
    if (link->rdb_only) {  // redis-cli --rdb: the snapshot was all it wanted
      io::Log(io::kLogNotice, absl::StrCat("RDB transfer completed, rdb only replica (", link->conn->peer.ToString(),
                                           ") should be disconnected asap"));
      link->state = ReplicaState::kOnline;
      link->stream_on_ack = true;  // it never ACKs: no stream is sent to it
      host_.CloseReplicaAfterReply(*link);
      continue;
    }
    link->state = ReplicaState::kOnline;
    // Stream from its first ACK (it has loaded the payload then); an old
    // SYNC replica never ACKs, and one may have ACKed already.
    link->stream_on_ack = !link->old_sync && !link->acked;
    link->last_ack_ms = now_ms;
    io::Log(io::kLogNotice,
            absl::StrCat("Streamed RDB transfer with replica ", link->conn->peer.ToString(),
                         " succeeded (socket). Waiting for REPLCONF ACK from replica to enable streaming"));
  }
  transfer_.reset();
  transfer_child_ok_.reset();
  retry_transfer_ = false;
  StartIfNeeded(now_ms);  // replicas that asked during this transfer
}

}  // namespace ringkv::repl
