#include "io/uring_backend.h"

#include <errno.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>

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
constexpr unsigned kRingFlags = IORING_SETUP_CQSIZE | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
// The fixed-file table's size bound: a slot per descriptor number below it
// (8 bytes of kernel memory each). Above it, sockets go by descriptor.
constexpr unsigned kMaxFixedFiles = 1u << 16;

static_assert(kCompletionMore == IORING_CQE_F_MORE && kCompletionBuffer == IORING_CQE_F_BUFFER &&
              kCompletionBufferShift == IORING_CQE_BUFFER_SHIFT);
static_assert(sizeof(Completion) == sizeof(io_uring_cqe));

std::string RingSetupError(int err) {
  switch (err) {
    case EPERM: {
      std::ifstream sysctl("/proc/sys/kernel/io_uring_disabled");
      int disabled = 0;
      if (sysctl >> disabled && disabled != 0) {
        return absl::StrCat("io_uring is disabled by sysctl kernel.io_uring_disabled=", disabled,
                            " (to use it: sysctl -w kernel.io_uring_disabled=0)");
      }
      return "io_uring_setup is refused (EPERM): a seccomp profile blocks it, as Docker's and containerd's "
             "default ones do (to use it: a profile that allows io_uring_setup/io_uring_enter/io_uring_register)";
    }
    case ENOSYS:
      return "io_uring_setup is not implemented (ENOSYS): the kernel lacks io_uring or a seccomp filter "
             "blocks it";
    case ENOMEM:
      return "io_uring could not lock memory for its rings (ENOMEM: RLIMIT_MEMLOCK too low; raise it with "
             "`ulimit -l unlimited` or LimitMEMLOCK=infinity)";
    case EINVAL:
      return "io_uring lacks IORING_SETUP_DEFER_TASKRUN (EINVAL): Linux 6.1 or newer is needed";
    default:
      return absl::StrCat("io_uring_setup failed: ", std::strerror(err));
  }
}

// Maps and registers a provided-buffer ring of `count` buffers of `size`
// bytes as group 0; the caller unmaps.
int RegisterBufRing(io_uring* ring, uint32_t count, io_uring_buf_ring** out) {
  void* r = mmap(nullptr, count * sizeof(io_uring_buf), PROT_READ | PROT_WRITE,
                 MAP_ANONYMOUS | MAP_PRIVATE | MAP_POPULATE, -1, 0);
  if (r == MAP_FAILED) return -ENOMEM;
  *out = static_cast<io_uring_buf_ring*>(r);
  io_uring_buf_reg reg{};
  reg.ring_addr = reinterpret_cast<uint64_t>(r);
  reg.ring_entries = count;
  reg.bgid = 0;
  return io_uring_register_buf_ring(ring, &reg, 0);
}

}  // namespace

absl::Status ProbeIoUring() {
  io_uring ring{};
  io_uring_params p{};
  p.flags = kRingFlags;
  p.cq_entries = 16;
  int ret = io_uring_queue_init_params(8, &ring, &p);
  if (ret < 0) return absl::FailedPreconditionError(RingSetupError(-ret));
  absl::Status status;
  io_uring_buf_ring* br = nullptr;
  char buf[2][64];
  int sv[2] = {-1, -1};
  ret = RegisterBufRing(&ring, 2, &br);
  if (ret < 0) {
    status = absl::FailedPreconditionError(absl::StrCat("io_uring provided buffer rings are not supported (",
                                                        std::strerror(-ret), "): Linux 5.19 or newer is needed"));
  } else if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    status = absl::InternalError(absl::StrCat("socketpair: ", std::strerror(errno)));
  } else {
    io_uring_buf_ring_init(br);
    for (int i = 0; i < 2; ++i) {
      io_uring_buf_ring_add(br, buf[i], sizeof(buf[i]), static_cast<uint16_t>(i), io_uring_buf_ring_mask(2), i);
    }
    io_uring_buf_ring_advance(br, 2);
    io_uring_sqe* sqe = io_uring_get_sqe(&ring);
    io_uring_prep_recv_multishot(sqe, sv[0], nullptr, 0, 0);
    sqe->flags |= IOSQE_BUFFER_SELECT;
    sqe->buf_group = 0;
    ssize_t w = write(sv[1], "x", 1);
    (void)w;
    io_uring_cqe* cqe = nullptr;
    ret = io_uring_submit_and_wait(&ring, 1);
    if (ret >= 0) ret = io_uring_peek_cqe(&ring, &cqe);
    if (ret < 0 || cqe == nullptr) {
      status = absl::InternalError(absl::StrCat("io_uring probe: ", std::strerror(-ret)));
    } else if (cqe->res < 0 || !(cqe->flags & IORING_CQE_F_MORE)) {
      status = absl::FailedPreconditionError(
          absl::StrCat("io_uring lacks multishot receive (",
                       cqe->res < 0 ? std::strerror(-cqe->res) : "the receive is not kept armed",
                       "): Linux 6.0 or newer is needed"));
    }
  }
  io_uring_queue_exit(&ring);  // cancels the armed receive
  if (sv[0] >= 0) close(sv[0]);
  if (sv[1] >= 0) close(sv[1]);
  if (br != nullptr) munmap(br, 2 * sizeof(io_uring_buf));
  return status;
}

