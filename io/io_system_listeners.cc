// IoSystem: its listening sockets (TCP, TLS, unix, the cluster bus's
// links) and what they bring in -- accepted clients spread over the I/O
// threads, links accepted or connected out, sockets adopted from elsewhere.
// The rest of IoSystem (the threads' hand-off, closes, timers) is in
// io_system.cc; io-threads at runtime in io_system_threads.cc.
#include "io/io_system.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <algorithm>
#include <cstring>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "io/io_log.h"
#include "io/io_thread.h"
#include "io/messages.h"
#include "io/thread_check.h"
#include "io/tls_session.h"

namespace ringkv::io {
namespace {

// `ip` (an IPv4 or IPv6 address, numeric) and `port` as a socket address;
// false when `ip` is neither.
bool ToSocketAddress(const std::string& ip, int port, sockaddr_storage* ss, socklen_t* len) {
  auto* v4 = reinterpret_cast<sockaddr_in*>(ss);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(ss);
  if (inet_pton(AF_INET, ip.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(port));
    *len = sizeof(sockaddr_in);
    return true;
  }
  if (inet_pton(AF_INET6, ip.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(port));
    *len = sizeof(sockaddr_in6);
    return true;
  }
  return false;
}

// Opens one listening socket; *unavailable is set when the address is
// unavailable on this host (ok to skip for "-addr"), *in_use when another
// socket holds the port. As Redis's anetTcpServer: the address may be a
// name ("localhost"), resolved in the family its form says -- IPv6 when it
// has a ':' -- with "*" and "::*" meaning any address; the first address
// found that a socket can be made for is the listener.
int ListenOn(const std::string& addr, int port, int backlog, std::string* error, bool* unavailable, bool* in_use) {
  const bool v6 = addr.find(':') != std::string::npos;
  addrinfo hints{};
  hints.ai_family = v6 ? AF_INET6 : AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (int rv = getaddrinfo(addr == "*" || addr == "::*" ? nullptr : addr.c_str(), service.c_str(), &hints, &found);
      rv != 0) {
    *error = gai_strerror(rv);
    return -1;
  }
  int fd = -1;
  int socket_errno = 0;
  const addrinfo* a = found;
  for (; a != nullptr; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd >= 0) break;
    socket_errno = errno;
  }
  if (fd < 0) {
    freeaddrinfo(found);
    *unavailable = socket_errno == EAFNOSUPPORT;
    *error = absl::StrCat("socket: ", std::strerror(socket_errno));
    return -1;
  }
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (v6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
  const bool listening = bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, backlog) == 0;
  const int e = errno;
  freeaddrinfo(found);
  if (!listening) {
    *unavailable = e == EADDRNOTAVAIL || e == EAFNOSUPPORT || e == EPROTONOSUPPORT;
    *in_use = e == EADDRINUSE;
    *error = absl::StrCat("bind: ", std::strerror(e));
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

absl::Status IoSystem::OpenListeners(const std::vector<std::string>& bind, int port, int tls_port, bool* in_use) {
  std::vector<int> fds, tls_fds;
  std::vector<std::string> names;
  // Port 0: no listener of that kind (port 0 and tls-port 0: a Unix socket
  // only); no bind address (bind ""): no TCP listener at all, as Redis.
  if (port != 0 && !bind.empty()) {
    if (absl::Status s = OpenPort(bind, port, &fds, &names, in_use); !s.ok()) return s;
  }
  if (tls_port != 0 && !bind.empty()) {
    if (absl::Status s = OpenPort(bind, tls_port, &tls_fds, &names, in_use); !s.ok()) {
      for (int f : fds) close(f);
      return s;
    }
  }
  listen_fds_ = std::move(fds);
  tls_listen_fds_ = std::move(tls_fds);
  listen_names_ = std::move(names);
  bind_ = bind;
  port_ = port;
  tls_port_ = tls_port;
  return absl::OkStatus();
}

absl::Status IoSystem::OpenPort(const std::vector<std::string>& bind, int port, std::vector<int>* out,
                                std::vector<std::string>* out_names, bool* in_use) {
  std::vector<int> fds;
  std::vector<std::string> names;
  for (const std::string& raw : bind) {
    bool optional = absl::StartsWith(raw, "-");
    std::string addr = optional ? raw.substr(1) : raw;
    std::string error;
    bool unavailable = false, taken = false;
    int fd = ListenOn(addr, port, tcp_backlog_, &error, &unavailable, &taken);
    if (in_use != nullptr) *in_use = taken;
    if (fd < 0) {
      // Redis's line, logged for an optional address it skips too.
      std::string failure =
          absl::StrCat("Warning: Could not create server TCP listening socket ", addr, ":", port, ": ", error);
      if (optional && unavailable) {
        Log(kLogWarning, failure);
        continue;
      }
      for (int f : fds) close(f);
      return absl::UnavailableError(std::move(failure));
    }
    fds.push_back(fd);
    names.push_back(absl::StrCat(addr, ":", port));
  }
  if (fds.empty()) return absl::UnavailableError(absl::StrCat("Failed listening on port ", port, " (tcp), aborting."));
  *out = std::move(fds);
  out_names->insert(out_names->end(), names.begin(), names.end());
  return absl::OkStatus();
}

absl::Status IoSystem::OpenUnixListener(const std::string& path, int perm) {
  sockaddr_un sa{};
  if (path.size() >= sizeof(sa.sun_path)) {
    return absl::InvalidArgumentError(absl::StrCat("Unix socket path too long (", path.size(), " bytes): ", path));
  }
  sa.sun_family = AF_UNIX;
  std::memcpy(sa.sun_path, path.data(), path.size());
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::UnavailableError(absl::StrCat("Failed opening Unix socket: ", std::strerror(errno)));
  unlink(path.c_str());  // a stale file of a previous run, as Redis does
  if (bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) < 0 ||
      (perm != 0 && chmod(path.c_str(), static_cast<mode_t>(perm)) < 0) || listen(fd, tcp_backlog_) < 0) {
    const int e = errno;
    close(fd);
    return absl::UnavailableError(absl::StrCat("Failed opening Unix socket: ", std::strerror(e)));
  }
  unix_fd_ = fd;
  unix_path_ = path;
  return absl::OkStatus();
}

void IoSystem::StopListeners() {
  // shutdown() takes a listening socket out of LISTEN at once (the port is
  // free again) even while io_uring still holds the file for its accept,
  // which then completes with an error and is not re-armed.
  if (!threads_.empty()) {
    threads_[0]->RetireListeners(listen_fds_);
    threads_[0]->RetireListeners(tls_listen_fds_);
  }
  for (int fd : listen_fds_) {
    shutdown(fd, SHUT_RDWR);
    close(fd);
  }
  for (int fd : tls_listen_fds_) {
    shutdown(fd, SHUT_RDWR);
    close(fd);
  }
  listen_fds_.clear();
  tls_listen_fds_.clear();
  listen_names_.clear();
}

absl::Status IoSystem::Rebind(const std::vector<std::string>& bind, int port, int tls_port) {
  RINGKV_DCHECK_MAIN_THREAD();
  const std::vector<std::string> old_bind = bind_;
  const int old_port = port_, old_tls_port = tls_port_;
  StopListeners();
  absl::Status s = OpenListeners(bind, port, tls_port);
  if (!s.ok() && !OpenListeners(old_bind, old_port, old_tls_port).ok()) {
    Log(3, "Failed to restore the previous listening sockets after a failed rebind");
  }
  for (int fd : listen_fds_) threads_[0]->ArmAccept(fd);
  for (int fd : tls_listen_fds_) threads_[0]->ArmAccept(fd);
  return s;
}

absl::Status IoSystem::Listen(const IoOptions& options) {
  tcp_keepalive_ = options.tcp_keepalive;
  tcp_backlog_ = options.tcp_backlog;
  if (absl::Status s = ChooseBackend(options.backend); !s.ok()) return s;
  if (!options.unixsocket.empty() && unix_fd_ < 0) {
    if (absl::Status s = OpenUnixListener(options.unixsocket, options.unixsocketperm); !s.ok()) return s;
  }
  // A server restarted right after a crash may find its port still taken
  // by its previous incarnation: the kernel tears an io_uring instance (and
  // the listening socket its pending accept holds) down asynchronously after
  // the process is gone. A port in use is tried again for a short while
  // before giving up; any other error fails at once.
  constexpr int kAttempts = 40;  // 2 s
  absl::Status s;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    bool in_use = false;
    s = OpenListeners(options.bind, options.port, options.tls_port, &in_use);
    if (s.ok() || !in_use) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (s.ok() && listen_fds_.empty() && tls_listen_fds_.empty() && unix_fd_ < 0) {
    return absl::UnavailableError("Configured to not listen anywhere, exiting.");
  }
  return s;
}

void IoSystem::StopAccepting() {
  RINGKV_DCHECK_MAIN_THREAD();
  StopListeners();  // TCP and TLS: retired, shut down, closed
  std::vector<int> rest = link_listen_fds_;
  if (unix_fd_ >= 0) rest.push_back(unix_fd_);
  if (!threads_.empty()) threads_[0]->RetireListeners(rest);
  for (int fd : rest) {
    shutdown(fd, SHUT_RDWR);
    close(fd);
  }
  link_listen_fds_.clear();
  unix_fd_ = -1;
}

void IoSystem::CloseListeners() {
  for (int fd : listen_fds_) close(fd);
  for (int fd : tls_listen_fds_) close(fd);
  for (int fd : link_listen_fds_) close(fd);
  listen_fds_.clear();
  tls_listen_fds_.clear();
  link_listen_fds_.clear();
  if (unix_fd_ >= 0) {
    close(unix_fd_);
    unix_fd_ = -1;
  }
}

SocketAddress IoSystem::PeerAddress(int fd) const {
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len);
  return SocketAddress::FromSockaddr(ss, &unix_path_);
}

Connection* IoSystem::AdoptSocket(int fd, TlsSessionPtr tls) {
  RINGKV_DCHECK_MAIN_THREAD();
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  auto* conn = new Connection;
  conn->id = next_client_id_++;
  conn->fd = fd;
  conn->peer = PeerAddress(fd);
  conn->thread = 0;
  if (tls != nullptr) conn->mutable_extras().tls = std::move(tls);
  ++conn_count_[0];
  sink_->OnOpen(conn);
  threads_[0]->Adopt(conn);
  return conn;
}

void IoSystem::SetLinkSink(LinkSink* sink) {
  RINGKV_DCHECK_MAIN_THREAD();
  if (sink == nullptr && !threads_.empty()) threads_[0]->CloseLinks();
  link_sink_ = sink;
  if (!threads_.empty()) threads_[0]->SetLinkSink(sink);
}

absl::Status IoSystem::ListenLinks(const std::vector<std::string>& bind, int port) {
  RINGKV_DCHECK_MAIN_THREAD();
  std::vector<int> fds;
  std::vector<std::string> names;
  if (absl::Status s = OpenPort(bind, port, &fds, &names, nullptr); !s.ok()) return s;
  link_listen_fds_ = std::move(fds);
  for (int fd : link_listen_fds_) threads_[0]->ArmAccept(fd);
  return absl::OkStatus();
}

Connection* IoSystem::ConnectLink(const std::string& ip, int port, TlsSessionPtr tls, std::string* why) {
  RINGKV_DCHECK_MAIN_THREAD();
  sockaddr_storage ss{};
  socklen_t len = 0;
  if (!ToSocketAddress(ip, port, &ss, &len)) {
    *why = absl::StrCat("bad address ", ip);
    return nullptr;
  }
  const int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *why = std::strerror(errno);
    return nullptr;
  }
  if (connect(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0 && errno != EINPROGRESS) {
    *why = std::strerror(errno);
    close(fd);
    return nullptr;
  }
  Connection* conn = NewLink(fd, SocketAddress::FromSockaddr(ss, &unix_path_), /*inbound=*/false, std::move(tls));
  conn->link()->connecting = true;
  // Even a connect that completed at once is reported from the poll, so
  // the sink hears of the link only after this call returns.
  threads_[0]->AdoptConnecting(conn);
  return conn;
}

Connection* IoSystem::NewLink(int fd, const SocketAddress& peer, bool inbound, TlsSessionPtr tls) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
  auto* conn = new Connection;
  conn->id = next_link_id_++;
  conn->fd = fd;
  conn->peer = peer;
  conn->thread = 0;
  conn->framed = true;
  ConnectionExtras& x = conn->mutable_extras();
  x.link = std::make_unique<LinkState>();
  x.link->inbound = inbound;
  x.tls = std::move(tls);
  return conn;
}

