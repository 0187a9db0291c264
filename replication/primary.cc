#include "replication/primary.h"

#include <unistd.h>

#include <algorithm>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "core/resp_command.h"
#include "io/thread_check.h"

namespace ringkv::repl {

namespace {

// Per turn and per replica, hand over at most this much; and only while the
// connection has little unsent: the backlog (or the snapshot file) is the
// buffer, not the socket.
constexpr size_t kPerTurn = 1 << 20;
constexpr uint64_t kUnsentLimit = 4 << 20;

// Bytes handed to the connection and not written to its socket yet.
uint64_t Unsent(const io::Connection& conn) {
  return conn.thread == 0 ? io::QueuedOutput(conn) : conn.stat_obuf() + conn.main_out_size();
}

// A replica of I/O thread 0 is sent the stream by offset (io::ReplicaSend).
// Every plain replica's link moves there when it attaches
// (IoSystem::MoveToMainThread); until it arrives, and for TLS links (whose
// bytes must be encrypted on the way out, on their own thread), the range
// is handed by reference in the OutBuffer.
bool SendsByOffset(const ReplicaLink& link) { return link.conn->thread == 0 && link.conn->tls() == nullptr; }

// The link streams now: online, and not waiting for its first ACK after a
// diskless payload.
bool Streaming(const ReplicaLink& link) { return link.state == ReplicaState::kOnline && !link.stream_on_ack; }

}  // namespace

std::string ReplicaLink::ip() const {
  if (!announced_ip.empty()) return announced_ip;
  const std::string peer = conn->peer.ToString();
  return peer.substr(0, peer.rfind(':'));
}

void Primary::StartBulk(ReplicaLink& link, std::shared_ptr<SharedSnapshot> snapshot, io::IoSystem& io) {
  io.PrepareWrite(link.conn).Append(absl::StrCat("$", snapshot->size(), "\r\n"));
  link.snapshot = std::move(snapshot);
  link.rdb_sent = 0;
  link.rdb_own_reads = !SendsByOffset(link);
  link.rdb_left_window = false;
  link.state = ReplicaState::kSendBulk;
}

bool Primary::SendBulk(ReplicaLink& link, io::IoSystem& io) {
  SharedSnapshot& snapshot = *link.snapshot;
  const io::ReplicaSend* rs = link.conn->replica();
  const bool on_window = rs != nullptr && rs->stream == &snapshot.stream();
  if (on_window) link.rdb_sent = rs->next;  // what its connection sent
  if (link.rdb_sent == snapshot.size()) {
    if (on_window) io::IoSystem::StopStream(link.conn);  // all sent: nothing in flight
    link.snapshot.reset();
    link.state = ReplicaState::kOnline;
    return true;
  }
  // Not started on the window and unable to be (its connection cannot be
  // sent by offset, or the window moved past it meanwhile): its own reads.
  if (!on_window && (!SendsByOffset(link) || link.rdb_sent < snapshot.stream().front_offset())) {
    link.rdb_own_reads = true;
  }
  if (!link.rdb_own_reads) {
    // Read ahead of it (once for everybody), then send from the window.
    if (!snapshot.FillTo(link.rdb_sent + kPerTurn)) return false;
    if (on_window) {
      io.StreamMore(link.conn);
    } else {
      io.StartStream(link.conn, &snapshot.stream(), link.rdb_sent);  // after "$<size>\r\n"
    }
    return true;
  }
  // Its own reads, a piece per turn: never the whole file in memory. One
  // that left the window continues after its last send from it, once that
  // completed (the blocks it reads stay referenced until then).
  if (link.rdb_left_window) {
    if (rs != nullptr && rs->inflight != 0) return true;
    if (rs != nullptr) link.rdb_sent = rs->next;
    link.rdb_left_window = false;
  }
  if (Unsent(*link.conn) > kUnsentLimit) return true;
  io::OutBuffer& out = io.PrepareWrite(link.conn);
  size_t budget = static_cast<size_t>(std::min<uint64_t>(kPerTurn, snapshot.size() - link.rdb_sent));
  while (budget > 0) {
    const size_t want = std::min<size_t>(budget, 8 * 1024);  // within one reply chunk
    char* dst = out.Reserve(want);
    const ssize_t n = snapshot.ReadAt(dst, want, link.rdb_sent);
    if (n <= 0) return false;  // the file ended early: resync from scratch
    out.Commit(static_cast<size_t>(n));
    budget -= static_cast<size_t>(n);
    link.rdb_sent += static_cast<uint64_t>(n);
  }
  return true;
}

void Primary::TrimSnapshot(SharedSnapshot& snapshot) {
  const io::BlockStream& window = snapshot.stream();
  const auto sent_from_window = [&](const ReplicaLink& r) -> const io::ReplicaSend* {
    const io::ReplicaSend* rs = r.conn->replica();
    return r.snapshot.get() == &snapshot && rs != nullptr && rs->stream == &window ? rs : nullptr;
  };
  // The window is full: those more than half a window behind its end read
  // on their own from now on (a replica that stopped reading must not hold
  // the others back). A send of theirs still in flight completes from the
  // blocks it references.
  if (window.end() - window.front_offset() + SharedSnapshot::kBlockSize > SharedSnapshot::kMaxHeld) {
    for (auto& r : replicas_) {
      const io::ReplicaSend* rs = sent_from_window(*r);
      if (rs != nullptr && window.end() - rs->next > SharedSnapshot::kMaxHeld / 2) {
        r->rdb_own_reads = true;
        r->rdb_left_window = true;
        io::IoSystem::StopStream(r->conn);
      }
    }
  }
  uint64_t keep = window.end();
  for (auto& r : replicas_) {
    if (r->snapshot.get() != &snapshot || r->rdb_own_reads) continue;
    const io::ReplicaSend* rs = sent_from_window(*r);
    keep = std::min(keep, rs != nullptr ? rs->next : r->rdb_sent);  // or about to start from rdb_sent
  }
  snapshot.DropBefore(keep);
}

Primary::Primary(size_t backlog_size, uint64_t master_offset) : backlog_(backlog_size, master_offset) {}

Primary::~Primary() {
  // A connection still attached must not read this backlog's blocks again
  // (a send in flight holds its own references).
  for (auto& r : replicas_) io::IoSystem::StopStream(r->conn);
}

void Primary::Feed(int db, std::span<const std::string_view> argv) {
  RINGKV_DCHECK_MAIN_THREAD();
  scratch_.clear();
  if (db >= 0 && db != stream_db_) {  // db -1: no SELECT (MULTI, EXEC)
    const std::string index = absl::StrCat(db);
    const std::string_view select[] = {"SELECT", index};
    core::AppendRespCommand(select, &scratch_);
    stream_db_ = db;
  }
  core::AppendRespCommand(argv, &scratch_);
  backlog_.Append(scratch_);
}

void Primary::FeedRaw(std::span<const std::string_view> argv) {
  RINGKV_DCHECK_MAIN_THREAD();
  scratch_.clear();
  core::AppendRespCommand(argv, &scratch_);
  backlog_.Append(scratch_);
}

ReplicaLink& Primary::Attach(uint64_t client_id, io::Connection* conn) {
  RINGKV_DCHECK_MAIN_THREAD();
  if (ReplicaLink* existing = Find(client_id)) {
    io::IoSystem::StopStream(existing->conn);  // a new sync of the same link: its offset is set anew
    return *existing;
  }
  auto link = std::make_unique<ReplicaLink>();
  link->client_id = client_id;
  link->conn = conn;
  replicas_.push_back(std::move(link));
  return *replicas_.back();
}

ReplicaLink* Primary::Find(uint64_t client_id) {
  for (auto& r : replicas_) {
    if (r->client_id == client_id) return r.get();
  }
  return nullptr;
}

const ReplicaLink* Primary::Find(uint64_t client_id) const {
  for (const auto& r : replicas_) {
    if (r->client_id == client_id) return r.get();
  }
  return nullptr;
}

void Primary::Detach(uint64_t client_id) {
  RINGKV_DCHECK_MAIN_THREAD();
  std::erase_if(replicas_, [&](const std::unique_ptr<ReplicaLink>& r) {
    if (r->client_id != client_id) return false;
    io::IoSystem::StopStream(r->conn);
    return true;
  });
}

void Primary::Flush(io::IoSystem& io, size_t max_lag_bytes, std::vector<uint64_t>* drop) {
  RINGKV_DCHECK_MAIN_THREAD();
  uint64_t needed = backlog_.end_offset() + 1;
  // The snapshots being sent this turn (few: one per save), trimmed after.
  absl::InlinedVector<SharedSnapshot*, 2> snapshots;
  for (auto& r : replicas_) {
    // Sent by offset: what the connection sent so far is its position.
    if (const io::ReplicaSend* rs = r->conn->replica(); rs != nullptr && rs->stream == &backlog_.stream()) {
      if (Streaming(*r)) {
        r->next_offset = rs->next;
      } else {
        io::IoSystem::StopStream(r->conn);
      }
    }
    if (r->state == ReplicaState::kHandshake || r->state == ReplicaState::kWaitBgsaveStart) continue;
    if (backlog_.end_offset() + 1 - std::min(r->next_offset, backlog_.end_offset() + 1) > max_lag_bytes ||
        !backlog_.Has(r->next_offset)) {
      drop->push_back(r->client_id);
      continue;
    }
    needed = std::min(needed, r->next_offset);
    if (r->state == ReplicaState::kWaitBgsaveEnd) continue;
    if (r->snapshot != nullptr && std::find(snapshots.begin(), snapshots.end(), r->snapshot.get()) == snapshots.end()) {
      snapshots.push_back(r->snapshot.get());
    }
    if (Unsent(*r->conn) > kUnsentLimit) continue;
    if (r->state == ReplicaState::kSendBulk) {
      if (!SendBulk(*r, io)) {
        drop->push_back(r->client_id);
        continue;
      }
      if (r->state != ReplicaState::kOnline) continue;
    }
    if (r->stream_on_ack) continue;
    if (SendsByOffset(*r)) {
      const io::ReplicaSend* rs = r->conn->replica();
      if (rs == nullptr || rs->stream != &backlog_.stream()) {
        io.StartStream(r->conn, &backlog_.stream(), r->next_offset);  // after its OutBuffer (the snapshot)
      } else {
        io.StreamMore(r->conn);
      }
      continue;
    }
    if (r->next_offset > backlog_.end_offset()) continue;
    r->next_offset = backlog_.RefTo(r->next_offset, kPerTurn, &io.PrepareWrite(r->conn));
  }
  backlog_.Trim(needed);
  // A snapshot whose last replica finished or left is already freed (the
  // links held it); the others drop what nobody will send again.
  for (SharedSnapshot* snapshot : snapshots) {
    for (auto& r : replicas_) {
      if (r->snapshot.get() == snapshot) {
        TrimSnapshot(*snapshot);
        break;
      }
    }
  }
}

uint64_t Primary::Pending(const ReplicaLink& link) const {
  const uint64_t end = backlog_.end_offset() + 1;
  const uint64_t lag = end - std::min(link.next_offset, end);
  return lag + (Streaming(link) ? Unsent(*link.conn) : 0);
}

void Primary::CheckSoftLimit(uint64_t soft_bytes, int64_t soft_ms, int64_t now_ms, std::vector<uint64_t>* drop) {
  for (auto& r : replicas_) {
    // Its first ACK on this connection says it loaded its payload (or, after
    // a partial resync, that it reads the stream): from then on it streams.
    const bool streaming = r->state == ReplicaState::kOnline && !r->stream_on_ack && r->acked;
    if (soft_bytes == 0 || !streaming || Pending(*r) <= soft_bytes) {
      r->over_soft_limit_ms = 0;  // under it again: the clock restarts
    } else if (r->over_soft_limit_ms == 0) {
      r->over_soft_limit_ms = now_ms;
    } else if (now_ms - r->over_soft_limit_ms > soft_ms) {
      drop->push_back(r->client_id);
    }
  }
}

void Primary::CheckStalledTransfers(int64_t timeout_ms, int64_t now_ms, std::vector<uint64_t>* drop) {
  for (auto& r : replicas_) {
    const uint64_t unsent = r->state == ReplicaState::kWaitBgsaveEnd ? Unsent(*r->conn) : 0;
    // Less unsent than last time: it wrote (more may have been handed to it
    // meanwhile, so a growth is no proof of progress).
    if (unsent == 0 || unsent < r->stalled_unsent) {
      r->stalled_since_ms = 0;
    } else if (r->stalled_since_ms == 0) {
      r->stalled_since_ms = now_ms;
    } else if (now_ms - r->stalled_since_ms > timeout_ms) {
      drop->push_back(r->client_id);
    }
    r->stalled_unsent = unsent;
  }
}

int Primary::CountAcked(uint64_t offset, bool fsynced) const {
  int n = 0;
  for (const auto& r : replicas_) {
    if (r->state == ReplicaState::kOnline && (fsynced ? r->fack_offset : r->ack_offset) >= offset) ++n;
  }
  return n;
}

int64_t Primary::NthAck(int64_t n, bool fsynced) const {
  std::vector<uint64_t> acks;  // replicas are few: a small copy per query
  for (const auto& r : replicas_) {
    if (r->state == ReplicaState::kOnline && !r->old_sync) acks.push_back(fsynced ? r->fack_offset : r->ack_offset);
  }
  if (n <= 0 || static_cast<size_t>(n) > acks.size()) return -1;
  std::nth_element(acks.begin(), acks.begin() + (n - 1), acks.end(), std::greater<>());
  return static_cast<int64_t>(acks[static_cast<size_t>(n - 1)]);
}

int Primary::online() const {
  int n = 0;
  for (const auto& r : replicas_) n += r->state == ReplicaState::kOnline;
  return n;
}

}  // namespace ringkv::repl
