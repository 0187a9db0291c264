// IoThread: the send path -- the turn's flush of the pending connections
// (in chunks when a timer falls due meanwhile: FlushTurn), one send per
// connection in flight, the send completions (a replica's stream sent from
// the backlog: OnReplicaSend), and the release of held fan-out.
#include "io/io_thread.h"

#include <errno.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>

#include "io/tls_session.h"

namespace ringkv::io {

void IoThread::OnSend(Connection* conn, int res) {
  if (!multi_sends_.empty()) multi_sends_.erase(conn->slot);
  if (conn->replica() != nullptr && conn->replica()->inflight != 0) [[unlikely]] {
    OnReplicaSend(conn, res);
    return;
  }
  if (conn->closing) {
    if (conn->inflight == 0) FinishClose(conn);
    return;
  }
  if (res < 0) {
    // (-ECANCELED: a released connection's stalled send, see SweepDetaching)
    if (res == -EAGAIN || res == -EINTR || (res == -ECANCELED && conn->detaching)) {
      MarkPending(conn);
      return;
    }
    StartClose(conn);
    return;
  }
  if (conn->tls() == nullptr && !conn->framed) {  // TLS: counted as plaintext when encrypted
    net_stats_.AddWrite(static_cast<uint64_t>(res),
                        conn->replication.load(std::memory_order_relaxed) & Connection::kReplOutput);
  }
  OutBuffer& sent = conn->tls() != nullptr ? conn->tls()->wire() : conn->out;
  sent.Consume(static_cast<size_t>(res));
  if (!runs_main_loop()) {  // the main thread reads its own connections' `out` itself
    conn->extras()->stat_obuf.store(conn->out.size() + (conn->tls() != nullptr ? sent.size() : 0),
                                    std::memory_order_relaxed);
  }
  if (Unsent(conn)) {
    MarkPending(conn);  // a short send or more chunks: continue next flush
  } else if (conn->close_after_flush) {
    StartClose(conn);
  } else if (conn->replica() != nullptr && conn->replica()->behind() > 0) [[unlikely]] {
    MarkPending(conn);  // its stream follows what its OutBuffer held
  }
}

void IoThread::OnReplicaSend(Connection* conn, int res) {
  ReplicaSend& rs = *conn->replica();
  rs.inflight = 0;
  rs.ReleaseHeld();
  if (conn->closing) {
    if (conn->inflight == 0) FinishClose(conn);
    return;
  }
  if (res < 0) {
    if (res == -EAGAIN || res == -EINTR) {
      MarkPending(conn);  // FlushReplica gathers again from rs.next
      return;
    }
    StartClose(conn);
    return;
  }
  net_stats_.AddWrite(static_cast<uint64_t>(res), true);
  // Counted even when stopped meanwhile: the owner may resume from `next`
  // by other means (a snapshot replica that fell behind reads on its own).
  rs.next += static_cast<uint64_t>(res);
  if (rs.behind() > 0 || !conn->out.empty()) MarkPending(conn);
}

void IoThread::Flush(Connection* keep) {
  size_t kept = 0;
  for (size_t i = 0; i < pending_.size(); ++i) {
    Connection* conn = pending_[i];
    if (conn == keep) {
      pending_[kept++] = conn;
      continue;
    }
    SendPending(conn);
  }
  pending_.resize(kept);
}

bool IoThread::SendPending(Connection* conn) {
  conn->send_pending = false;
  // A released connection sends nothing more here: its new thread does.
  // A link still connecting sends once connected (OnConnected).
  if (conn->closing || conn->send_inflight || conn->detaching) return false;
  if (conn->framed && conn->link()->connecting) [[unlikely]] return false;
  OutBuffer& out = conn->tls() != nullptr ? EncryptForSend(conn) : conn->out;
  if (out.empty()) {
    if (conn->close_after_flush) {
      if (!Unsent(conn)) StartClose(conn);
    } else if (conn->replica() != nullptr) [[unlikely]] {
      FlushReplica(conn);  // the replication stream, once its OutBuffer is sent (never a TLS link)
    }
    return false;
  }
  const uint64_t tag = Tag(Op::kSend, conn->gen, conn->slot);
  conn->send_inflight = true;
  ++conn->inflight;
  if (out.MultiLink()) {
    // One vectored send for several chunks, instead of a completion and
    // a loop turn per 16 KiB chunk.
    std::unique_ptr<MultiSend>& ms = multi_sends_[conn->slot];
    if (ms == nullptr) ms = std::make_unique<MultiSend>();
    ms->msg = msghdr{};
    ms->msg.msg_iov = ms->iov;
    ms->msg.msg_iovlen = static_cast<size_t>(out.Gather(ms->iov, MultiSend::kMaxIov));
    backend_->SendMsg(conn->fd, &ms->msg, tag);
  } else {
    std::string_view front = out.Front();
    backend_->Send(conn->fd, front.data(), front.size(), tag);
  }
  return true;
}

void IoThread::FlushTurn() {
  // Thread 0 runs the timers only between turns, and a turn's sends are
  // most of its time: each is a loopback TCP transmit, delivery to the
  // receiver included, done by the kernel inside the submitting system call
  // (about 5 us each here, docs/performance.md 37.1). A turn answering a
  // few hundred WAITs would hold a deadline falling due meanwhile for
  // milliseconds. So when a timer falls due before the sends are likely
  // done, they go out in chunks of about kSendChunkBudget, and a due timer
  // runs between two chunks, with the rest of a turn's start
  // (MainLoopHooks::BeforeFlush: what it answers is written to the AOF and
  // fed to replicas before it is sent, as in any turn). The newest pending
  // connections go first, so what the timer answered goes out in the next
  // chunk (for a connection whose send of this turn is still in flight: when
  // that send completes). Without a timer that near, this is one Flush, as
  // every other turn.
  if (runs_main_loop()) {
    // (A turn with fewer pending connections than the least chunk, as at
    // pipeline 1 with 50 clients, tests one size.)
    while (pending_.size() > kMinSendChunk) {
      const size_t chunk = std::max<size_t>(kMinSendChunk, kSendChunkBudget.count() / send_ns_);
      if (pending_.size() <= chunk ||
          main_->TimerDueInUs() * 1000 >= static_cast<int64_t>(pending_.size()) * send_ns_) {
        break;
      }
      const auto start = std::chrono::steady_clock::now();
      int64_t sent = 0;  // connections skipped (closing, a send in flight, nothing to send) cost ~nothing
      for (size_t i = 0; i < chunk; ++i) {
        Connection* conn = pending_.back();
        pending_.pop_back();
        sent += SendPending(conn) ? 1 : 0;
      }
      backend_->Submit();
      const int64_t took = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
      if (sent > 0) send_ns_ = std::max<int64_t>(100, (send_ns_ * 7 + took / sent) / 8);
      if (main_->TimerDueInUs() == 0) main_->BeforeFlush();
    }
  }
  Flush();
}

bool IoThread::InputWaiting() { return backend_->InputWaiting(static_cast<uint8_t>(Op::kSend)); }

void IoThread::ReleaseFanout() {
  // Send this turn's replies and let input that arrived meanwhile post its
  // completions: if some is waiting, the held connections can take what the
  // next turn publishes too.
  backend_->Poll();
  const bool due = !InputWaiting() || std::chrono::steady_clock::now() - fanout_since_ >= kFanoutMaxDelay;
  size_t kept = 0;
  for (Connection* conn : fanout_) {
    if (!due && conn->out.size() < kFanoutBatchBytes) {
      fanout_[kept++] = conn;
      continue;
    }
    conn->fanout_held = false;
    MarkPending(conn);
  }
  fanout_.resize(kept);
  Flush();
}

}  // namespace ringkv::io
