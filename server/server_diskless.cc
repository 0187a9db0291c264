// Server: diskless full sync (repl-diskless-sync yes). The fork child writes
// "$EOF:<mark>\r\n", the RDB and the mark into a pipe; the main thread reads
// the pipe when it is readable and hands each block to every replica of the
// transfer by reference (repl::DisklessTransfer). When the pipe has ended and
// the child exited cleanly, the replicas go online; as in Redis 7.0, their
// stream starts on their first REPLCONF ACK, so nothing follows the payload
// on the socket until the replica has read all of it.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/strings.h"
#include "server/logging.h"
#include "server/persistence/rdb_saver.h"
#include "server/persistence/rdb_snapshot.h"
#include "server/server.h"

namespace ringkv::server {
namespace {

// Writes all of s to fd (a blocking pipe, in the child).
bool WriteAll(int fd, std::string_view s) {
  while (!s.empty()) {
    const ssize_t n = ::write(fd, s.data(), s.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    s.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

void Server::StartDisklessSync(const std::vector<repl::ReplicaLink*>& replicas, int64_t now_ms) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    Log(kWarning, StrCat("Can't start diskless SYNC: pipe: ", std::strerror(errno)));
    for (repl::ReplicaLink* r : replicas) DropReplica(r->client_id);
    return;
  }
  primary_->ForceSelect();  // the stream after the snapshot starts with SELECT
  const uint64_t offset = primary_->offset();
  RdbSaveOptions options = SaveOptionsFromConfig(*config_, now_ms);
  // Every replica of the transfer asked for the same snapshot (SameSnapshotAs).
  if (!replicas.front()->exclude_functions) options.function_libraries = FunctionLibraryCodes();
  options.exclude_data = replicas.front()->exclude_data;
  options.repl_id = repl_ids_.replid;
  options.repl_offset = static_cast<int64_t>(offset);
  options.repl_stream_db = SnapshotStreamDb();
  const std::string mark = repl::NewEofMark();
  core::Keyspace* ks = &keyspace_;
  const int read_fd = fds[0], write_fd = fds[1];
  absl::Status s = child_.Start(ChildType::kRdb, [ks, read_fd, write_fd, options, mark]() {
    ::close(read_fd);
    if (!WriteAll(write_fd, StrCat("$EOF:", mark, "\r\n"))) return 1;
    if (absl::Status w = WriteRdb(*ks, write_fd, options); !w.ok()) {
      Log(kWarning, StrCat("Failed streaming the RDB to replicas: ", w.message()));
      return 1;
    }
    return WriteAll(write_fd, mark) ? 0 : 1;
  });
  ::close(write_fd);
  if (!s.ok()) {
    ::close(read_fd);
    Log(kWarning, StrCat("BGSAVE for replication failed: ", s.message()));
    for (repl::ReplicaLink* r : replicas) DropReplica(r->client_id);
    return;
  }
  ::fcntl(read_fd, F_SETFL, O_NONBLOCK);
  Log(kNotice, StrCat("Starting BGSAVE for SYNC with target: replicas sockets"));
  Log(kNotice, StrCat("Background RDB transfer started by pid ", child_.pid()));
  std::vector<uint64_t> ids;
  for (repl::ReplicaLink* r : replicas) {
    r->state = repl::ReplicaState::kWaitBgsaveEnd;
    r->next_offset = offset + 1;
    r->acked = false;
    ids.push_back(r->client_id);
    if (!r->old_sync) {
      io_->PrepareWrite(r->conn).Append(StrCat("+FULLRESYNC ", repl_ids_.replid, " ", offset, "\r\n"));
    }
  }
  diskless_ = std::make_unique<repl::DisklessTransfer>(read_fd, std::move(ids));
  diskless_child_.reset();
  io_->WatchReadable(read_fd, ++diskless_token_);
}

void Server::OnReadable(uint32_t token, int /*result*/) {
  if (diskless_ && token == diskless_token_) PumpDiskless();
}

void Server::PumpDiskless() {
  switch (diskless_->Pump(*primary_, *io_)) {
    case repl::DisklessTransfer::Progress::kWaiting:
      io_->WatchReadable(diskless_->fd(), ++diskless_token_);
      return;
    case repl::DisklessTransfer::Progress::kThrottled:
      retry_diskless_ = true;  // after the replicas' sockets drained some (BeforeFlush / cron)
      io_->WakeTimerIn(1);
      return;
    case repl::DisklessTransfer::Progress::kEof: {
      size_t up = 0;  // the replicas of the transfer still connected
      for (uint64_t id : diskless_->replica_ids()) {
        const repl::ReplicaLink* link = primary_->Find(id);
        up += link != nullptr && link->state == repl::ReplicaState::kWaitBgsaveEnd;
      }
      Log(kNotice, StrCat("Diskless rdb transfer, done reading from pipe, ", up, " replicas still up."));
      for (uint64_t id : diskless_->replica_ids()) {  // those that already loaded it and ACKed
        if (repl::ReplicaLink* link = primary_->Find(id)) OnlineIfLoadedDiskless(*link);
      }
      ReapChild(UnixMs());  // the child may still run: the cron reaps it and finishes the transfer then
      // It may also have been reaped before its pipe was drained (the child
      // writes its last bytes and exits without waiting for us): then
      // diskless_child_ holds its result and no reap will come again, so
      // the transfer ends here (MaybeFinishDiskless checks both are there).
      MaybeFinishDiskless();
      return;
    }
    case repl::DisklessTransfer::Progress::kNoReplicas:
      AbortDiskless("Diskless rdb transfer, last replica dropped, killing fork child.");
      return;
    case repl::DisklessTransfer::Progress::kError:
      AbortDiskless(StrCat("Diskless rdb transfer, error reading from the child pipe: ", std::strerror(errno)));
      return;
  }
}

void Server::OnlineIfLoadedDiskless(repl::ReplicaLink& link) {
  // Every payload byte was handed over and the replica ACKed: it read the
  // whole payload, mark included, and loaded it. Online now, not when the
  // cron reaps the child.
  if (link.state == repl::ReplicaState::kWaitBgsaveEnd && link.acked && diskless_ && diskless_->eof()) {
    link.state = repl::ReplicaState::kOnline;
    link.last_ack_ms = UnixMs();
  }
}

void Server::AbortDiskless(std::string_view why) {
  Log(kWarning, std::string(why));
  if (!diskless_child_ && child_.type() == ChildType::kRdb) {
    ChildResult r;
    child_.Kill(&r);
  }
  std::vector<uint64_t> ids = diskless_->replica_ids();
  diskless_.reset();
  diskless_child_.reset();
  retry_diskless_ = false;
  for (uint64_t id : ids) {
    if (repl::ReplicaLink* link = primary_ ? primary_->Find(id) : nullptr;
        link != nullptr && link->state == repl::ReplicaState::kWaitBgsaveEnd) {
      DropReplica(id);
    }
  }
  StartFullSyncIfNeeded(UnixMs());
}

void Server::MaybeFinishDiskless() {
  if (!diskless_ || !diskless_child_ || !diskless_->eof()) return;
  if (!diskless_child_->ok) {
    AbortDiskless("Background transfer error");
    return;
  }
  Log(kNotice, "Background RDB transfer terminated with success");
  const int64_t now_ms = UnixMs();
  for (uint64_t id : diskless_->replica_ids()) {
    repl::ReplicaLink* link = primary_ ? primary_->Find(id) : nullptr;
    if (link == nullptr || link->state != repl::ReplicaState::kWaitBgsaveEnd) continue;
    if (link->rdb_only) {  // redis-cli --rdb: the snapshot was all it wanted
      Log(kNotice, StrCat("RDB transfer completed, rdb only replica (", link->conn->peer.ToString(),
                          ") should be disconnected asap"));
      link->state = repl::ReplicaState::kOnline;
      link->stream_on_ack = true;  // it never ACKs: no stream is sent to it
      io_->CloseAfterReply(link->conn);
      continue;
    }
    link->state = repl::ReplicaState::kOnline;
    // Stream from its first ACK (it has loaded the payload then); an old
    // SYNC replica never ACKs, and one may have ACKed already.
    link->stream_on_ack = !link->old_sync && !link->acked;
    link->last_ack_ms = now_ms;
    Log(kNotice, StrCat("Streamed RDB transfer with replica ", link->conn->peer.ToString(),
                        " succeeded (socket). Waiting for REPLCONF ACK from replica to enable streaming"));
  }
  diskless_.reset();
  diskless_child_.reset();
  retry_diskless_ = false;
  StartFullSyncIfNeeded(now_ms);  // replicas that asked during this transfer
}

}  // namespace ringkv::server
