#include "io/epoll_backend.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "io/fork_gate.h"
#include "io/io_log.h"

namespace ringkv::io {

EpollBackend::~EpollBackend() {
  if (fsync_thread_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(fsync_mu_);
      fsync_stop_ = true;
    }
    fsync_cv_.notify_one();
    fsync_thread_.join();
  }
  if (fsync_efd_ >= 0) close(fsync_efd_);
  if (epfd_ >= 0) close(epfd_);
  if (buffers_ != nullptr) munmap(buffers_, static_cast<size_t>(kBufCount) * kBufSize);
}

absl::Status EpollBackend::Init(int wake_fd) {
  wake_fd_ = wake_fd;
  epfd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epfd_ < 0) return absl::InternalError(absl::StrCat("epoll_create1: ", std::strerror(errno)));
  void* b = mmap(nullptr, static_cast<size_t>(kBufCount) * kBufSize, PROT_READ | PROT_WRITE,
                 MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
  if (b == MAP_FAILED) return absl::ResourceExhaustedError("cannot map receive buffers");
  buffers_ = static_cast<char*>(b);
  free_buffers_.reserve(kBufCount);
  for (uint32_t i = kBufCount; i > 0; --i) free_buffers_.push_back(static_cast<uint16_t>(i - 1));
  ready_.reserve(256);
  return absl::OkStatus();
}

EpollBackend::FdState& EpollBackend::State(int fd) {
  if (static_cast<size_t>(fd) >= fds_.size()) fds_.resize(static_cast<size_t>(fd) + 64);
  return fds_[static_cast<size_t>(fd)];
}

void EpollBackend::Update(int fd) {
  FdState& st = State(fd);
  uint32_t want = 0;
  switch (st.kind) {
    case Kind::kConn:
      want = (st.recv ? EPOLLIN : 0u) | (st.send_wait ? EPOLLOUT : 0u);
      break;
    case Kind::kNone:
      break;
    case Kind::kPollIn:
      want = EPOLLIN | EPOLLONESHOT;
      break;
    case Kind::kPollOut:
      want = EPOLLOUT | EPOLLONESHOT;
      break;
    default:
      want = EPOLLIN;
      break;
  }
  if (st.registered && want == st.events) return;
  epoll_event ev{};
  ev.events = want;
  ev.data.fd = fd;
  int op = st.registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
  int ret = epoll_ctl(epfd_, op, fd, &ev);
  // The interest set forgets a file when it is closed: a number reused since
  // may look registered, or a new one look unregistered after a dup.
  if (ret < 0 && errno == ENOENT) ret = epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev);
  if (ret < 0 && errno == EEXIST) ret = epoll_ctl(epfd_, EPOLL_CTL_MOD, fd, &ev);
  if (ret < 0) {
    Log(3, absl::StrCat("epoll_ctl(fd ", fd, "): ", std::strerror(errno)));
    return;
  }
  st.registered = true;
  st.events = want;
}

void EpollBackend::Forget(int fd) {
  FdState& st = State(fd);
  if (st.registered) epoll_ctl(epfd_, EPOLL_CTL_DEL, fd, nullptr);
  st = FdState{};
}

void EpollBackend::CancelArmed(int fd) {
  FdState& st = State(fd);
  if (st.kind == Kind::kPollIn || st.kind == Kind::kPollOut) {
    const uint64_t tag = st.recv_tag;
    Forget(fd);
    Push(tag, -ECANCELED, 0);
    return;
  }
  if (st.kind != Kind::kConn) return;
  if (st.recv) Push(st.recv_tag, -ECANCELED, 0);
  if (st.send_wait) Push(st.send_tag, -ECANCELED, 0);
  st.recv = false;
  st.send_wait = false;
  Update(fd);
}

// Ends the operation armed on fd with `tag`, as io_uring's cancel by
// user_data does: the receive (-ECANCELED), or a send waiting for room
// (-ECANCELED: nothing of it was sent; IoThread sends it again elsewhere).
void EpollBackend::CancelRecv(int fd, uint64_t tag, uint64_t) {
  FdState& st = State(fd);
  if (st.kind != Kind::kConn) return;
  if (st.recv && st.recv_tag == tag) {
    Push(st.recv_tag, -ECANCELED, 0);
    st.recv = false;
  } else if (st.send_wait && st.send_tag == tag) {
    Push(st.send_tag, -ECANCELED, 0);
    st.send_wait = false;
  } else {
    return;
  }
  Update(fd);
}