UringBackend::~UringBackend() {
  if (ring_ready_) io_uring_queue_exit(&ring_);
  if (buffers_ != nullptr) munmap(buffers_, static_cast<size_t>(buf_count_) * buf_size_);
  if (buf_ring_ != nullptr) munmap(buf_ring_, buf_count_ * sizeof(io_uring_buf));
}

absl::Status UringBackend::Init(int wake_fd) {
  wake_fd_ = wake_fd;
  io_uring_params p{};
  p.flags = kRingFlags;
  p.cq_entries = kCqEntries;
  int ret = io_uring_queue_init_params(kSqEntries, &ring_, &p);
  if (ret < 0) return absl::FailedPreconditionError(RingSetupError(-ret));
  ring_ready_ = true;
  buf_count_ = kRecvBufCount;
  buf_size_ = kRecvBufSize;
  ret = RegisterBufRing(&ring_, buf_count_, &buf_ring_);
  if (ret == -ENOMEM) return absl::ResourceExhaustedError("cannot map receive buffers");
  void* b = mmap(nullptr, static_cast<size_t>(buf_count_) * buf_size_, PROT_READ | PROT_WRITE,
                 MAP_ANONYMOUS | MAP_PRIVATE | MAP_POPULATE, -1, 0);
  if (b == MAP_FAILED) return absl::ResourceExhaustedError("cannot map receive buffers");
  buffers_ = static_cast<char*>(b);
  if (ret < 0) {
    return absl::FailedPreconditionError(absl::StrCat("io_uring provided buffer rings are not supported (",
                                                      std::strerror(-ret), "): Linux 5.19 or newer is needed"));
  }
  io_uring_buf_ring_init(buf_ring_);
  const int mask = io_uring_buf_ring_mask(buf_count_);
  for (uint32_t i = 0; i < buf_count_; ++i) {
    io_uring_buf_ring_add(buf_ring_, Buffer(static_cast<uint16_t>(i)), buf_size_, static_cast<uint16_t>(i), mask,
                          static_cast<int>(i));
  }
  io_uring_buf_ring_advance(buf_ring_, static_cast<int>(buf_count_));
  // A sparse fixed-file table, indexed by descriptor number: without one
  // (an old kernel, a low descriptor limit) every socket goes by descriptor.
  rlimit nofile{};
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0) {
    const auto n = static_cast<unsigned>(std::min<rlim_t>(nofile.rlim_cur, kMaxFixedFiles));
    if (n > 0 && io_uring_register_files_sparse(&ring_, n) == 0) fixed_.assign(n, false);
  }
  return absl::OkStatus();
}

bool UringBackend::FixFile(int fd) {
  if (fd < 0 || static_cast<size_t>(fd) >= fixed_.size()) return false;
  if (fixed_[fd]) return true;
  // One io_uring_register per connection, against an fget and fput per send.
  if (io_uring_register_files_update(&ring_, static_cast<unsigned>(fd), &fd, 1) != 1) return false;
  fixed_[fd] = true;
  return true;
}

void UringBackend::Forget(int fd) {
  if (fd < 0 || static_cast<size_t>(fd) >= fixed_.size() || !fixed_[fd]) return;
  // The table holds its own reference: the socket closes only once its slot
  // is emptied, so before the descriptor is closed or handed to another
  // thread (requests in flight keep what they use until they complete).
  int none = -1;
  io_uring_register_files_update(&ring_, static_cast<unsigned>(fd), &none, 1);
  fixed_[fd] = false;
}

io_uring_sqe* UringBackend::GetSqe() {
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  while (sqe == nullptr) {
    // Full submission queue: submit what is there and try again.
    io_uring_submit(&ring_);
    sqe = io_uring_get_sqe(&ring_);
  }
  return sqe;
}

void UringBackend::ArmWake(uint64_t tag) {
  io_uring_sqe* sqe = GetSqe();
  io_uring_prep_read(sqe, wake_fd_, &wake_value_, sizeof(wake_value_), 0);
  io_uring_sqe_set_data64(sqe, tag);
}

void UringBackend::ArmAccept(int fd, uint64_t tag) {
  io_uring_sqe* sqe = GetSqe();
  io_uring_prep_multishot_accept(sqe, fd, nullptr, nullptr, SOCK_CLOEXEC);
  io_uring_sqe_set_data64(sqe, tag);
}

void UringBackend::ArmRecv(int fd, uint64_t tag) {
  const bool fixed = FixFile(fd);
  io_uring_sqe* sqe = GetSqe();
  io_uring_prep_recv_multishot(sqe, fd, nullptr, 0, 0);
  sqe->flags |= IOSQE_BUFFER_SELECT | (fixed ? IOSQE_FIXED_FILE : 0);
  sqe->buf_group = 0;
  io_uring_sqe_set_data64(sqe, tag);
}

