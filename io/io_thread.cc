#include "io/io_thread.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <future>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "io/fork_gate.h"
#include "io/io_log.h"
#include "io/tls_session.h"

namespace ringkv::io {
IoThread::IoThread(int index, BackendKind backend, const SharedLimits& limits, Mailbox<ToMain>& main_inbox)
    : index_(index), limits_(limits), main_inbox_(main_inbox), backend_kind_(backend) {}

IoThread::~IoThread() {
  if (thread_.joinable()) thread_.join();
}

absl::Status IoThread::Init() {
  if (!mailbox_.ok()) return absl::InternalError(absl::StrCat("eventfd: ", std::strerror(errno)));
  backend_ = MakeBackend(backend_kind_);
  if (absl::Status s = backend_->Init(wake_fd_ >= 0 ? wake_fd_ : mailbox_.eventfd()); !s.ok()) return s;
  ArmWake();
  return absl::OkStatus();
}

absl::Status IoThread::Spawn() {
  std::promise<absl::Status> ready;
  std::future<absl::Status> result = ready.get_future();
  thread_ = std::thread([this, &ready] {
    ForkGate::HelperThread fork_gate;  // io/fork_gate.h
    // As Redis names its I/O threads (top -H, /proc/PID/task/*/comm).
    pthread_setname_np(pthread_self(), absl::StrCat("io_thd_", index_).c_str());
    absl::Status s = Init();
    bool ok = s.ok();
    ready.set_value(std::move(s));
    if (ok) Loop();
    if (retiring_) backend_.reset();  // retired: its ring goes with the thread that ran it
  });
  absl::Status s = result.get();
  if (!s.ok()) thread_.join();
  return s;
}

void IoThread::Join() {
  if (thread_.joinable()) thread_.join();
}

void IoThread::ArmWake() { backend_->ArmWake(Tag(Op::kWake, 0, 0)); }

void IoThread::ArmAccept(int fd) {
  listeners_.push_back(fd);
  ArmAcceptAt(static_cast<uint32_t>(listeners_.size() - 1));
}

void IoThread::ArmAcceptAt(uint32_t index) { backend_->ArmAccept(listeners_[index], Tag(Op::kAccept, 0, index)); }

void IoThread::TakeSlot(Connection* conn) {
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
    slots_[slot] = conn;
  } else {
    slot = slots_.PushBack(conn);
  }
  conn->slot = slot;
  conn->gen = next_gen_++ & 0xFFFFFF;
  conn->detaching = false;
}

namespace {

// What may change a connection's parser limits for the commands after it:
// unauthenticated, AUTH or HELLO; authenticated, RESET (any case). (EXEC
// cannot: an unauthenticated client has no MULTI, an authenticated one
// stays so.) Run per parsed command: the common case is one size compare.
bool MayChangeLimits(std::span<const std::string_view> argv, bool authenticated) {
  if (argv.empty()) return false;
  const absl::string_view name(argv[0].data(), argv[0].size());
  if (authenticated) return name.size() == 5 && absl::EqualsIgnoreCase(name, "reset");
  return absl::EqualsIgnoreCase(name, "auth") || absl::EqualsIgnoreCase(name, "hello");
}

}  // namespace

void IoThread::Resume(Connection* conn) {
  if (!conn->awaiting_auth) return;
  conn->awaiting_auth = false;
  if (conn->pending && !conn->closing && !conn->input_done) Process(conn, {});
}

void IoThread::Adopt(Connection* conn) {
  // Handed over while its AUTH was in the main thread's hands (a retiring
  // thread gives up every connection): what it holds is parsed once
  // adopted, with the limits that apply then.
  const bool resume = conn->awaiting_auth;
  TakeSlot(conn);
  if (!runs_main_loop()) live_[conn->id] = conn;
  ArmRecv(conn);
  // A replica's TLS link adopted after its handshake (or a TLS connection
  // handed over from another thread) may hold decrypted bytes already: no
  // receive would ever report them.
  if (conn->tls() != nullptr && conn->tls()->HasBufferedInput()) tls_kick_.push_back(conn);
  // Handed over from another thread: what it had not sent yet goes on.
  if (conn->close_after_flush) {
    CloseAfterFlush(conn);
  } else if (Unsent(conn) || (conn->replica() != nullptr && conn->replica()->behind() > 0)) {
    MarkPending(conn);
  }
  if (resume) Resume(conn);
}

