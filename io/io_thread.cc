#include "io/io_thread.h"

#include <errno.h>
#include <sys/mman.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <future>

#include "absl/strings/str_cat.h"
#include "io/io_log.h"

namespace ringkv::io {
namespace {

constexpr unsigned kSqEntries = 2048;
constexpr unsigned kCqEntries = 32768;
// Receive buffers: small enough that their pool (allocated and touched once
// at start-up) costs little, big enough for a pipelined batch per read.
constexpr uint32_t kRecvBufSize = 4096;
constexpr uint32_t kRecvBufCount = 512;

std::string RingSetupError(int err) {
  switch (err) {
    case EPERM:
      return "io_uring is disabled for this process (kernel.io_uring_disabled, or a seccomp profile "
             "of the container). Fix: sysctl -w kernel.io_uring_disabled=0, or run the container "
             "with a seccomp profile that allows io_uring_setup/io_uring_enter/io_uring_register.";
    case ENOSYS:
      return "io_uring is not available: the kernel lacks it or a seccomp filter blocks "
             "io_uring_setup. Fix: Linux 6.0 or newer, and allow the io_uring syscalls.";
    case ENOMEM:
      return "io_uring could not lock memory for its rings (RLIMIT_MEMLOCK too low). Fix: raise "
             "the limit, e.g. `ulimit -l unlimited` or LimitMEMLOCK=infinity in the systemd unit.";
    default:
      return absl::StrCat("io_uring setup failed: ", std::strerror(err));
  }
}

}  // namespace

IoThread::IoThread(int index, const SharedLimits& limits, Mailbox<ToMain>& main_inbox)
    : index_(index), limits_(limits), main_inbox_(main_inbox) {}

IoThread::~IoThread() {
  if (thread_.joinable()) thread_.join();
  if (ring_ready_) io_uring_queue_exit(&ring_);
  if (buffers_ != nullptr) munmap(buffers_, static_cast<size_t>(buf_count_) * buf_size_);
  if (buf_ring_ != nullptr) munmap(buf_ring_, buf_count_ * sizeof(io_uring_buf));
}

absl::Status IoThread::Init() {
  if (!mailbox_.ok()) return absl::InternalError(absl::StrCat("eventfd: ", std::strerror(errno)));
  io_uring_params p{};
  p.flags = IORING_SETUP_CQSIZE | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
  p.cq_entries = kCqEntries;
  int ret = io_uring_queue_init_params(kSqEntries, &ring_, &p);
  if (ret == -EINVAL) {  // older kernel: no single-issuer / deferred task work
    p = {};
    p.flags = IORING_SETUP_CQSIZE | IORING_SETUP_COOP_TASKRUN;
    p.cq_entries = kCqEntries;
    ret = io_uring_queue_init_params(kSqEntries, &ring_, &p);
  }
  if (ret == -EINVAL) {
    p = {};
    p.flags = IORING_SETUP_CQSIZE;
    p.cq_entries = kCqEntries;
    ret = io_uring_queue_init_params(kSqEntries, &ring_, &p);
  }
  if (ret < 0) return absl::FailedPreconditionError(RingSetupError(-ret));
  ring_ready_ = true;
  if (!(p.features & IORING_FEAT_FAST_POLL)) {
    return absl::FailedPreconditionError("io_uring lacks IORING_FEAT_FAST_POLL: Linux 5.19 or newer is required");
  }

  buf_count_ = kRecvBufCount;
  buf_size_ = kRecvBufSize;
  size_t ring_bytes = buf_count_ * sizeof(io_uring_buf);
  void* r = mmap(nullptr, ring_bytes, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE | MAP_POPULATE, -1, 0);
  void* b = mmap(nullptr, static_cast<size_t>(buf_count_) * buf_size_, PROT_READ | PROT_WRITE,
                 MAP_ANONYMOUS | MAP_PRIVATE | MAP_POPULATE, -1, 0);
  if (r == MAP_FAILED || b == MAP_FAILED) return absl::ResourceExhaustedError("cannot map receive buffers");
  buf_ring_ = static_cast<io_uring_buf_ring*>(r);
  buffers_ = static_cast<char*>(b);
  io_uring_buf_reg reg{};
  reg.ring_addr = reinterpret_cast<uint64_t>(buf_ring_);
  reg.ring_entries = buf_count_;
  reg.bgid = 0;
  ret = io_uring_register_buf_ring(&ring_, &reg, 0);
  if (ret < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("io_uring provided buffer rings are not supported (", std::strerror(-ret),
                     "): Linux 5.19 or newer is required"));
  }
  io_uring_buf_ring_init(buf_ring_);
  const int mask = io_uring_buf_ring_mask(buf_count_);
  for (uint32_t i = 0; i < buf_count_; ++i) {
    io_uring_buf_ring_add(buf_ring_, buffers_ + static_cast<size_t>(i) * buf_size_, buf_size_, static_cast<uint16_t>(i),
                          mask, static_cast<int>(i));
  }
  io_uring_buf_ring_advance(buf_ring_, static_cast<int>(buf_count_));
  ArmWake();
  return absl::OkStatus();
}