void EpollBackend::ArmWake(uint64_t tag) {
  FdState& st = State(wake_fd_);
  st.kind = Kind::kWake;
  st.recv_tag = tag;
  Update(wake_fd_);
}

void EpollBackend::ArmAccept(int fd, uint64_t tag) {
  // Accepted until EAGAIN: the listener must not block.
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  FdState& st = State(fd);
  st = FdState{.kind = Kind::kListener, .recv_tag = tag};  // a new file: ADD (EEXIST: MOD)
  Update(fd);
}

void EpollBackend::ArmRecv(int fd, uint64_t tag) {
  FdState& st = State(fd);
  if (st.kind != Kind::kConn) {
    st = FdState{.kind = Kind::kConn};
  }
  st.recv = true;
  st.recv_tag = tag;
  Update(fd);
}

void EpollBackend::PollIn(int fd, uint64_t tag) {
  FdState& st = State(fd);
  st = FdState{.kind = Kind::kPollIn, .recv_tag = tag};
  Update(fd);
}

void EpollBackend::PollOut(int fd, uint64_t tag) {
  FdState& st = State(fd);
  st = FdState{.kind = Kind::kPollOut, .recv_tag = tag};
  Update(fd);
}

void EpollBackend::Send(int fd, const char* data, size_t len, uint64_t tag) {
  iovec iov{const_cast<char*>(data), len};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  SendMsg(fd, &msg, tag);
}

void EpollBackend::SendMsg(int fd, msghdr* msg, uint64_t tag) {
  const ssize_t n = sendmsg(fd, msg, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
    Push(tag, n >= 0 ? static_cast<int32_t>(n) : -errno, 0);
    return;
  }
  FdState& st = State(fd);
  st.send_wait = true;
  st.send_tag = tag;
  Update(fd);
}

void EpollBackend::Fsync(int fd, uint64_t tag) {
  if (!fsync_thread_.joinable()) {
    fsync_efd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (fsync_efd_ < 0) {  // no worker: the main thread waits for the disk
      Push(tag, fdatasync(fd) == 0 ? 0 : -errno, 0);
      return;
    }
    FdState& st = State(fsync_efd_);
    st.kind = Kind::kFsyncDone;
    Update(fsync_efd_);
    // Registered before the fork that often follows (a BGREWRITEAOF's first
    // fsync starts it): io/fork_gate.h.
    fsync_thread_ = ForkGate::StartHelperThread([this] { FsyncWorker(); });
  }
  {
    std::lock_guard<std::mutex> lock(fsync_mu_);
    fsync_queue_.emplace_back(fd, tag);
  }
  fsync_cv_.notify_one();
}

void EpollBackend::FsyncWorker() {
  // A ForkGate helper (StartHelperThread): its completions' vector grows.
  std::unique_lock<std::mutex> lock(fsync_mu_);
  while (true) {
    fsync_cv_.wait(lock, [this] { return fsync_stop_ || !fsync_queue_.empty(); });
    if (fsync_queue_.empty()) return;  // stopping
    auto [fd, tag] = fsync_queue_.front();
    fsync_queue_.erase(fsync_queue_.begin());
    lock.unlock();
    const int res = fdatasync(fd) == 0 ? 0 : -errno;
    lock.lock();
    fsync_done_.push_back(Completion{tag, res, 0});
    uint64_t one = 1;
    ssize_t w = write(fsync_efd_, &one, sizeof(one));
    (void)w;
  }
}