bool IoThread::Movable(const Connection* conn, bool all) const {
  if (conn->framed) return false;  // a framed link lives on thread 0
  if (conn->closing || conn->detaching || conn == busy_ || conn == held_conn_) return false;
  if (all) return true;
  if (conn->awaiting_auth) return false;  // its kResume is on its way here
  // What stays: a replica sent by offset from the main thread's backlog, a
  // replication link of the main thread (its primary's link, a replica),
  // and a connection that is closing anyway.
  return !conn->close_after_flush && conn->replica() == nullptr &&
         !(runs_main_loop() && conn->replication.load(std::memory_order_relaxed) != 0);
}

void IoThread::Release(Connection* conn) {
  if (conn->closing || conn->detaching) return;
  conn->detaching = true;
  detach_since_ = std::chrono::steady_clock::now();
  if (conn->recv_armed) {
    backend_->CancelRecv(conn->fd, Tag(Op::kRecv, conn->gen, conn->slot), Tag(Op::kCancel, 0, 0));
  }
  detaching_.push_back(conn);
}

void IoThread::ReleaseSome(size_t count, std::vector<Connection*>* released) {
  for (uint32_t slot = 0; slot < slots_.size() && count > 0; ++slot) {
    Connection* conn = slots_[slot];
    if (conn == nullptr || !Movable(conn, false)) continue;
    Release(conn);
    released->push_back(conn);
    --count;
  }
}

void IoThread::Offer(size_t count, bool all) {
  for (const auto& [id, conn] : live_) {
    if (count == 0) break;
    if (!Movable(conn, all)) continue;
    to_main_.push_back(ToMain{ToMain::Kind::kOffer, conn, nullptr});
    --count;
  }
}

void IoThread::SweepDetaching() {
  const auto now = std::chrono::steady_clock::now();
  if (now - detach_since_ >= kDetachSendWait) {
    // Sends that waited that long for room: cancelled (the bytes stay in
    // `out`, sent by the next thread). A cancelled send sent nothing; one
    // that completes first completes as usual. Not a replica's stream send
    // (its blocks are held until it completes).
    detach_since_ = now;
    for (Connection* conn : detaching_) {
      if (conn->send_inflight && conn->replica() == nullptr) {
        backend_->CancelRecv(conn->fd, Tag(Op::kSend, conn->gen, conn->slot), Tag(Op::kCancel, 0, 0));
      }
    }
  }
  size_t kept = 0;
  for (Connection* conn : detaching_) {
    if (conn->inflight != 0 || conn == busy_ || conn == held_conn_) {
      detaching_[kept++] = conn;
    } else {
      Detach(conn);
    }
  }
  detaching_.resize(kept);
}

void IoThread::Detach(Connection* conn) {
  // Nothing is in flight: no completion of this thread refers to it any more.
  backend_->Forget(conn->fd);
  slots_[conn->slot] = nullptr;
  free_slots_.push_back(conn->slot);
  if (conn->send_pending) {
    std::erase(pending_, conn);
    conn->send_pending = false;
  }
  if (conn->rearm_recv) {
    std::erase(rearm_, conn);
    conn->rearm_recv = false;
  }
  if (conn->tls() != nullptr) std::erase(tls_kick_, conn);
  if (conn->fanout_held) {
    std::erase(fanout_, conn);
    conn->fanout_held = false;
  }
  if (!multi_sends_.empty()) multi_sends_.erase(conn->slot);
  conn->detaching = false;
  if (runs_main_loop()) {
    main_->OnDetached(conn);
  } else {
    live_.erase(conn->id);
    to_main_.push_back(ToMain{ToMain::Kind::kDetached, conn, nullptr});
  }
}

void IoThread::ArmRecv(Connection* conn) {
  backend_->ArmRecv(conn->fd, Tag(Op::kRecv, conn->gen, conn->slot));
  conn->recv_armed = true;
  ++conn->inflight;
}

Connection* IoThread::Lookup(uint32_t slot, uint32_t gen) {
  if (slot >= slots_.size() || slots_[slot] == nullptr || slots_[slot]->gen != gen) {
    Log(3, absl::StrCat("io: completion for a stale connection slot ", slot, " ignored"));
    return nullptr;
  }
  return slots_[slot];
}

void IoThread::CloseAfterFlush(Connection* conn) {
  conn->close_after_flush = true;
  if (!Unsent(conn) && !conn->send_inflight) StartClose(conn);
}