absl::Status IoThread::Spawn() {
  std::promise<absl::Status> ready;
  std::future<absl::Status> result = ready.get_future();
  thread_ = std::thread([this, &ready] {
    absl::Status s = Init();
    bool ok = s.ok();
    ready.set_value(std::move(s));
    if (ok) Loop();
  });
  absl::Status s = result.get();
  if (!s.ok()) thread_.join();
  return s;
}

void IoThread::Join() {
  if (thread_.joinable()) thread_.join();
}

io_uring_sqe* IoThread::GetSqe() {
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  while (sqe == nullptr) {
    // Full submission queue: submit what is there and try again.
    io_uring_submit(&ring_);
    sqe = io_uring_get_sqe(&ring_);
  }
  return sqe;
}

void IoThread::ArmWake() {
  io_uring_sqe* sqe = GetSqe();
  io_uring_prep_read(sqe, wake_fd_ >= 0 ? wake_fd_ : mailbox_.eventfd(), &wake_value_, sizeof(wake_value_), 0);
  io_uring_sqe_set_data64(sqe, Tag(Op::kWake, 0, 0));
}

void IoThread::ArmAccept(int fd) {
  listeners_.push_back(fd);
  ArmAcceptAt(static_cast<uint32_t>(listeners_.size() - 1));
}

void IoThread::ArmAcceptAt(uint32_t index) {
  io_uring_sqe* sqe = GetSqe();
  io_uring_prep_multishot_accept(sqe, listeners_[index], nullptr, nullptr, SOCK_CLOEXEC);
  io_uring_sqe_set_data64(sqe, Tag(Op::kAccept, 0, index));
}

void IoThread::Adopt(Connection* conn) {
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
    slots_[slot] = conn;
  } else {
    slot = static_cast<uint32_t>(slots_.size());
    slots_.push_back(conn);
    generations_.push_back(0);
  }
  conn->slot = slot;
  if (!runs_main_loop()) live_[conn->id] = conn;
  ArmRecv(conn);
}

void IoThread::ArmRecv(Connection* conn) {
  io_uring_sqe* sqe = GetSqe();
  io_uring_prep_recv_multishot(sqe, conn->fd, nullptr, 0, 0);
  sqe->flags |= IOSQE_BUFFER_SELECT;
  sqe->buf_group = 0;
  io_uring_sqe_set_data64(sqe, Tag(Op::kRecv, generations_[conn->slot], conn->slot));
  conn->recv_armed = true;
  ++conn->inflight;
}

Connection* IoThread::Lookup(uint32_t slot, uint32_t gen) {
  if (slot >= slots_.size() || slots_[slot] == nullptr || (generations_[slot] & 0xFFFFFF) != gen) {
    Log(3, absl::StrCat("io: completion for a stale connection slot ", slot, " ignored"));
    return nullptr;
  }
  return slots_[slot];
}

void IoThread::CloseAfterFlush(Connection* conn) {
  conn->close_after_flush = true;
  if (conn->out.empty() && !conn->send_inflight) StartClose(conn);
}

void IoThread::StartClose(Connection* conn) {
  if (conn->closing) return;
  if (conn == busy_) {  // its command is still running: closed after it
    held_eof_ = true;
    return;
  }
  conn->closing = true;
  // Wakes the armed receive (it completes with 0) and fails any send in flight.
  shutdown(conn->fd, SHUT_RDWR);
  if (conn->inflight == 0) FinishClose(conn);
}