void IoSystem::AcceptLink(int fd) {
  const SocketAddress peer = PeerAddress(fd);
  absl::StatusOr<TlsSessionPtr> session =
      link_sink_ != nullptr ? link_sink_->AcceptSession(peer) : absl::UnavailableError("no link sink");
  if (!session.ok()) {
    close(fd);
    return;
  }
  Connection* conn = NewLink(fd, peer, /*inbound=*/true, std::move(*session));
  threads_[0]->Adopt(conn);
  if (conn->tls() == nullptr) threads_[0]->LinkUp(conn);  // TLS: once its handshake is done
}

void IoSystem::Accept(int fd, int listener) {
  if (std::find(link_listen_fds_.begin(), link_listen_fds_.end(), listener) != link_listen_fds_.end()) {
    AcceptLink(fd);
    return;
  }
  const bool tls = std::find(tls_listen_fds_.begin(), tls_listen_fds_.end(), listener) != tls_listen_fds_.end();
  const SocketAddress peer = PeerAddress(fd);
  std::string refusal = sink_->OnAccept(peer);
  TlsSessionPtr session;
  if (refusal.empty() && tls) {
    session = TlsSession::Accept(tls_.server_ctx());
    if (session == nullptr) refusal = "-ERR TLS is not configured\r\n";
  }
  if (!refusal.empty()) {
    // Best effort, like Redis: the socket is fresh, so the line fits. A TLS
    // peer could not read it before a handshake: it is just closed.
    if (!tls) {
      ssize_t w = write(fd, refusal.data(), refusal.size());
      (void)w;
    }
    close(fd);
    return;
  }
  int one = 1;
  if (peer.family != AF_UNIX) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  if (tcp_keepalive_ > 0 && peer.family != AF_UNIX) {
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
    int idle = tcp_keepalive_, intvl = std::max(1, tcp_keepalive_ / 3), cnt = 3;
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
  }
  auto* conn = new Connection;
  conn->id = next_client_id_++;
  conn->fd = fd;
  conn->peer = peer;
  if (session != nullptr) conn->mutable_extras().tls = std::move(session);
  conn->thread = static_cast<uint16_t>(next_thread_);
  // Another thread's connection: the main thread stages its replies, and
  // its thread publishes its figures, in the extras (allocated once, here).
  if (conn->thread != 0) conn->mutable_extras();
  ++conn_count_[conn->thread];
  next_thread_ = (next_thread_ + 1) % static_cast<uint32_t>(active_);
  sink_->OnOpen(conn);
  if (conn->thread == 0) {
    threads_[0]->Adopt(conn);
  } else {
    outbox_[conn->thread].push_back(ToIo::Adopt(conn));
  }
}

}  // namespace ringkv::io
