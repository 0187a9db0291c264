#include "server/migrate_sockets.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <iterator>

#include "core/strings.h"
#include "io/tls_session.h"

namespace ringkv::server {
namespace {

// How far past `max` ReadLine reads looking for the end of a line.
constexpr size_t kLineSlack = 64 * 1024;

int64_t DeadlineNowMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

// Waits until fd is ready for `events` or the deadline passes (errno
// ETIMEDOUT then).
bool WaitFor(int fd, short events, int64_t deadline_ms) {
  while (true) {
    const int64_t left = deadline_ms - DeadlineNowMs();
    if (left <= 0) {
      errno = ETIMEDOUT;
      return false;
    }
    pollfd p{fd, events, 0};
    const int rc = ::poll(&p, 1, static_cast<int>(left));
    if (rc > 0) return true;
    if (rc < 0 && errno != EINTR) return false;
  }
}

// A non-blocking connect that waits for writability, as Redis's
// connBlockingConnect: a refused connection shows up at the first write.
int Connect(std::string_view host, std::string_view port, int64_t timeout_ms) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (::getaddrinfo(std::string(host).c_str(), std::string(port).c_str(), &hints, &res) != 0) return -1;
  int fd = -1;
  const int64_t deadline = DeadlineNowMs() + timeout_ms;
  for (addrinfo* a = res; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) continue;
    if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0 && (errno != EINPROGRESS || !WaitFor(fd, POLLOUT, deadline))) {
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(res);
  if (fd >= 0) {
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  return fd;
}

// Sends what a TLS session has queued, by the deadline.
bool SendWire(int fd, io::TlsSession& tls, int64_t deadline_ms) {
  io::OutBuffer& wire = tls.wire();
  while (!wire.empty()) {
    if (io::SendOutBuffer(fd, wire) >= 0) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return false;
    if (!WaitFor(fd, POLLOUT, deadline_ms)) return false;
  }
  return true;
}

// Waits for and receives one chunk into `buf`: its size, or -1 (errno set;
// ECONNRESET when the peer closed).
ssize_t RecvChunk(int fd, char* buf, size_t n, int64_t deadline_ms) {
  while (true) {
    const ssize_t r = ::recv(fd, buf, n, 0);
    if (r > 0) return r;
    if (r == 0) {
      errno = ECONNRESET;  // closed: worth one retry, unlike a timeout
      return -1;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
    if (!WaitFor(fd, POLLIN, deadline_ms)) return -1;
  }
}

// The client side of a TLS handshake on a connected socket, by the deadline.
bool Handshake(int fd, io::TlsSession& tls, int64_t deadline_ms) {
  if (!tls.Handshake()) return false;
  while (true) {
    if (!SendWire(fd, tls, deadline_ms)) return false;
    if (tls.handshake_done()) return true;
    char buf[16384];
    const ssize_t n = RecvChunk(fd, buf, sizeof(buf), deadline_ms);
    if (n < 0) return false;
    tls.Feed(std::string_view(buf, static_cast<size_t>(n)));
    if (!tls.Handshake()) {
      SendWire(fd, tls, deadline_ms);  // the alert
      errno = ECONNRESET;
      return false;
    }
  }
}

}  // namespace

MigrateSockets::~MigrateSockets() {
  for (auto& [name, s] : sockets_) ::close(s.fd);
}

MigrateSockets::Socket* MigrateSockets::Get(std::string_view host, std::string_view port, int64_t timeout_ms,
                                            int64_t now_ms, const io::SslCtxPtr& tls) {
  const std::string name = StrCat(host, ":", port);
  if (auto it = sockets_.find(name); it != sockets_.end()) {
    it->second.last_use_ms = now_ms;
    return &it->second;
  }
  if (sockets_.size() >= kMaxCached) {  // full: a random one makes room
    auto victim = std::next(sockets_.begin(), static_cast<std::ptrdiff_t>(absl::Uniform<size_t>(rng_, 0, sockets_.size())));
    ::close(victim->second.fd);
    sockets_.erase(victim);
  }
  const int64_t deadline = DeadlineNowMs() + timeout_ms;
  const int fd = Connect(host, port, timeout_ms);
  if (fd < 0) return nullptr;
  io::TlsSessionPtr session;
  if (tls != nullptr) {
    session = io::TlsSession::Connect(tls);
    if (session == nullptr || !Handshake(fd, *session, deadline)) {
      ::close(fd);
      return nullptr;
    }
  }
  Socket& s = sockets_[name];
  s.fd = fd;
  s.last_use_ms = now_ms;
  s.tls = std::move(session);
  return &s;
}

void MigrateSockets::Close(std::string_view host, std::string_view port) {
  if (auto it = sockets_.find(StrCat(host, ":", port)); it != sockets_.end()) {
    ::close(it->second.fd);
    sockets_.erase(it);
  }
}

void MigrateSockets::CloseIdle(int64_t now_ms) {
  absl::erase_if(sockets_, [&](const auto& entry) {
    if (now_ms - entry.second.last_use_ms <= kIdleCloseMs) return false;
    ::close(entry.second.fd);
    return true;
  });
}

bool MigrateSockets::WriteAll(Socket& s, std::string_view data, int64_t timeout_ms) {
  const int64_t deadline = DeadlineNowMs() + timeout_ms;
  if (s.tls != nullptr) {
    // 64 KiB at a time: a large payload is not held twice (plaintext and records).
    constexpr size_t kChunk = 64 * 1024;
    while (!data.empty()) {
      const size_t n = std::min(kChunk, data.size());
      if (!s.tls->Write(data.substr(0, n))) {
        errno = ECONNRESET;
        return false;
      }
      if (!SendWire(s.fd, *s.tls, deadline)) return false;
      data.remove_prefix(n);
    }
    return true;
  }
  while (!data.empty()) {
    const ssize_t n = ::send(s.fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!WaitFor(s.fd, POLLOUT, deadline)) return false;
      continue;
    }
    return false;
  }
  return true;
}

bool MigrateSockets::ReadLine(Socket& s, std::string* line, size_t max, int64_t timeout_ms) {
  const int64_t deadline = DeadlineNowMs() + timeout_ms;
  size_t nl;
  while ((nl = s.in.find('\n')) == std::string::npos) {
    if (s.in.size() > max + kLineSlack) {  // not a reply line: a broken or foreign peer
      errno = EPROTO;
      return false;
    }
    char buf[16384];
    const ssize_t n = RecvChunk(s.fd, buf, sizeof(buf), deadline);
    if (n < 0) return false;
    if (s.tls == nullptr) {
      s.in.append(buf, static_cast<size_t>(n));
      continue;
    }
    s.tls->Feed(std::string_view(buf, static_cast<size_t>(n)));
    long r;
    while ((r = s.tls->Read(buf, sizeof(buf))) > 0) s.in.append(buf, static_cast<size_t>(r));
    if (r != io::TlsSession::kWantInput) {
      errno = ECONNRESET;
      return false;
    }
    if (!SendWire(s.fd, *s.tls, deadline)) return false;  // what reading queued (a key update)
  }
  size_t len = nl;
  if (len > 0 && s.in[len - 1] == '\r') --len;
  line->assign(s.in, 0, std::min(len, max));
  s.in.erase(0, nl + 1);
  return true;
}

}  // namespace ringkv::server
