// io-threads at runtime (IoSystem::SetThreads): growing, shrinking, and
// handing a connection from one I/O thread to another between loop turns
// (the steps are described in io/io_system.h). The rest of IoSystem is in
// io_system.cc.
#include <algorithm>
#include <memory>

#include "absl/strings/str_cat.h"
#include "io/io_log.h"
#include "io/io_system.h"
#include "io/io_thread.h"
#include "io/messages.h"
#include "io/thread_check.h"

namespace ringkv::io {

void IoSystem::SetThreads(int n) {
  RINGKV_DCHECK_MAIN_THREAD();
  target_ = std::max(1, n);
}

void IoSystem::ApplyThreads() {
  // One step at a time: a shrink finishes (its threads joined) first.
  if (static_cast<int>(threads_.size()) != active_) return;
  if (target_ > active_) {
    Grow(target_);
  } else if (target_ < active_) {
    Shrink(target_);
  }
}

void IoSystem::Grow(int n) {
  const int old = active_;
  for (int i = old; i < n; ++i) {
    auto thread = std::make_unique<IoThread>(i, backend_, limits_, *inbox_);
    if (absl::Status s = thread->Spawn(); !s.ok()) {
      Log(3, absl::StrCat("Cannot start I/O thread ", i, ": ", s.message()));
      n = i;
      break;
    }
    threads_.push_back(std::move(thread));
  }
  target_ = n;
  if (n == old) return;
  outbox_.resize(n);
  conn_count_.resize(n, 0);
  active_ = n;
  // The surplus of every old thread moves to the new ones (Handover picks
  // the least loaded thread for each).
  uint64_t total = 0;
  for (int t = 0; t < old; ++t) total += conn_count_[t];
  const uint64_t share = total / static_cast<uint64_t>(n);
  for (int t = 0; t < old; ++t) {
    if (conn_count_[t] <= share) continue;
    const uint64_t surplus = conn_count_[t] - share;
    if (t == 0) {
      std::vector<Connection*> released;
      threads_[0]->ReleaseSome(surplus, &released);
      for (Connection* conn : released) {
        conn->main_moving = true;
        ++moving_;
      }
    } else {
      outbox_[t].push_back(ToIo::ReleaseSome(surplus));
    }
  }
}

void IoSystem::Shrink(int n) {
  // The highest threads retire: each offers every connection, and leaves
  // once it has none (kRetired).
  for (int t = n; t < active_; ++t) outbox_[t].push_back(ToIo::Retire());
  active_ = n;
  next_thread_ %= static_cast<uint32_t>(n);
}

void IoSystem::MoveToMainThread(Connection* conn) {
  RINGKV_DCHECK_MAIN_THREAD();
  if (conn->main_dead || conn->main_closed) return;
  // Thread 0's own, unless it is being released (a growth): then it comes
  // back to thread 0 when detached.
  if (conn->thread == 0 && !conn->main_moving) return;
  if (std::find(to_main_thread_.begin(), to_main_thread_.end(), conn) == to_main_thread_.end()) {
    to_main_thread_.push_back(conn);
  }
  OnOffer(conn);  // (already moving: nothing more to ask)
}

void IoSystem::OnOffer(Connection* conn) {
  if (conn->main_dead || conn->main_moving) return;
  conn->main_moving = true;
  ++moving_;
  // After every reply already posted to its thread: what it holds unsent
  // once detached is older than what main_out holds from now on.
  outbox_[conn->thread].push_back(ToIo::Release(conn->id));
}

void IoSystem::Handover(Connection* conn) {
  const int from = conn->thread;
  // The least loaded serving thread (another one than its own, if any), or
  // thread 0 for a connection bound there (MoveToMainThread).
  int to = -1;
  if (auto it = std::find(to_main_thread_.begin(), to_main_thread_.end(), conn); it != to_main_thread_.end()) {
    to_main_thread_.erase(it);
    to = 0;
  } else {
    for (int t = 0; t < active_; ++t) {
      if (t == from && active_ > 1) continue;
      if (to < 0 || conn_count_[t] < conn_count_[to]) to = t;
    }
  }
  --conn_count_[from];
  ++conn_count_[to];
  if (conn->main_moving) {
    conn->main_moving = false;
    --moving_;
  }
  conn->thread = static_cast<uint16_t>(to);
  // The replies held meanwhile follow what the old thread had not sent.
  if (ConnectionExtras* x = conn->extras(); x != nullptr && !x->main_out.empty()) conn->out.Splice(x->main_out);
  if (conn->main_close_now) conn->out.Clear();
  if (to == 0) {
    threads_[0]->Adopt(conn);
    if (conn->main_close_now) {
      threads_[0]->StartClose(conn);
    } else if (conn->main_closed) {
      threads_[0]->CloseAfterFlush(conn);
    }
  } else {
    // Another thread's connection: staging buffer and figures (extras).
    ConnectionExtras& x = conn->mutable_extras();
    x.stat_obuf.store(QueuedOutput(*conn), std::memory_order_relaxed);
    const size_t qbuf = conn->pending ? ShownQueryBufferSize(*conn->pending) : 0;
    const size_t qbuf_cap = conn->pending ? ShownQueryBufferCapacity(*conn->pending) : 0;
    x.stat_qbuf.store(static_cast<uint32_t>(std::min<size_t>(qbuf, UINT32_MAX)), std::memory_order_relaxed);
    x.stat_qbuf_cap.store(static_cast<uint32_t>(std::min<size_t>(qbuf_cap, UINT32_MAX)), std::memory_order_relaxed);
    outbox_[to].push_back(ToIo::Adopt(conn));
    if (conn->main_closed) outbox_[to].push_back(ToIo::Close(conn->id, !conn->main_close_now));
  }
}

void IoSystem::OnRetired(int thread) {
  threads_[thread]->Join();
  for (size_t t = static_cast<size_t>(active_); t < threads_.size(); ++t) {
    if (threads_[t]->joinable()) return;  // others still winding down
  }
  for (size_t t = static_cast<size_t>(active_); t < threads_.size(); ++t) {
    threads_[t]->net_stats().AddTo(&retired_net_, true);
    if (conn_count_[t] != 0) {
      Log(3, absl::StrCat("io: retired I/O thread ", t, " still counted ", conn_count_[t], " connections"));
    }
  }
  threads_.resize(static_cast<size_t>(active_));
  outbox_.resize(static_cast<size_t>(active_));
  conn_count_.resize(static_cast<size_t>(active_));
}

}  // namespace ringkv::io