void IoThread::StartClose(Connection* conn) {
  if (conn->closing) return;
  if (conn == busy_) {  // its command is still running: closed after it
    held_eof_ = true;
    return;
  }
  conn->closing = true;
  if (conn->framed && conn->link()->connecting) {
    // shutdown() does not end a connect under way: its poll is cancelled.
    backend_->CancelRecv(conn->fd, Tag(Op::kConnect, conn->gen, conn->slot), Tag(Op::kCancel, 0, 0));
  }
  // Wakes the armed receive (it completes with 0) and fails any send in
  // flight; where the backend holds them itself (epoll) they end at once.
  shutdown(conn->fd, SHUT_RDWR);
  backend_->CancelArmed(conn->fd);
  if (conn->inflight == 0) FinishClose(conn);
}

void IoThread::FinishClose(Connection* conn) {
  if (conn == held_conn_) {
    held_conn_ = nullptr;
    held_input_.clear();
    held_eof_ = false;
  }
  backend_->Forget(conn->fd);
  close(conn->fd);
  slots_[conn->slot] = nullptr;
  free_slots_.push_back(conn->slot);
  if (conn->send_pending) {
    std::erase(pending_, conn);
    conn->send_pending = false;
  }
  std::erase(rearm_, conn);
  if (conn->tls() != nullptr) std::erase(tls_kick_, conn);
  if (conn->detaching) std::erase(detaching_, conn);
  if (conn->fanout_held) {
    std::erase(fanout_, conn);
    conn->fanout_held = false;
  }
  conn->out.Clear();
  conn->pending.reset();
  if (runs_main_loop()) {
    main_->OnClosed(conn);
  } else {
    live_.erase(conn->id);
    to_main_.push_back(ToMain{ToMain::Kind::kClosed, conn, nullptr});
  }
}

void IoThread::HandleCompletion(const Completion& c) {
  const Completion* cqe = &c;
  const uint64_t tag = c.tag;
  const Op op = static_cast<Op>(tag >> 56);
  const uint32_t slot = static_cast<uint32_t>(tag);
  const uint32_t gen = static_cast<uint32_t>(tag >> 32) & 0xFFFFFF;
  switch (op) {
    case Op::kAccept: {
      if (cqe->res >= 0 && (slot >= listeners_.size() || listeners_[slot] < 0)) {
        close(cqe->res);  // raced with a rebind: this listener is retired
      } else if (cqe->res >= 0) {
        main_->OnAccepted(cqe->res, listeners_[slot]);
      } else if (cqe->res != -ECANCELED && cqe->res != -EBADF && cqe->res != -EINVAL) {
        Log(3, absl::StrCat("Accepting client connection: ", std::strerror(-cqe->res)));
      }
      if (!(cqe->flags & kCompletionMore) && slot < listeners_.size() && listeners_[slot] >= 0 &&
          !stop_.load(std::memory_order_relaxed)) {
        ArmAcceptAt(slot);
      }
      break;
    }
    case Op::kRecv:
      if (Connection* conn = Lookup(slot, gen)) OnRecv(conn, c);
      break;
    case Op::kSend:
      if (Connection* conn = Lookup(slot, gen)) {
        --conn->inflight;
        conn->send_inflight = false;
        OnSend(conn, cqe->res);
      }
      break;
    case Op::kWake:
      ArmWake();
      break;
    case Op::kFsync:
      sink_->OnFsyncDone(slot, cqe->res);
      break;
    case Op::kPollIn:
      sink_->OnReadable(slot, cqe->res);
      break;
    case Op::kCancel:  // the receive it cancelled completes on its own
      break;
    case Op::kConnect:
      if (Connection* conn = Lookup(slot, gen)) OnConnected(conn, cqe->res);
      break;
    case Op::kTimer:
      main_->OnTimerFired(cqe->res);
      break;
    case Op::kTimerMove:  // a move too late for a timer that fired: its own completion says so
      break;
  }
}

void IoThread::SubmitPollIn(int fd, uint32_t token) { backend_->PollIn(fd, Tag(Op::kPollIn, 0, token)); }

void IoThread::SubmitFsync(int fd, uint32_t token) { backend_->Fsync(fd, Tag(Op::kFsync, 0, token)); }

