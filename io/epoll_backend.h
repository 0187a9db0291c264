// EpollBackend: IoBackend over epoll (level-triggered) and non-blocking
// sockets, for hosts where io_uring is refused (a container's seccomp
// profile, kernel.io_uring_disabled), too old, or not wanted
// (`io-backend epoll`).
//
// Readiness is turned into io_uring-shaped completions when it is collected
// (Wait / Poll): a readable connection is read once into a pool buffer, a
// readable listener accepted until EAGAIN. A send is tried at once; only
// when the socket is full does it wait for EPOLLOUT, and it then completes
// with -EAGAIN so IoThread sends again from where its buffer stands. An
// fdatasync runs on a worker thread of the backend and completes through an
// eventfd in the interest set.
#pragma once

#include <sys/epoll.h>

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "io/io_backend.h"

namespace ringkv::io {

class EpollBackend final : public IoBackend {
 public:
  EpollBackend() = default;
  ~EpollBackend() override;
  EpollBackend(const EpollBackend&) = delete;
  EpollBackend& operator=(const EpollBackend&) = delete;

  absl::Status Init(int wake_fd) override;
  BackendKind kind() const override { return BackendKind::kEpoll; }
  void ArmAccept(int fd, uint64_t tag) override;
  void ArmRecv(int fd, uint64_t tag) override;
  void Send(int fd, const char* data, size_t len, uint64_t tag) override;
  void SendMsg(int fd, msghdr* msg, uint64_t tag) override;
  void ArmWake(uint64_t tag) override;
  void Fsync(int fd, uint64_t tag) override;
  void PollIn(int fd, uint64_t tag) override;
  void PollOut(int fd, uint64_t tag) override;
  void Forget(int fd) override;
  void CancelArmed(int fd) override;
  void CancelRecv(int fd, uint64_t recv_tag, uint64_t cancel_tag) override;
  char* Buffer(uint16_t bid) override { return buffers_ + static_cast<size_t>(bid) * kBufSize; }
  void RecycleBuffer(uint16_t bid) override { free_buffers_.push_back(bid); }
  void Recycled() override {}
  void Submit() override {}
  void Wait(int64_t timeout_us) override { Collect(ready_pos_ < ready_.size() ? 0 : timeout_us); }
  void Poll() override { Collect(0); }
  unsigned Take(Completion* out, unsigned max) override;
  bool InputWaiting(uint8_t send_op) override;

 private:
  static constexpr uint32_t kBufSize = 16 * 1024;  // as Redis's PROTO_IOBUF_LEN
  static constexpr uint32_t kBufCount = 256;
  enum class Kind : uint8_t { kNone, kListener, kConn, kWake, kPollIn, kPollOut, kFsyncDone };
  struct FdState {
    Kind kind = Kind::kNone;
    bool recv = false;       // receive armed: EPOLLIN
    bool send_wait = false;  // a send waits for room: EPOLLOUT
    bool registered = false;
    uint32_t events = 0;     // what the interest set holds
    uint64_t recv_tag = 0;   // also the listener's, the wake's, the poll's
    uint64_t send_tag = 0;
  };
  FdState& State(int fd);
  // Brings the interest set in line with fd's state.
  void Update(int fd);
  // epoll_pwait2 (epoll_wait where the kernel lacks it), then readiness
  // turned into completions.
  void Collect(int64_t timeout_us);
  int EpollWait(epoll_event* events, int max, int64_t timeout_us);
  void OnConnReady(int fd, uint32_t events);
  void OnListenerReady(int fd);
  void Push(uint64_t tag, int32_t res, uint32_t flags) { ready_.push_back(Completion{tag, res, flags}); }
  void FsyncWorker();

  int epfd_ = -1;
  // epoll_pwait2 answered ENOSYS (a kernel before 5.11) or EPERM (a seccomp
  // profile that predates it): waits are epoll_wait's, in whole ms rounded up.
  bool ms_waits_ = false;
  int wake_fd_ = -1;
  std::vector<FdState> fds_;  // by fd number
  std::vector<Completion> ready_;
  size_t ready_pos_ = 0;
  char* buffers_ = nullptr;
  std::vector<uint16_t> free_buffers_;

  // fdatasync worker: started at the first Fsync.
  int fsync_efd_ = -1;
  std::thread fsync_thread_;
  std::mutex fsync_mu_;
  std::condition_variable fsync_cv_;
  std::vector<std::pair<int, uint64_t>> fsync_queue_;  // guarded by fsync_mu_
  std::vector<Completion> fsync_done_;                 // guarded by fsync_mu_
  bool fsync_stop_ = false;                            // guarded by fsync_mu_
};

}  // namespace ringkv::io
