// IoSystem: the main thread's side -- the loop, the hand-off of commands and
// replies to and from the I/O threads, closes, replica streams, timers.
// Listeners and accepts: io_system_listeners.cc; io-threads at runtime:
// io_system_threads.cc.
#include "io/io_system.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "io/io_log.h"
#include "io/io_thread.h"
#include "io/messages.h"
#include "io/thread_check.h"
#include "io/tls_session.h"

namespace ringkv::io {
namespace {

int64_t NowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

IoSystem::IoSystem(CommandSink* sink) : sink_(sink), inbox_(std::make_unique<Mailbox<ToMain>>()) {
  BindMainThread();  // the thread that will run the loop (RINGKV_DCHECK_MAIN_THREAD)
}

IoSystem::~IoSystem() { Shutdown(); }

void IoSystem::Shutdown() {
  RINGKV_DCHECK_MAIN_THREAD();
  for (auto& t : threads_) {
    if (t->index() != 0) {
      t->mailbox().Post(ToIo::Stop());
      t->Join();
    }
  }
  CloseListeners();
  // Commands still queued are dropped; closes already reported are delivered,
  // and a connection detached on its way to another thread is closed here.
  inbox_->Drain(&inbox_scratch_);
  for (ToMain& m : inbox_scratch_) {
    if (m.kind == ToMain::Kind::kClosed) {
      HandleClosed(m.conn);
    } else if (m.kind == ToMain::Kind::kDetached) {
      close(m.conn->fd);
      m.conn->out.Clear();
      HandleClosed(m.conn);
    }
  }
  inbox_scratch_.clear();
  for (auto& t : threads_) {
    t->ReleaseAll([this](Connection* conn) {
      if (!conn->main_dead) TellClosed(conn);
      delete conn;
    });
  }
  ReapGraveyard();
  remote_pending_.clear();
}

absl::Status IoSystem::ChooseBackend(BackendChoice choice) {
  if (backend_chosen_) return absl::OkStatus();
  if (choice == BackendChoice::kEpoll) {
    backend_ = BackendKind::kEpoll;
  } else if (absl::Status s = ProbeIoUring(); s.ok()) {
    backend_ = BackendKind::kIoUring;
  } else if (choice == BackendChoice::kIoUring) {
    return absl::FailedPreconditionError(absl::StrCat(s.message(), " (io-backend io_uring is configured)"));
  } else {
    Log(3, absl::StrCat("io_uring cannot be used: ", s.message(), ". Using the epoll backend."));
    backend_ = BackendKind::kEpoll;
  }
  backend_chosen_ = true;
  return absl::OkStatus();
}

absl::Status IoSystem::Start(const IoOptions& options) {
  RINGKV_DCHECK_MAIN_THREAD();
  if (listen_fds_.empty() && tls_listen_fds_.empty() && unix_fd_ < 0) {
    if (absl::Status s = Listen(options); !s.ok()) return s;
  }
  if (absl::Status s = ChooseBackend(options.backend); !s.ok()) return s;
  int n = std::max(1, options.threads);
  outbox_.resize(n);
  conn_count_.assign(n, 0);
  active_ = target_ = n;
  for (int i = 0; i < n; ++i) threads_.push_back(std::make_unique<IoThread>(i, backend_, limits_, *inbox_));
  threads_[0]->InstallMainLoop(this, sink_, inbox_->eventfd());
  threads_[0]->SetLinkSink(link_sink_);
  // A stop asked for before there was a thread 0 (which checks its own flag).
  if (stop_requested()) threads_[0]->RequestStop();
  if (absl::Status s = threads_[0]->Init(); !s.ok()) return s;
  for (int i = 1; i < n; ++i) {
    if (absl::Status s = threads_[i]->Spawn(); !s.ok()) return s;
  }
  for (int fd : listen_fds_) threads_[0]->ArmAccept(fd);
  for (int fd : tls_listen_fds_) threads_[0]->ArmAccept(fd);
  if (unix_fd_ >= 0) threads_[0]->ArmAccept(unix_fd_);
  return absl::OkStatus();
}

void IoSystem::Run() {
  RINGKV_DCHECK_MAIN_THREAD();
  threads_[0]->Loop();
}

NetTotals IoSystem::net_totals() const {
  NetTotals t = retired_net_;
  for (const auto& thread : threads_) thread->net_stats().AddTo(&t, thread->index() != 0);
  return t;
}

void IoSystem::RequestStop() {
  stop_.store(true, std::memory_order_relaxed);
  if (!threads_.empty()) threads_[0]->RequestStop();
  inbox_->Wake();
}

void IoSystem::WakeMain() { inbox_->Wake(); }

void IoSystem::WakeTimerInUs(int64_t us) {
  RINGKV_DCHECK_MAIN_THREAD();
  next_timer_us_ = std::min(next_timer_us_, NowUs() + std::max<int64_t>(0, us));
  // Due now: the loop does not sleep, and the next turn runs it.
  if (us <= 0) timer_due_now_ = true;
}

void IoSystem::SubmitFsync(int fd, uint32_t token) {
  RINGKV_DCHECK_MAIN_THREAD();
  if (threads_.empty()) {  // before Start (loading): nothing else runs yet
    sink_->OnFsyncDone(token, ::fdatasync(fd) == 0 ? 0 : -errno);
    return;
  }
  threads_[0]->SubmitFsync(fd, token);
}

void IoSystem::WatchReadable(int fd, uint32_t token) {
  RINGKV_DCHECK_MAIN_THREAD();
  threads_[0]->SubmitPollIn(fd, token);
}

bool IoSystem::stop_requested() const { return stop_.load(std::memory_order_relaxed); }

OutBuffer& IoSystem::PrepareLocalWrite(Connection* conn) {
  threads_[0]->MarkPending(conn);
  return conn->out;
}

OutBuffer& IoSystem::PrepareFanoutWrite(Connection* conn) {
  RINGKV_DCHECK_MAIN_THREAD();
  if (conn->thread != 0) return PrepareWrite(conn);
  threads_[0]->HoldFanout(conn);
  return conn->out;
}

void IoSystem::Notify() { inbox_->Post(ToMain{ToMain::Kind::kNotify, nullptr, nullptr}); }

void IoSystem::DrainInbox() {
  if (!held_.empty()) {  // kept by a turn while busy: older than the inbox
    std::vector<ToMain> held;
    held.swap(held_);
    for (ToMain& m : held) Dispatch(m);
  }
  inbox_->Drain(&inbox_scratch_);
  // A member position: a turn while busy, run from inside one of these
  // messages, goes on with the rest of them.
  for (inbox_pos_ = 0; inbox_pos_ < inbox_scratch_.size();) Dispatch(inbox_scratch_[inbox_pos_++]);
  inbox_scratch_.clear();
  inbox_pos_ = 0;
}

void IoSystem::Dispatch(ToMain& m) {
  switch (m.kind) {
    case ToMain::Kind::kBatch:
      DeliverBatch(m, batch_args_);
      break;
    case ToMain::Kind::kClosed:
      HandleClosed(m.conn);
      break;
    case ToMain::Kind::kNotify:
      sink_->OnNotify();
      break;
    case ToMain::Kind::kOffer:
      OnOffer(m.conn);
      break;
    case ToMain::Kind::kDetached:
      Handover(m.conn);
      break;
    case ToMain::Kind::kRetired:
      OnRetired(m.thread);
      break;
  }
}

void IoSystem::BeforeFlush() {
  // Timers first, so that what they write (a blocked client's timeout
  // answer, a WAIT's count) is sent this turn, not after the next wake-up.
  RunTimers();
  DrainInbox();
  if (target_ != active_) ApplyThreads();
  sink_->BeforeFlush();
  PostRemoteReplies();
}

void IoSystem::ProcessEventsWhileBusy(Connection* busy) {
  RINGKV_DCHECK_MAIN_THREAD();
  threads_[0]->TurnWhileBusy(busy);
}

void IoSystem::BeforeBusyTurn(Connection* busy) {
  // The rest of the batch being delivered, then what arrived since.
  std::vector<ToMain> messages;
  for (; inbox_pos_ < inbox_scratch_.size(); ++inbox_pos_) messages.push_back(std::move(inbox_scratch_[inbox_pos_]));
  std::vector<ToMain> arrived;  // Drain swaps: it takes an empty vector
  inbox_->Drain(&arrived);
  for (ToMain& m : arrived) messages.push_back(std::move(m));
  std::vector<std::string_view> args;  // batch_args_ holds the running command's
  for (ToMain& m : messages) {
    // The busy connection's later commands and close, and background work,
    // wait (in order); other connections are served.
    if (m.conn == busy || m.kind == ToMain::Kind::kNotify || m.kind == ToMain::Kind::kRetired) {
      held_.push_back(std::move(m));
    } else if (m.kind == ToMain::Kind::kBatch) {
      DeliverBatch(m, args);
    } else {
      Dispatch(m);
    }
  }
}

void IoSystem::DeliverBatch(ToMain& msg, std::vector<std::string_view>& args) {
  Connection* conn = msg.conn;
  const CommandBatch& b = *msg.batch;
  // All argument views first, so the sink can prefetch for the whole batch.
  // The scratch keeps an ordinary batch's capacity (as ParsedCommand's).
  if (args.capacity() > ParsedCommand::kKeptArgs) {
    std::vector<std::string_view>().swap(args);
  } else {
    args.clear();
  }
  size_t offset = 0;
  for (uint32_t len : b.lens) {
    args.push_back(std::string_view(b.arena.data() + offset, len));
    offset += len;
  }
  if (b.argc.size() > 1) {
    // Scratch of the prefetch rounds only: they end before the first
    // command runs, so a DeliverBatch from inside one (a turn while busy)
    // may reuse it.
    prefetch_cmds_.clear();
    size_t first = 0;
    for (uint32_t argc : b.argc) {
      prefetch_cmds_.emplace_back(args.data() + first, argc);
      first += argc;
    }
    prefetch_slots_.assign(b.argc.size(), PrefetchSlot{});
    sink_->PrefetchBatch(conn, prefetch_cmds_, prefetch_slots_);
  }
  // The slots, copied out: a nested DeliverBatch (a turn while busy) reuses
  // prefetch_slots_.
  absl::InlinedVector<PrefetchSlot, 16> prefetched;
  if (b.argc.size() > 1) prefetched.assign(prefetch_slots_.begin(), prefetch_slots_.end());
  size_t first = 0;
  for (size_t i = 0; i < b.argc.size(); ++i) {
    if (conn->main_closed || conn->main_dead) return;
    const std::span<const std::string_view> argv(args.data() + first, b.argc[i]);
    if (prefetched.empty()) {
      sink_->OnCommand(conn, argv);
    } else {
      sink_->OnPrefetchedCommand(conn, argv, prefetched[i]);
    }
    first += b.argc[i];
  }
  if (!b.protocol_error.empty() && !conn->main_closed && !conn->main_dead) {
    sink_->OnProtocolError(conn, b.protocol_error);
  }
  // AUTH, HELLO or RESET ran: its thread parses what followed it with the limits
  // that now apply (posted ahead of the replies, which keep their order).
  if (b.resume_after && !conn->main_closed && !conn->main_dead) {
    outbox_[conn->thread].push_back(ToIo::Resume(conn->id));
  }
}

void IoSystem::HoldClosingOutput(const Connection* conn, uint64_t bytes) {
  if (bytes == 0) return;
  closing_output_[conn] += bytes;
  closing_output_bytes_ += bytes;
}

void IoSystem::HandleClosed(Connection* conn) {
  if (!closing_output_.empty()) {
    if (auto it = closing_output_.find(conn); it != closing_output_.end()) {
      closing_output_bytes_ -= it->second;
      closing_output_.erase(it);
    }
  }
  if (!conn->framed) --conn_count_[conn->thread];  // links are not in the threads' shares
  if (conn->main_moving) {
    conn->main_moving = false;
    --moving_;
    std::erase(to_main_thread_, conn);
  }
  TellClosed(conn);
  conn->main_dead = true;
  if (conn->extras() != nullptr) conn->extras()->main_out.Clear();
  graveyard_.push_back(conn);
}

void IoSystem::TellClosed(Connection* conn) {
  if (!conn->framed) {
    sink_->OnClose(conn);
    return;
  }
  // A link its sink closed itself is not reported back (io/link_sink.h).
  LinkState& link = *conn->link();
  if (link.why.empty()) link.why = "connection closed";
  if (link_sink_ != nullptr && !conn->main_closed) link_sink_->OnLinkClosed(conn, link);
}

void IoSystem::ReapGraveyard() {
  for (Connection* conn : graveyard_) delete conn;
  graveyard_.clear();
}

bool IoSystem::StartStream(Connection* conn, const BlockStream* stream, uint64_t from) {
  RINGKV_DCHECK_MAIN_THREAD();
  ReplicaSend* rs = conn->replica();
  if (rs != nullptr && rs->inflight != 0) return false;
  if (rs == nullptr) {
    conn->mutable_extras().replica = std::make_unique<ReplicaSend>(stream, from);
  } else {
    rs->stream = stream;
    rs->next = from;
  }
  StreamMore(conn);
  return true;
}

void IoSystem::StreamMore(Connection* conn) {
  if (const ReplicaSend* rs = conn->replica(); rs != nullptr && rs->behind() > 0) threads_[0]->MarkPending(conn);
}

void IoSystem::CloseAfterReply(Connection* conn) {
  RINGKV_DCHECK_MAIN_THREAD();
  if (conn->main_closed || conn->main_dead) return;
  conn->main_closed = true;
  if (conn->thread == 0) {
    threads_[0]->CloseAfterFlush(conn);
    return;
  }
  if (!conn->main_pending) {
    conn->main_pending = true;
    remote_pending_.push_back(conn);
  }
}

void IoSystem::CloseNow(Connection* conn) {
  RINGKV_DCHECK_MAIN_THREAD();
  if (conn->main_dead) return;
  // Its unsent output is freed on its own thread once the close completes
  // (a send in flight returned): counted in closing_output_bytes() until
  // then. A TLS session's encrypted bytes too, on thread 0.
  if (!conn->main_closed) {
    const TlsSession* tls = conn->thread == 0 ? conn->tls() : nullptr;
    HoldClosingOutput(conn, OutputBufferMemory(*conn) + (tls != nullptr ? tls->wire().allocated() : 0));
  }
  conn->main_closed = true;
  if (conn->thread == 0) {
    threads_[0]->StartClose(conn);
    return;
  }
  conn->extras()->main_out.Clear();
  if (conn->main_moving) {  // closed once handed over (Handover)
    conn->main_close_now = true;
    return;
  }
  outbox_[conn->thread].push_back(ToIo::Close(conn->id, false));
}

void IoSystem::PostRemoteReplies(Connection* keep) {
  size_t kept = 0;
  for (Connection* conn : remote_pending_) {
    if (conn == keep) {
      remote_pending_[kept++] = conn;
      continue;
    }
    conn->main_pending = false;
    // A connection on its way to another thread keeps its replies (and its
    // close) until it is handed over.
    if (conn->main_dead || conn->main_moving) continue;
    std::vector<ToIo>& box = outbox_[conn->thread];
    if (!conn->extras()->main_out.empty()) {
      box.push_back(ToIo::Reply(conn->id, conn->extras()->main_out));
    }
    if (conn->main_closed) box.push_back(ToIo::Close(conn->id, true));
  }
  remote_pending_.resize(kept);
  for (size_t t = 1; t < outbox_.size(); ++t) threads_[t]->mailbox().PostAll(outbox_[t]);
}

int64_t IoSystem::WaitUs() {
  // A step of SetThreads waits to be applied at the start of the next turn.
  if (target_ != active_ && static_cast<int>(threads_.size()) == active_) return 0;
  if (!standing_timer_) return TimerDueInUs();
  if (timer_due_now_) return 0;
  // Armed once, and moved only when a deadline came nearer: a deadline
  // moved later (the common case: each firing sets the next) is met by
  // arming again after the firing.
  if (!timer_armed_) {
    if (!threads_[0]->ArmTimer(next_timer_us_)) {
      standing_timer_ = false;
      return TimerDueInUs();
    }
    timer_armed_ = true;
    timer_armed_us_ = next_timer_us_;
  } else if (next_timer_us_ < timer_armed_us_) {
    threads_[0]->MoveTimer(next_timer_us_);
    timer_armed_us_ = next_timer_us_;
  }
  return -1;
}

void IoSystem::OnTimerFired(int res) {
  // Nothing to run here: the turn this completion ends (it may have woken
  // the loop) starts with RunTimers.
  timer_armed_ = false;
  if (res != -ETIME && res != -ECANCELED) {
    // A kernel refusing the timer would fire it at once forever, a busy
    // loop: the waits carry the timeout from now on.
    Log(3, absl::StrCat("The loop's timer failed (", std::strerror(-res), "): waits carry their timeouts instead"));
    standing_timer_ = false;
  }
}

int64_t IoSystem::TimerDueInUs() { return std::max<int64_t>(0, next_timer_us_ - NowUs()); }

void IoSystem::RunTimers() {
  // The clock is read every turn, not only once the timer's completion
  // came: under load a turn takes milliseconds, and the completion of a
  // timer that fired during one is seen only at the next wait (the ring
  // defers it to the thread's next io_uring_enter), a whole turn late. A
  // trial that read the clock only after the completion fired WAIT's 1 ms
  // deadlines 3.5 ms late at p99 under 2,000 clients; this, 0.35 ms
  // (docs/performance.md 41).
  timer_due_now_ = false;
  const int64_t now = NowUs();
  if (now >= next_timer_us_) next_timer_us_ = now + std::max<int64_t>(1, sink_->OnTimer());
}

}  // namespace ringkv::io
