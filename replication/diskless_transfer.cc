#include "replication/diskless_transfer.h"

#include <unistd.h>

#include <cerrno>

#include "replication/replication_info.h"

namespace ringkv::repl {
namespace {

// Per Pump call, and per replica the most it may have unsent before reading
// stops: what the pipe and the sockets buffer anyway, not the payload.
constexpr size_t kBlockSize = io::SharedBlockCapacityFor(64 * 1024);  // 64 KiB blocks
constexpr int kBlocksPerPump = 16;
constexpr uint64_t kPumpUnsentLimit = 4 << 20;

uint64_t Unsent(const io::Connection* conn) {
  return conn->thread == 0 ? io::QueuedOutput(*conn)
                           : conn->stat_obuf() + conn->main_out_size();
}

}  // namespace

std::string NewEofMark() { return ReplicationIds::Fresh().replid; }

DisklessTransfer::DisklessTransfer(int pipe_fd, std::vector<uint64_t> replica_ids)
    : fd_(pipe_fd), replica_ids_(std::move(replica_ids)) {}

DisklessTransfer::~DisklessTransfer() {
  if (fd_ >= 0) ::close(fd_);
}

DisklessTransfer::Progress DisklessTransfer::Pump(Primary& primary, io::IoSystem& io) {
  if (eof_) return Progress::kEof;
  std::vector<ReplicaLink*> links;
  for (uint64_t id : replica_ids_) {
    ReplicaLink* link = primary.Find(id);
    if (link != nullptr && link->state == ReplicaState::kWaitBgsaveEnd) links.push_back(link);
  }
  if (links.empty()) return Progress::kNoReplicas;
  for (int i = 0; i < kBlocksPerPump; ++i) {
    for (ReplicaLink* link : links) {
      if (Unsent(link->conn) > kPumpUnsentLimit) return Progress::kThrottled;
    }
    io::SharedBlock* block = io::SharedBlock::Create(kBlockSize);
    const ssize_t n = ::read(fd_, block->data(), kBlockSize);
    if (n > 0) {
      for (ReplicaLink* link : links) io.PrepareWrite(link->conn).AppendShared(block, block->data(), size_t(n));
      bytes_ += static_cast<uint64_t>(n);
    }
    block->Unref();  // the replicas' buffers hold it now
    if (n == 0) {
      eof_ = true;
      ::close(fd_);
      fd_ = -1;
      return Progress::kEof;
    }
    if (n < 0) return errno == EAGAIN || errno == EINTR ? Progress::kWaiting : Progress::kError;
  }
  return Progress::kWaiting;  // the budget is spent; a readable pipe wakes us again at once
}

}  // namespace ringkv::repl