void IoThread::OnRecv(Connection* conn, const Completion& c) {
  const Completion* cqe = &c;
  const int res = cqe->res;
  // TLS: the plaintext is counted, as Redis counts it; a framed link (the
  // cluster bus) not at all, as Redis's bus is not in total_net_*.
  if (res >= 0 && conn->tls() == nullptr && !conn->framed) {
    net_stats_.AddRead(static_cast<uint64_t>(res),
                       conn->replication.load(std::memory_order_relaxed) & Connection::kReplInput);
  }
  if (!(cqe->flags & kCompletionMore)) {
    conn->recv_armed = false;
    --conn->inflight;
  }
  // A turn while its command runs, and the rest of that loop turn once it
  // ended: its input waits behind what was held (ResumeHeldInput), in order.
  if (conn == busy_ || conn == held_conn_) {
    if (cqe->flags & kCompletionBuffer) {
      const uint16_t bid = static_cast<uint16_t>(cqe->flags >> kCompletionBufferShift);
      if (res > 0) held_input_.append(backend_->Buffer(bid), static_cast<size_t>(res));
      backend_->RecycleBuffer(bid);
    }
    if (res == 0 || (res < 0 && res != -ENOBUFS)) {
      held_eof_ = true;
    } else if (!conn->recv_armed) {
      conn->rearm_recv = true;
      rearm_.push_back(conn);
    }
    return;
  }
  if (cqe->flags & kCompletionBuffer) {
    const uint16_t bid = static_cast<uint16_t>(cqe->flags >> kCompletionBufferShift);
    if (res > 0 && !conn->closing && !conn->input_done) {
      // Held in flight while its input is handled: a close from inside
      // (a protocol or frame error, the query buffer limit) is finished
      // below, once, even when this completion ended the receive.
      ++conn->inflight;
      Receive(conn, std::string_view(backend_->Buffer(bid), static_cast<size_t>(res)));
      --conn->inflight;
    }
    backend_->RecycleBuffer(bid);
  }
  if (conn->closing) {
    if (conn->inflight == 0) FinishClose(conn);
    return;
  }
  if (conn->detaching && (res == -ECANCELED || res == -ENOBUFS)) return;  // released: not re-armed here
  if (res == 0 || (res < 0 && res != -ENOBUFS)) {
    if (conn->framed && conn->link()->why.empty()) {
      conn->link()->why = res == 0 ? "connection closed by the peer" : std::strerror(-res);
    }
    StartClose(conn);  // EOF or a socket error
    return;
  }
  if (!conn->recv_armed && !conn->detaching) {
    // The multishot receive ended: out of pool buffers (-ENOBUFS) or the
    // kernel chose to stop it. Re-arm once this turn's buffers are back.
    conn->rearm_recv = true;
    rearm_.push_back(conn);
  }
}

void IoThread::Process(Connection* conn, std::string_view data) {
  if (conn->framed) [[unlikely]] {
    ProcessFrames(conn, data);
    return;
  }
  bool stop = false;
  if (!conn->pending) {
    // The common case: input starts at a command boundary and is parsed in
    // place, straight from the pool buffer.
    RespParser& scratch = scratch_[scratch_level_].parser;
    size_t used = ParseAndDispatch(conn, scratch, data, &stop);
    if (!stop && used < data.size()) {
      auto pending = std::make_unique<PendingInput>();
      pending->parser = scratch;  // resume where parsing stopped
      pending->qbuf.reserve(std::max(scratch.expected_size(), data.size() - used));
      pending->qbuf.assign(data.substr(used));
      conn->pending = std::move(pending);
    }
    scratch.Reset();
  } else {
    PendingInput& in = *conn->pending;
    if (in.parser.expected_size() > in.qbuf.capacity()) in.qbuf.reserve(in.parser.expected_size());
    in.qbuf.append(data);
    size_t used = ParseAndDispatch(conn, in.parser, in.qbuf, &stop);
    if (stop || used == in.qbuf.size()) {
      conn->pending.reset();  // back at a command boundary: nothing to keep
    } else if (used > 0) {
      in.qbuf.erase(0, used);
    }
  }
  const size_t qbuf = conn->pending ? conn->pending->qbuf.size() : 0;
  const size_t qbuf_cap = conn->pending ? conn->pending->qbuf.capacity() : 0;
  const size_t big_arg_at = conn->pending ? conn->pending->parser.big_argument_offset() : 0;
  const int64_t limit = limits_.query_buffer_limit.load(std::memory_order_relaxed);
  if (!stop && static_cast<int64_t>(qbuf) > limit) {
    Log(3, absl::StrCat("Closing client that reached max query buffer length (id=", conn->id, ", qbuf=", qbuf, ")"));
    StartClose(conn);
    return;
  }
  if (runs_main_loop()) {
    if (!stop && !conn->closing && qbuf_cap >= CommandSink::kLargeHeldInput) sink_->OnLargeInputHeld(conn);
  } else {  // the main thread reads its own connections' `pending` itself
    ConnectionExtras& x = *conn->extras();
    x.stat_qbuf.store(static_cast<uint32_t>(std::min<size_t>(qbuf - big_arg_at, UINT32_MAX)),
                      std::memory_order_relaxed);
    x.stat_qbuf_cap.store(static_cast<uint32_t>(std::min<size_t>(qbuf_cap - big_arg_at, UINT32_MAX)),
                          std::memory_order_relaxed);
  }
}

