// UringBackend: IoBackend over one io_uring with a provided-buffer ring for
// receives (idle connections hold no read buffer: data lands in a shared pool
// buffer, is parsed, and the buffer is handed straight back). Set up
// SINGLE_ISSUER | DEFER_TASKRUN: only the owning thread submits and reaps.
// A socket's receives and sends go through the ring's fixed-file table (slot
// = descriptor number, filled at its first ArmRecv, emptied by Forget), so a
// send does not look its file up and take a reference each time.
#pragma once

#include <liburing.h>

#include <vector>

#include "io/io_backend.h"

namespace ringkv::io {

class UringBackend final : public IoBackend {
 public:
  UringBackend() = default;
  ~UringBackend() override;
  UringBackend(const UringBackend&) = delete;
  UringBackend& operator=(const UringBackend&) = delete;

  absl::Status Init(int wake_fd) override;
  BackendKind kind() const override { return BackendKind::kIoUring; }
  void ArmAccept(int fd, uint64_t tag) override;
  void ArmRecv(int fd, uint64_t tag) override;
  void Send(int fd, const char* data, size_t len, uint64_t tag) override;
  void SendMsg(int fd, msghdr* msg, uint64_t tag) override;
  void ArmWake(uint64_t tag) override;
  void Fsync(int fd, uint64_t tag) override;
  void PollIn(int fd, uint64_t tag) override;
  void PollOut(int fd, uint64_t tag) override;
  void Forget(int fd) override;
  void CancelRecv(int fd, uint64_t recv_tag, uint64_t cancel_tag) override;
  bool ArmTimer(int64_t deadline_us, uint64_t tag) override;
  void MoveTimer(int64_t deadline_us, uint64_t timer_tag, uint64_t move_tag) override;
  char* Buffer(uint16_t bid) override { return buffers_ + static_cast<size_t>(bid) * buf_size_; }
  void RecycleBuffer(uint16_t bid) override;
  void Recycled() override;
  void Submit() override { io_uring_submit(&ring_); }
  void Wait(int64_t timeout_us) override;
  void Poll() override { io_uring_submit_and_get_events(&ring_); }
  unsigned Take(Completion* out, unsigned max) override;
  bool InputWaiting(uint8_t send_op) override;

 private:
  io_uring_sqe* GetSqe();
  // Puts `fd` in the fixed-file table (if not there yet); false where it
  // cannot be (no table, a descriptor beyond it, the kernel refused).
  bool FixFile(int fd);
  bool IsFixed(int fd) const { return fd >= 0 && static_cast<size_t>(fd) < fixed_.size() && fixed_[fd]; }

  io_uring ring_{};
  bool ring_ready_ = false;
  // The kernel reads a timeout's time when the SQE is submitted, which may be
  // a turn after it was queued: each kind of SQE has its own. (Two moves in
  // one submission both read the later, nearer deadline: still right.)
  __kernel_timespec timer_ts_{};
  __kernel_timespec move_ts_{};
  int wake_fd_ = -1;
  uint64_t wake_value_ = 0;
  // Provided-buffer ring (buffer group 0).
  io_uring_buf_ring* buf_ring_ = nullptr;
  char* buffers_ = nullptr;
  uint32_t buf_count_ = 0;
  uint32_t buf_size_ = 0;
  uint32_t recycled_ = 0;  // buffers added since the last advance
  std::vector<bool> fixed_;  // per descriptor number: in the fixed-file table
};

}  // namespace ringkv::io
