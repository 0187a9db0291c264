// IoBackend: the kernel interface under one IoThread -- io_uring
// (io/uring_backend.h) or epoll with non-blocking sockets
// (io/epoll_backend.h). IoThread keeps every per-connection decision (parsing,
// flushing, closing, the slot table); a backend only starts operations and
// reports their ends as completions in io_uring's shape, so the logic above it
// exists once.
//
//   operation            io_uring                       epoll
//   -------------------  -----------------------------  --------------------------------
//   ArmAccept            multishot accept               listener in the interest set,
//                                                       accept4 until EAGAIN when ready
//   ArmRecv              multishot recv, buffer ring    EPOLLIN (level), one read per
//                                                       readiness into a pool buffer
//   Send / SendMsg       send / sendmsg                 send at once; EAGAIN: EPOLLOUT,
//                                                       then completes with -EAGAIN so
//                                                       the thread sends again
//   ArmWake              read of the eventfd            eventfd in the interest set
//   Fsync                fsync, IOSQE_ASYNC             a worker thread (fdatasync)
//   PollIn / PollOut     one-shot poll                  EPOLLONESHOT
//   CancelRecv           async cancel by user_data      EPOLLIN dropped, -ECANCELED
//   ArmTimer / MoveTimer timeout (absolute), update      none: Wait's own timeout serves
//
// A completion's `tag` is the user_data IoThread gave the operation (its
// layout is IoThread's); `flags` use io_uring's bits: kMore while a multishot
// operation stays armed, kBuffer with the pool buffer id in the upper 16 bits
// when a receive landed in one (returned with RecycleBuffer).
//
// Thread-safety: a backend belongs to its IoThread's thread; nothing in it is
// thread-safe.
#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace ringkv::io {

// io_uring's CQE layout, so the io_uring backend copies them as they are.
struct Completion {
  uint64_t tag;
  int32_t res;
  uint32_t flags;
};
inline constexpr uint32_t kCompletionMore = 1U << 1;    // IORING_CQE_F_MORE
inline constexpr uint32_t kCompletionBuffer = 1U << 0;  // IORING_CQE_F_BUFFER
inline constexpr unsigned kCompletionBufferShift = 16;  // IORING_CQE_BUFFER_SHIFT

enum class BackendKind : uint8_t { kIoUring, kEpoll };
inline const char* BackendName(BackendKind k) { return k == BackendKind::kIoUring ? "io_uring" : "epoll"; }

class IoBackend {
 public:
  virtual ~IoBackend() = default;
  // REQUIRES: on the thread that will use the backend. `wake_fd` is the
  // eventfd ArmWake watches.
  virtual absl::Status Init(int wake_fd) = 0;
  virtual BackendKind kind() const = 0;

  virtual void ArmAccept(int fd, uint64_t tag) = 0;
  virtual void ArmRecv(int fd, uint64_t tag) = 0;
  // `data` / `msg` stay valid and unchanged until the send completes.
  virtual void Send(int fd, const char* data, size_t len, uint64_t tag) = 0;
  virtual void SendMsg(int fd, msghdr* msg, uint64_t tag) = 0;
  virtual void ArmWake(uint64_t tag) = 0;
  virtual void Fsync(int fd, uint64_t tag) = 0;
  virtual void PollIn(int fd, uint64_t tag) = 0;
  // Completes once fd is writable (a socket's non-blocking connect ended),
  // with the poll mask (POLLERR / POLLHUP included) or -errno.
  virtual void PollOut(int fd, uint64_t tag) = 0;
  // A connection's fd is about to be closed: it has no operation left.
  virtual void Forget(int fd) = 0;
  // The connection's socket was just shut down: every operation still armed
  // on it must end. Each one's completion is made ready now where the
  // backend itself holds the operation (epoll: an armed receive ends with
  // -ECANCELED, a send waiting for room or a poll with -ECANCELED), so the close
  // finishes in the batch being reaped rather than after another wait for
  // readiness. io_uring: nothing to do, the kernel ends them on shutdown.
  virtual void CancelArmed(int fd) { (void)fd; }
  // Ends the one operation on fd tagged `recv_tag`: the receive (named for
  // it), or a send waiting for room. It completes with -ECANCELED (or with
  // what ended it first; a receive after the data it had received; a send
  // cancelled sent nothing). `cancel_tag`: the cancel's own completion.
  virtual void CancelRecv(int fd, uint64_t recv_tag, uint64_t cancel_tag) = 0;

  // One standing timer, so that a wait needs no timeout of its own: with a
  // timeout, every wait that sleeps arms and cancels a kernel timer
  // (docs/performance.md 41). ArmTimer starts it; it completes under `tag`
  // once the steady clock (CLOCK_MONOTONIC) reaches `deadline_us`, at once
  // when that has passed, with -ETIME (or -ECANCELED when the ring ends).
  // false: this backend has no such timer, and the loop passes its timeout
  // to Wait instead (epoll).
  virtual bool ArmTimer(int64_t deadline_us, uint64_t tag) {
    (void)deadline_us;
    (void)tag;
    return false;
  }
  // Moves the timer armed under `timer_tag` to `deadline_us`. The move
  // completes under `move_tag`: 0, or an error when the timer had fired
  // already -- its own completion comes then, as for any firing.
  // REQUIRES: ArmTimer returned true.
  virtual void MoveTimer(int64_t deadline_us, uint64_t timer_tag, uint64_t move_tag) {
    (void)deadline_us;
    (void)timer_tag;
    (void)move_tag;
  }

  // The bytes of pool buffer `bid`; back to the pool with RecycleBuffer, made
  // available again at the next Recycled().
  virtual char* Buffer(uint16_t bid) = 0;
  virtual void RecycleBuffer(uint16_t bid) = 0;
  virtual void Recycled() = 0;

  // Starts what was queued (io_uring: submits; epoll: nothing to do).
  virtual void Submit() = 0;
  // Starts what was queued and waits up to `timeout_us` microseconds (-1: no
  // limit) for at least one completion. The timeout is passed with the wait
  // itself (no extra system call; but a kernel timer per sleep, which the
  // main loop avoids with ArmTimer where it can); io_uring and
  // epoll_pwait2 keep its microseconds, plain epoll_wait (a kernel before
  // 5.11) rounds it up to a millisecond, so it never ends early.
  virtual void Wait(int64_t timeout_us) = 0;
  // Starts what was queued and collects what is ready, without waiting.
  virtual void Poll() = 0;
  // Takes up to `max` ready completions (0: none ready).
  virtual unsigned Take(Completion* out, unsigned max) = 0;
  // Whether a ready completion is not a send's (`send_op`: the Op bits of a
  // send tag, tag >> 56): input waiting to be processed.
  virtual bool InputWaiting(uint8_t send_op) = 0;
};

// Which backend to run. kAuto probes io_uring (ProbeIoUring) and takes epoll
// when it is refused or lacks a feature.
enum class BackendChoice : uint8_t { kAuto, kIoUring, kEpoll };
bool ParseBackendChoice(std::string_view name, BackendChoice* out);

// Whether this process may use io_uring with what IoThread needs: a ring with
// SINGLE_ISSUER | DEFER_TASKRUN (Linux 6.1), a provided buffer ring (5.19)
// and multishot receive (6.0), tried on a socket pair. The error says what is
// missing and why (seccomp, kernel.io_uring_disabled, memlock, kernel).
absl::Status ProbeIoUring();

std::unique_ptr<IoBackend> MakeBackend(BackendKind kind);

}  // namespace ringkv::io