size_t IoThread::ParseAndDispatch(Connection* conn, RespParser& parser, std::string_view data, bool* stop) {
  ParserLimits limits{limits_.max_bulk_len.load(std::memory_order_relaxed),
                      conn->authenticated.load(std::memory_order_relaxed)};
  // Local connections parse a pipelined batch ahead (authenticated clients
  // only) and let the sink prefetch the data the commands will touch before
  // the first runs, so their cache misses overlap instead of queueing one by
  // one. A batch ends at a command that may change the parser limits (AUTH,
  // HELLO, RESET): what follows is parsed once it ran, with the limits then
  // in force, as Redis parses each command after the one before it ran --
  // here in the next round, on another thread once the main thread says so
  // (ToIo::kResume; nothing is parsed while Connection::awaiting_auth).
  std::array<ParsedCommand, 16>& ahead = scratch_[scratch_level_].ahead;
  const bool execute_here = runs_main_loop();
  CommandBatch* batch = nullptr;
  size_t pos = 0;
  bool more = !conn->awaiting_auth;
  while (more && pos < data.size()) {
    const size_t max_ahead = (execute_here && limits.authenticated) ? ahead.size() : 1;
    size_t n = 0;
    bool limits_may_change = false;
    std::string_view error;
    while (n < max_ahead && pos < data.size()) {
      size_t consumed = 0;
      RespParser::Result r = parser.Parse(data.substr(pos), limits, &ahead[n], &consumed);
      if (r == RespParser::Result::kNeedMore) {
        more = false;
        break;
      }
      if (r == RespParser::Result::kError) {
        error = parser.error();
        break;
      }
      pos += consumed;
      if (r == RespParser::Result::kCommand && MayChangeLimits(ahead[n++].argv, limits.authenticated)) [[unlikely]] {
        limits_may_change = true;
        break;
      }
    }
    if (execute_here) {
      // The slots are this nesting level's (scratch_level_): a nested turn
      // run by one of these commands uses the next level's.
      std::span<PrefetchSlot> slots(scratch_[scratch_level_].prefetch.data(), n);
      if (n > 1) {
        std::array<std::span<const std::string_view>, 16>& argvs = scratch_[scratch_level_].prefetch_argvs;
        for (size_t i = 0; i < n; ++i) {
          argvs[i] = ahead[i].argv;
          slots[i] = PrefetchSlot{};
        }
        sink_->PrefetchBatch(conn, std::span<const std::span<const std::string_view>>(argvs.data(), n), slots);
      }
      for (size_t i = 0; i < n; ++i) {
        if (n > 1) {
          sink_->OnPrefetchedCommand(conn, ahead[i].argv, slots[i]);
        } else {
          sink_->OnCommand(conn, ahead[i].argv);
        }
        if (conn->main_closed) {  // QUIT, CLIENT KILL of itself, ...
          *stop = true;
          return data.size();
        }
      }
      if (limits_may_change) limits.authenticated = conn->authenticated.load(std::memory_order_relaxed);
    } else {
      for (size_t i = 0; i < n; ++i) {
        if (batch == nullptr) {
          to_main_.push_back(ToMain{ToMain::Kind::kBatch, conn, std::make_unique<CommandBatch>()});
          batch = to_main_.back().batch.get();
        }
        batch->argc.push_back(static_cast<uint32_t>(ahead[i].argv.size()));
        for (std::string_view a : ahead[i].argv) {
          batch->lens.push_back(static_cast<uint32_t>(a.size()));
          batch->arena.append(a);
        }
      }
      if (limits_may_change) {
        conn->awaiting_auth = true;
        batch->resume_after = true;
        more = false;
      }
    }
    if (!error.empty()) {
      *stop = true;
      if (execute_here) {
        sink_->OnProtocolError(conn, error);
      } else {
        if (batch == nullptr) {
          to_main_.push_back(ToMain{ToMain::Kind::kBatch, conn, std::make_unique<CommandBatch>()});
          batch = to_main_.back().batch.get();
        }
        batch->protocol_error = std::string(error);
      }
      conn->input_done = true;  // the main thread replies, then closes
      return data.size();
    }
  }
  return pos;
}