void UringBackend::Send(int fd, const char* data, size_t len, uint64_t tag) {
  io_uring_sqe* sqe = GetSqe();
  io_uring_prep_send(sqe, fd, data, len, MSG_NOSIGNAL);
  if (IsFixed(fd)) sqe->flags |= IOSQE_FIXED_FILE;
  io_uring_sqe_set_data64(sqe, tag);
}

void UringBackend::SendMsg(int fd, msghdr* msg, uint64_t tag) {
  io_uring_sqe* sqe = GetSqe();
  io_uring_prep_sendmsg(sqe, fd, msg, MSG_NOSIGNAL);
  if (IsFixed(fd)) sqe->flags |= IOSQE_FIXED_FILE;
  io_uring_sqe_set_data64(sqe, tag);
}

void UringBackend::CancelRecv(int, uint64_t recv_tag, uint64_t cancel_tag) {
  io_uring_sqe* sqe = GetSqe();
  io_uring_prep_cancel64(sqe, recv_tag, 0);
  io_uring_sqe_set_data64(sqe, cancel_tag);
}

void UringBackend::PollIn(int fd, uint64_t tag) {
  io_uring_sqe* sqe = GetSqe();
  io_uring_prep_poll_add(sqe, fd, POLLIN);
  io_uring_sqe_set_data64(sqe, tag);
}

void UringBackend::PollOut(int fd, uint64_t tag) {
  io_uring_sqe* sqe = GetSqe();
  io_uring_prep_poll_add(sqe, fd, POLLOUT);
  io_uring_sqe_set_data64(sqe, tag);
}

void UringBackend::Fsync(int fd, uint64_t tag) {
  io_uring_sqe* sqe = GetSqe();
  io_uring_prep_fsync(sqe, fd, IORING_FSYNC_DATASYNC);
  io_uring_sqe_set_flags(sqe, IOSQE_ASYNC);  // it blocks: straight to a kernel worker
  io_uring_sqe_set_data64(sqe, tag);
}

namespace {
__kernel_timespec SteadyTimespec(int64_t us) {
  return __kernel_timespec{us / 1000000, static_cast<long long>(us % 1000000) * 1000};
}
}  // namespace

bool UringBackend::ArmTimer(int64_t deadline_us, uint64_t tag) {
  timer_ts_ = SteadyTimespec(deadline_us);
  io_uring_sqe* sqe = GetSqe();
  // count 0: a pure timer, completed by its time alone, never by other
  // completions.
  io_uring_prep_timeout(sqe, &timer_ts_, 0, IORING_TIMEOUT_ABS);
  io_uring_sqe_set_data64(sqe, tag);
  return true;
}

void UringBackend::MoveTimer(int64_t deadline_us, uint64_t timer_tag, uint64_t move_tag) {
  move_ts_ = SteadyTimespec(deadline_us);
  io_uring_sqe* sqe = GetSqe();
  io_uring_prep_timeout_update(sqe, &move_ts_, timer_tag, IORING_TIMEOUT_ABS);
  io_uring_sqe_set_data64(sqe, move_tag);
}

void UringBackend::RecycleBuffer(uint16_t bid) {
  io_uring_buf_ring_add(buf_ring_, Buffer(bid), buf_size_, bid, io_uring_buf_ring_mask(buf_count_),
                        static_cast<int>(recycled_));
  ++recycled_;
}

void UringBackend::Recycled() {
  if (recycled_ > 0) {
    io_uring_buf_ring_advance(buf_ring_, static_cast<int>(recycled_));
    recycled_ = 0;
  }
}

void UringBackend::Wait(int64_t timeout_us) {
  int ret;
  if (timeout_us >= 0) {
    // IORING_FEAT_EXT_ARG (5.11; the DEFER_TASKRUN the probe requires means
    // 6.1): the timeout rides on the wait's io_uring_enter as an hrtimer,
    // no timeout SQE to queue.
    io_uring_cqe* cqe = nullptr;
    __kernel_timespec ts{timeout_us / 1000000, static_cast<long long>(timeout_us % 1000000) * 1000};
    ret = io_uring_submit_and_wait_timeout(&ring_, &cqe, 1, &ts, nullptr);
  } else {
    ret = io_uring_submit_and_wait(&ring_, 1);
  }
  if (ret < 0 && ret != -ETIME && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY) {
    Log(3, absl::StrCat("io_uring_enter failed: ", std::strerror(-ret)));
  }
}

unsigned UringBackend::Take(Completion* out, unsigned max) {
  io_uring_cqe* ready[64];
  const unsigned n = io_uring_peek_batch_cqe(&ring_, ready, std::min<unsigned>(max, 64));
  for (unsigned i = 0; i < n; ++i) std::memcpy(&out[i], ready[i], sizeof(Completion));
  io_uring_cq_advance(&ring_, n);
  return n;
}

bool UringBackend::InputWaiting(uint8_t send_op) {
  unsigned head;
  io_uring_cqe* cqe;
  io_uring_for_each_cqe(&ring_, head, cqe) {
    if (static_cast<uint8_t>(cqe->user_data >> 56) != send_op) return true;
  }
  return false;
}

}  // namespace ringkv::io