int EpollBackend::EpollWait(epoll_event* events, int max, int64_t timeout_us) {
  if (!ms_waits_) {
    timespec ts{static_cast<time_t>(timeout_us / 1000000), static_cast<long>(timeout_us % 1000000) * 1000};
    const int n = epoll_pwait2(epfd_, events, max, timeout_us < 0 ? nullptr : &ts, nullptr);
    if (n >= 0 || (errno != ENOSYS && errno != EPERM)) return n;
    ms_waits_ = true;
    Log(3, absl::StrCat("epoll_pwait2 unavailable (", std::strerror(errno),
                        "): timers wait in whole milliseconds (epoll_wait)"));
  }
  const int64_t ms = timeout_us < 0 ? -1 : std::min<int64_t>((timeout_us + 999) / 1000, INT32_MAX);
  return epoll_wait(epfd_, events, max, static_cast<int>(ms));
}

void EpollBackend::Collect(int64_t timeout_us) {
  if (ready_pos_ == ready_.size()) {
    ready_.clear();
    ready_pos_ = 0;
  }
  epoll_event events[64];
  const int n = EpollWait(events, 64, timeout_us);
  if (n < 0 && errno != EINTR) Log(3, absl::StrCat("epoll_wait failed: ", std::strerror(errno)));
  for (int i = 0; i < n; ++i) {
    const int fd = events[i].data.fd;
    FdState& st = State(fd);
    switch (st.kind) {
      case Kind::kConn:
        OnConnReady(fd, events[i].events);
        break;
      case Kind::kListener:
        OnListenerReady(fd);
        break;
      case Kind::kWake: {
        uint64_t v;
        ssize_t r = read(fd, &v, sizeof(v));
        (void)r;
        Push(st.recv_tag, sizeof(v), 0);
        break;
      }
      case Kind::kPollIn:
      case Kind::kPollOut: {
        const uint64_t tag = st.recv_tag;
        Forget(fd);
        Push(tag, static_cast<int32_t>(events[i].events & (EPOLLIN | EPOLLOUT | EPOLLERR | EPOLLHUP)), 0);
        break;
      }
      case Kind::kFsyncDone: {
        uint64_t v;
        ssize_t r = read(fd, &v, sizeof(v));
        (void)r;
        std::lock_guard<std::mutex> lock(fsync_mu_);
        for (const Completion& c : fsync_done_) ready_.push_back(c);
        fsync_done_.clear();
        break;
      }
      case Kind::kNone:
        break;
    }
  }
}

void EpollBackend::OnListenerReady(int fd) {
  const uint64_t tag = State(fd).recv_tag;
  for (int i = 0; i < 64; ++i) {  // the rest at the next collection (level-triggered)
    const int c = accept4(fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (c >= 0) {
      Push(tag, c, kCompletionMore);
      continue;
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) Push(tag, -errno, kCompletionMore);
    return;
  }
}

void EpollBackend::OnConnReady(int fd, uint32_t events) {
  FdState& st = State(fd);
  const uint32_t trouble = EPOLLERR | EPOLLHUP;
  bool changed = false;
  if (st.send_wait && (events & (EPOLLOUT | trouble))) {
    st.send_wait = false;
    changed = true;
    Push(st.send_tag, -EAGAIN, 0);  // IoThread sends again
  }
  if (st.recv && (events & (EPOLLIN | EPOLLRDHUP | trouble)) && !free_buffers_.empty()) {
    const uint16_t bid = free_buffers_.back();
    const ssize_t n = recv(fd, Buffer(bid), kBufSize, MSG_DONTWAIT);
    if (n > 0) {
      free_buffers_.pop_back();
      Push(st.recv_tag, static_cast<int32_t>(n),
           kCompletionMore | kCompletionBuffer | (static_cast<uint32_t>(bid) << kCompletionBufferShift));
    } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      Push(st.recv_tag, n == 0 ? 0 : -errno, 0);  // the receive ends: EOF or an error
      st.recv = false;
      changed = true;
    }
  }
  if (changed) Update(fd);
}

unsigned EpollBackend::Take(Completion* out, unsigned max) {
  unsigned n = 0;
  while (n < max && ready_pos_ < ready_.size()) out[n++] = ready_[ready_pos_++];
  return n;
}

bool EpollBackend::InputWaiting(uint8_t send_op) {
  for (size_t i = ready_pos_; i < ready_.size(); ++i) {
    if (static_cast<uint8_t>(ready_[i].tag >> 56) != send_op) return true;
  }
  return false;
}

}  // namespace ringkv::io