void IoThread::DrainMailbox() {
  mailbox_.Drain(&mailbox_scratch_);
  for (ToIo& m : mailbox_scratch_) {
    switch (m.kind) {
      case ToIo::Kind::kAdopt:
        Adopt(m.conn);
        break;  // (a handed-over connection's figures were published by the main thread)
      case ToIo::Kind::kReply: {
        auto it = live_.find(m.id);
        if (it == live_.end()) break;  // closed meanwhile; the chunks go with m
        Connection* conn = it->second;
        conn->out.Splice(m.out);
        conn->extras()->stat_obuf.store(conn->out.size(), std::memory_order_relaxed);  // threads > 0 only
        MarkPending(conn);
        break;
      }
      case ToIo::Kind::kResume: {
        auto it = live_.find(m.id);
        if (it == live_.end()) break;
        Resume(it->second);
        break;
      }
      case ToIo::Kind::kClose: {
        auto it = live_.find(m.id);
        if (it == live_.end()) break;
        if (m.after_flush) {
          CloseAfterFlush(it->second);
        } else {
          StartClose(it->second);
        }
        break;
      }
      case ToIo::Kind::kStop:
        RequestStop();
        break;
      case ToIo::Kind::kReleaseSome:
        Offer(m.id, false);
        break;
      case ToIo::Kind::kRetire:
        retiring_ = true;
        Offer(SIZE_MAX, true);
        break;
      case ToIo::Kind::kRelease: {
        auto it = live_.find(m.id);
        if (it != live_.end()) Release(it->second);
        break;
      }
    }
  }
  mailbox_scratch_.clear();
}

void IoThread::ResumeHeldInput() {
  Connection* conn = held_conn_;
  held_conn_ = nullptr;
  std::string input;
  input.swap(held_input_);
  const bool eof = held_eof_;
  held_eof_ = false;
  if (!input.empty() && !conn->closing && !conn->input_done) Receive(conn, input);
  if (eof && !conn->closing) StartClose(conn);
}

void IoThread::Loop() {
  while (true) {
    // Input that arrived while a command of its connection ran long comes
    // first: it is older than anything this turn reaps.
    if (held_conn_ != nullptr) ResumeHeldInput();
    if (!tls_kick_.empty()) KickTls();
    // The main loop's duties are virtual calls, a few per turn (never per
    // command): MainLoopHooks.
    if (runs_main_loop()) {
      if (!detaching_.empty()) SweepDetaching();
      main_->BeforeFlush();
    } else {
      DrainMailbox();
      if (!detaching_.empty()) SweepDetaching();
      if (!to_main_.empty()) main_inbox_.PostAll(to_main_);
      if (retiring_ && live_.empty()) {
        // Every connection is detached or closed, and reported above.
        main_inbox_.Post(ToMain{ToMain::Kind::kRetired, nullptr, nullptr, index_});
        break;
      }
    }
    FlushTurn();
    RearmAndRecycle();
    if (runs_main_loop()) main_->AfterFlush();
    if (stop_.load(std::memory_order_relaxed)) break;
    // Held fan-out stays held only while completions are already waiting,
    // so the wait below returns at once and the next turn checks again: it
    // needs no deadline of its own.
    if (!fanout_.empty()) ReleaseFanout();

    // The main loop: this turn may have set a nearer timer (a command that
    // blocked).
    int64_t wait_us = runs_main_loop() ? main_->WaitUs() : -1;
    if (!detaching_.empty()) wait_us = wait_us < 0 ? DetachWaitUs() : std::min(wait_us, DetachWaitUs());
    backend_->Wait(wait_us);
    ReapCompletions();
  }
}