void IoThread::FinishClose(Connection* conn) {
  if (conn == held_conn_) {
    held_conn_ = nullptr;
    held_input_.clear();
    held_eof_ = false;
  }
  close(conn->fd);
  slots_[conn->slot] = nullptr;
  ++generations_[conn->slot];
  free_slots_.push_back(conn->slot);
  if (conn->send_pending) {
    std::erase(pending_, conn);
    conn->send_pending = false;
  }
  std::erase(rearm_, conn);
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

void IoThread::RecycleBuffer(uint16_t bid) {
  io_uring_buf_ring_add(buf_ring_, buffers_ + static_cast<size_t>(bid) * buf_size_, buf_size_, bid,
                        io_uring_buf_ring_mask(buf_count_), static_cast<int>(recycled_));
  ++recycled_;
}

void IoThread::HandleCompletion(io_uring_cqe* cqe) {
  const uint64_t tag = io_uring_cqe_get_data64(cqe);
  const Op op = static_cast<Op>(tag >> 56);
  const uint32_t slot = static_cast<uint32_t>(tag);
  const uint32_t gen = static_cast<uint32_t>(tag >> 32) & 0xFFFFFF;
  switch (op) {
    case Op::kAccept: {
      if (cqe->res >= 0 && (slot >= listeners_.size() || listeners_[slot] < 0)) {
        close(cqe->res);  // raced with a rebind: this listener is retired
      } else if (cqe->res >= 0) {
        main_->OnAccepted(cqe->res);
      } else if (cqe->res != -ECANCELED && cqe->res != -EBADF && cqe->res != -EINVAL) {
        Log(3, absl::StrCat("Accepting client connection: ", std::strerror(-cqe->res)));
      }
      if (!(cqe->flags & IORING_CQE_F_MORE) && slot < listeners_.size() && listeners_[slot] >= 0 &&
          !stop_.load(std::memory_order_relaxed)) {
        ArmAcceptAt(slot);
      }
      break;
    }
    case Op::kRecv:
      if (Connection* conn = Lookup(slot, gen)) OnRecv(conn, cqe);
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
  }
}

void IoThread::SubmitPollIn(int fd, uint32_t token) {
  io_uring_sqe* sqe = GetSqe();
  io_uring_prep_poll_add(sqe, fd, POLLIN);
  io_uring_sqe_set_data64(sqe, Tag(Op::kPollIn, 0, token));
}

void IoThread::SubmitFsync(int fd, uint32_t token) {
  io_uring_sqe* sqe = GetSqe();
  io_uring_prep_fsync(sqe, fd, IORING_FSYNC_DATASYNC);
  io_uring_sqe_set_flags(sqe, IOSQE_ASYNC);  // it blocks: straight to a kernel worker
  io_uring_sqe_set_data64(sqe, Tag(Op::kFsync, 0, token));
}

void IoThread::OnRecv(Connection* conn, io_uring_cqe* cqe) {
  const int res = cqe->res;
  if (!(cqe->flags & IORING_CQE_F_MORE)) {
    conn->recv_armed = false;
    --conn->inflight;
  }
  if (conn == busy_) {  // a turn while its command runs: keep it for later
    if (cqe->flags & IORING_CQE_F_BUFFER) {
      const uint16_t bid = static_cast<uint16_t>(cqe->flags >> IORING_CQE_BUFFER_SHIFT);
      if (res > 0) held_input_.append(buffers_ + static_cast<size_t>(bid) * buf_size_, static_cast<size_t>(res));
      RecycleBuffer(bid);
    }
    if (res == 0 || (res < 0 && res != -ENOBUFS)) {
      held_eof_ = true;
    } else if (!conn->recv_armed) {
      conn->rearm_recv = true;
      rearm_.push_back(conn);
    }
    return;
  }
  if (cqe->flags & IORING_CQE_F_BUFFER) {
    const uint16_t bid = static_cast<uint16_t>(cqe->flags >> IORING_CQE_BUFFER_SHIFT);
    if (res > 0 && !conn->closing && !conn->input_done) {
      Process(conn, std::string_view(buffers_ + static_cast<size_t>(bid) * buf_size_, static_cast<size_t>(res)));
    }
    RecycleBuffer(bid);
  }
  if (conn->closing) {
    if (conn->inflight == 0) FinishClose(conn);
    return;
  }
  if (res == 0 || (res < 0 && res != -ENOBUFS)) {
    StartClose(conn);  // EOF or a socket error
    return;
  }
  if (!conn->recv_armed) {
    // The multishot receive ended: out of pool buffers (-ENOBUFS) or the
    // kernel chose to stop it. Re-arm once this turn's buffers are back.
    conn->rearm_recv = true;
    rearm_.push_back(conn);
  }
}

void IoThread::Process(Connection* conn, std::string_view data) {
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
  const int64_t limit = limits_.query_buffer_limit.load(std::memory_order_relaxed);
  if (!stop && static_cast<int64_t>(qbuf) > limit) {
    Log(3, absl::StrCat("Closing client that reached max query buffer length (id=", conn->id, ", qbuf=", qbuf, ")"));
    StartClose(conn);
    return;
  }
  conn->stat_qbuf.store(static_cast<uint32_t>(std::min<size_t>(qbuf, UINT32_MAX)), std::memory_order_relaxed);
  conn->stat_qbuf_cap.store(static_cast<uint32_t>(std::min<size_t>(qbuf_cap, UINT32_MAX)), std::memory_order_relaxed);
}

size_t IoThread::ParseAndDispatch(Connection* conn, RespParser& parser, std::string_view data, bool* stop) {
  ParserLimits limits{limits_.max_bulk_len.load(std::memory_order_relaxed),
                      conn->authenticated.load(std::memory_order_relaxed)};
  // Local connections parse a pipelined batch ahead (authenticated clients
  // only: AUTH inside a batch would change the limits of what follows) and
  // let the sink prefetch the data the commands will touch before the first
  // runs, so their cache misses overlap instead of queueing one by one.
  std::array<ParsedCommand, 16>& ahead = scratch_[scratch_level_].ahead;
  const bool execute_here = runs_main_loop();
  const size_t max_ahead = (execute_here && limits.authenticated) ? ahead.size() : 1;
  CommandBatch* batch = nullptr;
  size_t pos = 0;
  bool more = true;
  while (more && pos < data.size()) {
    size_t n = 0;
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
      if (r == RespParser::Result::kCommand) ++n;
    }
    if (execute_here) {
      if (n > 1) {
        for (size_t i = 0; i < n; ++i) sink_->Prefetch(conn, ahead[i].argv, 0);
        for (size_t i = 0; i < n; ++i) sink_->Prefetch(conn, ahead[i].argv, 1);
      }
      for (size_t i = 0; i < n; ++i) {
        sink_->OnCommand(conn, ahead[i].argv);
        if (conn->main_closed) {  // QUIT, CLIENT KILL of itself, ...
          *stop = true;
          return data.size();
        }
      }
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

void IoThread::OnSend(Connection* conn, int res) {
  if (!multi_sends_.empty()) multi_sends_.erase(conn->slot);
  if (conn->closing) {
    if (conn->inflight == 0) FinishClose(conn);
    return;
  }
  if (res < 0) {
    if (res == -EAGAIN || res == -EINTR) {
      MarkPending(conn);
      return;
    }
    StartClose(conn);
    return;
  }
  conn->out.Consume(static_cast<size_t>(res));
  conn->stat_obuf.store(conn->out.size(), std::memory_order_relaxed);
  if (!conn->out.empty()) {
    MarkPending(conn);  // a short send or more chunks: continue next flush
  } else if (conn->close_after_flush) {
    StartClose(conn);
  }
}

void IoThread::Flush(Connection* keep) {
  size_t kept = 0;
  for (size_t i = 0; i < pending_.size(); ++i) {
    Connection* conn = pending_[i];
    if (conn == keep) {
      pending_[kept++] = conn;
      continue;
    }
    conn->send_pending = false;
    if (conn->closing || conn->send_inflight) continue;
    if (conn->out.empty()) {
      if (conn->close_after_flush) StartClose(conn);
      continue;
    }
    io_uring_sqe* sqe = GetSqe();
    if (conn->out.MultiLink()) {
      // One vectored send for several chunks, instead of a completion and
      // a loop turn per 16 KiB chunk.
      std::unique_ptr<MultiSend>& ms = multi_sends_[conn->slot];
      if (ms == nullptr) ms = std::make_unique<MultiSend>();
      ms->msg = msghdr{};
      ms->msg.msg_iov = ms->iov;
      ms->msg.msg_iovlen = static_cast<size_t>(conn->out.Gather(ms->iov, MultiSend::kMaxIov));
      io_uring_prep_sendmsg(sqe, conn->fd, &ms->msg, MSG_NOSIGNAL);
    } else {
      std::string_view front = conn->out.Front();
      io_uring_prep_send(sqe, conn->fd, front.data(), front.size(), MSG_NOSIGNAL);
    }
    io_uring_sqe_set_data64(sqe, Tag(Op::kSend, generations_[conn->slot], conn->slot));
    conn->send_inflight = true;
    ++conn->inflight;
  }
  pending_.resize(kept);
}

bool IoThread::InputWaiting() {
  unsigned head;
  io_uring_cqe* cqe;
  io_uring_for_each_cqe(&ring_, head, cqe) {
    if (static_cast<Op>(cqe->user_data >> 56) != Op::kSend) return true;
  }
  return false;
}

void IoThread::ReleaseFanout() {
  // Send this turn's replies and let input that arrived meanwhile post its
  // completions: if some is waiting, the held connections can take what the
  // next turn publishes too.
  io_uring_submit_and_get_events(&ring_);
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

void IoThread::DrainMailbox() {
  mailbox_.Drain(&mailbox_scratch_);
  for (ToIo& m : mailbox_scratch_) {
    switch (m.kind) {
      case ToIo::Kind::kAdopt:
        Adopt(m.conn);
        break;
      case ToIo::Kind::kReply: {
        auto it = live_.find(m.id);
        if (it == live_.end()) break;  // closed meanwhile; the chunks go with m
        Connection* conn = it->second;
        conn->out.Splice(m.out);
        conn->stat_obuf.store(conn->out.size(), std::memory_order_relaxed);
        MarkPending(conn);
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
  if (!input.empty() && !conn->closing && !conn->input_done) Process(conn, input);
  if (eof && !conn->closing) StartClose(conn);
}

void IoThread::Loop() {
  while (true) {
    // Input that arrived while a command of its connection ran long comes
    // first: it is older than anything this turn reaps.
    if (held_conn_ != nullptr) ResumeHeldInput();
    // The main loop's duties are virtual calls, a few per turn (never per
    // command): MainLoopHooks.
    if (runs_main_loop()) {
      main_->BeforeFlush();
    } else {
      DrainMailbox();
      if (!to_main_.empty()) main_inbox_.PostAll(to_main_);
    }
    Flush();
    RearmAndRecycle();
    if (runs_main_loop()) main_->AfterFlush();
    if (stop_.load(std::memory_order_relaxed)) break;
    // Held fan-out stays held only while completions are already waiting,
    // so the wait below returns at once and the next turn checks again: it
    // needs no deadline of its own.
    if (!fanout_.empty()) ReleaseFanout();

    int ret;
    io_uring_cqe* cqe = nullptr;
    if (runs_main_loop()) {
      // This turn may have set a nearer timer (a command that blocked).
      const int wait_ms = main_->WaitMs();
      __kernel_timespec ts{wait_ms / 1000, static_cast<long long>(wait_ms % 1000) * 1000000};
      ret = io_uring_submit_and_wait_timeout(&ring_, &cqe, 1, &ts, nullptr);
    } else {
      ret = io_uring_submit_and_wait(&ring_, 1);
    }
    if (ret < 0 && ret != -ETIME && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY) {
      Log(3, absl::StrCat("io_uring_enter failed: ", std::strerror(-ret)));
    }
    ReapCompletions();
  }
}

void IoThread::ReapCompletions() {
  // The batch and the position in it are members: a turn while busy, run
  // from inside one of these handlers, continues with the rest of the batch
  // (a client waiting there must be answered too) before reaping more.
  while (true) {
    if (reaped_pos_ == reaped_count_) {
      io_uring_cqe* ready[kReapBatch];
      const unsigned n = io_uring_peek_batch_cqe(&ring_, ready, kReapBatch);
      if (n == 0) return;
      for (unsigned i = 0; i < n; ++i) reaped_[i] = *ready[i];
      io_uring_cq_advance(&ring_, n);
      reaped_pos_ = 0;
      reaped_count_ = n;
    }
    io_uring_cqe cqe = reaped_[reaped_pos_++];
    HandleCompletion(&cqe);
  }
}

void IoThread::RearmAndRecycle() {
  for (Connection* conn : rearm_) {
    conn->rearm_recv = false;
    if (!conn->closing && !conn->recv_armed) ArmRecv(conn);
  }
  rearm_.clear();
  if (recycled_ > 0) {
    io_uring_buf_ring_advance(buf_ring_, static_cast<int>(recycled_));
    recycled_ = 0;
  }
}

void IoThread::TurnWhileBusy(Connection* busy) {
  // Not nested: a command delivered by this turn that runs long itself
  // (BeforeBusyTurn delivers commands) gets no turn of its own.
  if (in_busy_turn_) return;
  in_busy_turn_ = true;
  main_->BeforeBusyTurn(busy);
  scratch_level_ = 1;
  busy_ = busy;
  if (busy != nullptr && busy->thread == index_) held_conn_ = busy;
  Flush(busy);
  // Submits and runs deferred task work (the ring may defer completions to
  // the next wait): what finished meanwhile is reaped now, without waiting.
  io_uring_submit_and_get_events(&ring_);
  ReapCompletions();
  Flush(busy);
  RearmAndRecycle();
  io_uring_submit(&ring_);
  busy_ = nullptr;
  scratch_level_ = 0;
  main_->AfterBusyTurn(busy);
  in_busy_turn_ = false;
}

}  // namespace ringkv::io
