// UringBackend: what its fixed-file table must not change -- a socket it
// receives and sends on closes when its connection closes it, and a
// descriptor number used again by the next socket works for that one.
#include "io/uring_backend.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace ringkv::io {
namespace {

constexpr uint64_t kRecvTag = 1, kSendTag = 2, kCancelTag = 3;

class UringBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    ASSERT_GE(wake_fd_, 0);
    const absl::Status st = backend_.Init(wake_fd_);
    if (!st.ok()) GTEST_SKIP() << "no io_uring here: " << st;
  }
  void TearDown() override { close(wake_fd_); }

  // Submits, then waits (up to a second) for a completion with `tag`;
  // *data gets a receive's bytes.
  bool WaitFor(uint64_t tag, int* res, std::string* data = nullptr) {
    for (int i = 0; i < 100; ++i) {
      backend_.Wait(10'000);
      Completion c[16];
      const unsigned n = backend_.Take(c, 16);
      for (unsigned k = 0; k < n; ++k) {
        if (c[k].tag != tag) continue;
        *res = c[k].res;
        if (c[k].flags & kCompletionBuffer) {
          const auto bid = static_cast<uint16_t>(c[k].flags >> kCompletionBufferShift);
          if (data != nullptr && c[k].res > 0) data->assign(backend_.Buffer(bid), static_cast<size_t>(c[k].res));
          backend_.RecycleBuffer(bid);
          backend_.Recycled();
        }
        return true;
      }
    }
    return false;
  }
  // One message each way through the backend on `fd`, whose peer is `peer`.
  void RoundTrip(int fd, int peer, std::string_view in, std::string_view out) {
    backend_.ArmRecv(fd, kRecvTag);
    backend_.Submit();
    ASSERT_EQ(write(peer, in.data(), in.size()), static_cast<ssize_t>(in.size()));
    int res = 0;
    std::string got;
    ASSERT_TRUE(WaitFor(kRecvTag, &res, &got));
    EXPECT_EQ(got, in);
    backend_.Send(fd, out.data(), out.size(), kSendTag);
    ASSERT_TRUE(WaitFor(kSendTag, &res));
    EXPECT_EQ(res, static_cast<int>(out.size()));
    std::string echo(out.size(), '\0');
    ASSERT_EQ(read(peer, echo.data(), echo.size()), static_cast<ssize_t>(out.size()));
    EXPECT_EQ(echo, out);
  }
  // Ends the receive, forgets `fd` and closes it, as a connection's close does.
  void Close(int fd) {
    backend_.CancelRecv(fd, kRecvTag, kCancelTag);
    int res = 0;
    ASSERT_TRUE(WaitFor(kCancelTag, &res));
    backend_.Forget(fd);
    close(fd);
  }
  // True when `peer` reads end of file within a second.
  static bool SeesEof(int peer) {
    pollfd p{peer, POLLIN, 0};
    if (poll(&p, 1, 1000) != 1) return false;
    char b;
    return read(peer, &b, 1) == 0;
  }

  int wake_fd_ = -1;
  UringBackend backend_;
};

TEST_F(UringBackendTest, ASocketItServedClosesWhenItsConnectionClosesIt) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  RoundTrip(sv[0], sv[1], "PING", "+PONG");
  Close(sv[0]);
  // The fixed-file table held its own reference to the socket: without
  // Forget emptying its slot, the peer would never see the end.
  EXPECT_TRUE(SeesEof(sv[1]));
  close(sv[1]);
}

TEST_F(UringBackendTest, ADescriptorNumberUsedAgainServesTheNewSocket) {
  int a[2], b[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, a), 0);
  const int number = a[0];
  RoundTrip(a[0], a[1], "first", "one");
  Close(a[0]);
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, b), 0);
  ASSERT_EQ(b[0], number);  // the lowest free number: the one just closed
  RoundTrip(b[0], b[1], "second", "two");
  EXPECT_TRUE(SeesEof(a[1]));
  Close(b[0]);
  EXPECT_TRUE(SeesEof(b[1]));
  close(a[1]);
  close(b[1]);
}

}  // namespace
}  // namespace ringkv::io
