#include "server/migrate_sockets.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <iterator>

#include "core/strings.h"

namespace ringkv::server {
namespace {

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

}  // namespace

MigrateSockets::~MigrateSockets() {
  for (auto& [name, s] : sockets_) ::close(s.fd);
}

MigrateSockets::Socket* MigrateSockets::Get(std::string_view host, std::string_view port, int64_t timeout_ms,
                                            int64_t now_ms) {
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
  const int fd = Connect(host, port, timeout_ms);
  if (fd < 0) return nullptr;
  Socket& s = sockets_[name];
  s.fd = fd;
  s.last_use_ms = now_ms;
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

bool MigrateSockets::WriteAll(int fd, std::string_view data, int64_t timeout_ms) {
  const int64_t deadline = DeadlineNowMs() + timeout_ms;
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!WaitFor(fd, POLLOUT, deadline)) return false;
      continue;
    }
    return false;
  }
  return true;
}

bool MigrateSockets::ReadLine(int fd, std::string* line, size_t max, int64_t timeout_ms) {
  const int64_t deadline = DeadlineNowMs() + timeout_ms;
  line->clear();
  while (true) {
    char c;
    const ssize_t n = ::recv(fd, &c, 1, 0);
    if (n == 1) {
      if (c == '\n') break;
      if (line->size() < max) line->push_back(c);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!WaitFor(fd, POLLIN, deadline)) return false;
      continue;
    }
    if (n == 0) errno = ECONNRESET;  // closed: worth one retry, unlike a timeout
    return false;
  }
  if (!line->empty() && line->back() == '\r') line->pop_back();
  return true;
}

}  // namespace ringkv::server