// Inline: out of line, a function whose only effect is a prefetch is
// "pure" to GCC, and its calls are dropped.
[[gnu::always_inline]] inline const Connection* IoThread::PrefetchConnection(const Completion& c) const {
  const Op op = static_cast<Op>(c.tag >> 56);
  if (op != Op::kRecv && op != Op::kSend) return nullptr;
  const uint32_t slot = static_cast<uint32_t>(c.tag);
  if (slot >= slots_.size()) return nullptr;
  // A hint only: the connection is live now, and a prefetch never faults.
  // Its first two lines: the handlers' fields, `owner` among them.
  const Connection* conn = slots_[slot];
  __builtin_prefetch(conn);
  __builtin_prefetch(reinterpret_cast<const char*>(conn) + 64);
  return conn;
}

void IoThread::ReapCompletions() {
  // The batch and the position in it are members: a turn while busy, run
  // from inside one of these handlers, continues with the rest of the batch
  // (a client waiting there must be answered too) before reaping more.
  while (true) {
    if (reaped_pos_ == reaped_count_) {
      const unsigned n = backend_->Take(reaped_, kReapBatch);
      if (n == 0) return;
      reaped_pos_ = 0;
      reaped_count_ = n;
      // A long batch comes from many connections, whose state is cold: ask
      // for every connection of it at once, so that their misses overlap,
      // and then for each next one's client (its connection's lines asked
      // for already). A short one has little to overlap and is not worth
      // the instructions (about 45 a completion).
      prefetch_batch_ = n >= kPrefetchBatch;
      if (prefetch_batch_) {
        for (unsigned i = 0; i < n; ++i) reaped_conn_[i] = PrefetchConnection(reaped_[i]);
      }
    }
    const Completion c = reaped_[reaped_pos_++];
    // Only where commands run (the other threads' handlers never touch a
    // client, and `owner` is the main thread's). Still live: a connection
    // closed by an earlier handler of the batch is freed after the turn's
    // flush (IoSystem's graveyard).
    if (prefetch_batch_ && runs_main_loop() && reaped_pos_ < reaped_count_ && reaped_conn_[reaped_pos_] != nullptr) {
      __builtin_prefetch(reaped_conn_[reaped_pos_]->owner);
    }
    HandleCompletion(c);
  }
}

void IoThread::RearmAndRecycle() {
  for (Connection* conn : rearm_) {
    conn->rearm_recv = false;
    if (!conn->closing && !conn->recv_armed && !conn->detaching) ArmRecv(conn);
  }
  rearm_.clear();
  backend_->Recycled();
}

void IoThread::TurnWhileBusy(Connection* busy) {
  // Not nested: a command delivered by this turn that runs long itself
  // (BeforeBusyTurn delivers commands) gets no turn of its own.
  if (in_busy_turn_) return;
  in_busy_turn_ = true;
  main_->BeforeBusyTurn(busy);
  scratch_level_ = 1;
  // One connection's input is held at a time. What another long command
  // held earlier in this loop turn (one timer may resume two clients' long
  // scripts) is run now, as its connection's and in order, before this one
  // holds its own: as redis-server 7.0 reads a client's input once its
  // command ended, while the next long command runs (a script's: -BUSY).
  if (held_conn_ != nullptr && held_conn_ != busy) ResumeHeldInput();
  busy_ = busy;
  if (busy != nullptr && busy->thread == index_) held_conn_ = busy;
  Flush(busy);
  // Submits and runs deferred task work (the ring may defer completions to
  // the next wait): what finished meanwhile is reaped now, without waiting.
  backend_->Poll();
  ReapCompletions();
  Flush(busy);
  RearmAndRecycle();
  backend_->Submit();
  busy_ = nullptr;
  scratch_level_ = 0;
  main_->AfterBusyTurn(busy);
  in_busy_turn_ = false;
}

// ---- TLS (connections with a TlsSession only) ------------------------------------

bool IoThread::Unsent(Connection* conn) {
  if (conn->tls() == nullptr) return !conn->out.empty();
  const TlsSession& tls = *conn->tls();
  // Plaintext waits for the handshake, and is dropped with a broken session.
  return !conn->tls()->wire().empty() || (!conn->out.empty() && tls.handshake_done() && !tls.failed());
}

}  // namespace ringkv::io
