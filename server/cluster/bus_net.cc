#include "server/cluster/bus_net.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/cluster/bus_message.h"
#include "core/strings.h"
#include "io/tls_session.h"

namespace ringkv::server {
namespace {

constexpr uint64_t kTagEventfd = 0;
constexpr uint64_t kTagListener = uint64_t{1} << 63;  // | index into listeners_
constexpr size_t kTlsChunk = 16384;  // plaintext encrypted at a time: one TLS record

std::string AddrString(const sockaddr_storage& ss) {
  char buf[INET6_ADDRSTRLEN] = {0};
  if (ss.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(ss).sin_addr, buf, sizeof(buf));
  } else if (ss.ss_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(ss).sin6_addr, buf, sizeof(buf));
  }
  return buf;
}

std::string LocalAddr(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "";
  return AddrString(ss);
}

void SetNoDelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
}

// ip:port as a socket address (v4 or v6); false when ip is not an address.
bool MakeAddr(const std::string& ip, int port, sockaddr_storage* ss, socklen_t* len) {
  *ss = {};
  auto* v4 = reinterpret_cast<sockaddr_in*>(ss);
  if (inet_pton(AF_INET, ip.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(port));
    *len = sizeof(sockaddr_in);
    return true;
  }
  auto* v6 = reinterpret_cast<sockaddr_in6*>(ss);
  if (inet_pton(AF_INET6, ip.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(port));
    *len = sizeof(sockaddr_in6);
    return true;
  }
  return false;
}

}  // namespace

BusNet::BusNet(std::function<void()> notify) : notify_(std::move(notify)) {}

BusNet::~BusNet() {
  if (thread_.joinable()) {
    cmds_.Post(Cmd{Cmd::Kind::kStop, 0, {}});
    thread_.join();
  }
  for (auto& [id, s] : socks_) close(s.fd);
  for (int fd : listeners_) close(fd);
  if (epfd_ >= 0) close(epfd_);
}

absl::Status BusNet::Start(const std::vector<std::string>& addresses, int port) {
  epfd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epfd_ < 0 || !cmds_.ok()) return absl::InternalError(StrCat("cluster bus: epoll: ", strerror(errno)));
  std::vector<std::string> addrs = addresses;
  if (addrs.empty()) addrs = {"0.0.0.0"};
  for (std::string a : addrs) {
    // As Redis's bind: "-addr" may fail, "*" is every IPv4 address, "::*" every IPv6 one.
    const bool optional = !a.empty() && a[0] == '-';
    if (optional) a.erase(0, 1);
    if (a == "*") a = "0.0.0.0";
    if (a == "::*") a = "::";
    sockaddr_storage ss;
    socklen_t len;
    if (!MakeAddr(a, port, &ss, &len)) {
      if (optional) continue;
      return absl::InvalidArgumentError(StrCat("cluster bus: bad address ", a));
    }
    const int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (ss.ss_family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0 || listen(fd, 511) != 0) {
      const std::string why = strerror(errno);
      if (fd >= 0) close(fd);
      if (optional) continue;
      return absl::InvalidArgumentError(StrCat("Could not create server TCP listening socket ", a, ":", port, ": ", why));
    }
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = kTagListener | listeners_.size();
    epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev);
    listeners_.push_back(fd);
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kTagEventfd;
  epoll_ctl(epfd_, EPOLL_CTL_ADD, cmds_.eventfd(), &ev);
  thread_ = std::thread([this] { Loop(); });
  return absl::OkStatus();
}

uint64_t BusNet::Connect(const std::string& ip, int port, std::shared_ptr<BusSendMeter> meter) {
  const uint64_t id = next_out_;
  next_out_ += 2;
  cmds_.Post(Cmd{Cmd::Kind::kConnect, id, ip, port, std::move(meter)});
  return id;
}

void BusNet::Send(uint64_t link, std::string bytes) { cmds_.Post(Cmd{Cmd::Kind::kSend, link, std::move(bytes)}); }

void BusNet::Close(uint64_t link) { cmds_.Post(Cmd{Cmd::Kind::kClose, link, {}}); }

void BusNet::SetTls(bool enabled, io::SslCtxPtr server_ctx, io::SslCtxPtr client_ctx) {
  if (!thread_.joinable()) {  // before Start: set for the first accept
    tls_ = enabled;
    tls_server_ = std::move(server_ctx);
    tls_client_ = std::move(client_ctx);
    return;
  }
  Cmd c{Cmd::Kind::kTls, 0, {}};
  c.tls = enabled;
  c.server_ctx = std::move(server_ctx);
  c.client_ctx = std::move(client_ctx);
  cmds_.Post(std::move(c));
}

void BusNet::Loop() {
  std::vector<Cmd> cmds;
  epoll_event evs[64];
  bool stop = false;
  while (!stop) {
    const int n = epoll_wait(epfd_, evs, 64, -1);
    if (n < 0 && errno != EINTR) break;
    for (int i = 0; i < n; ++i) {
      const uint64_t tag = evs[i].data.u64;
      if (tag == kTagEventfd) {
        uint64_t v;
        ssize_t r = read(cmds_.eventfd(), &v, sizeof(v));
        (void)r;
        cmds.clear();
        cmds_.Drain(&cmds);
        for (Cmd& c : cmds) {
          if (c.kind == Cmd::Kind::kStop) stop = true;
          HandleCmd(c);
        }
      } else if (tag & kTagListener) {
        Accept(listeners_[tag & ~kTagListener]);
      } else {
        auto it = socks_.find(tag);
        if (it == socks_.end()) continue;
        if (evs[i].events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) OnWritable(tag, it->second);
        it = socks_.find(tag);
        if (it != socks_.end() && (evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP))) OnReadable(tag, it->second);
      }
    }
    if (!pending_.empty()) {
      events_.PostAll(pending_);
      notify_();
    }
  }
}

void BusNet::HandleCmd(Cmd& c) {
  switch (c.kind) {
    case Cmd::Kind::kConnect: {
      sockaddr_storage ss;
      socklen_t len;
      if (!MakeAddr(c.data, c.port, &ss, &len)) {
        pending_.push_back({BusEvent::Kind::kClosed, c.link, StrCat("bad address ", c.data), {}});
        return;
      }
      const int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      if (fd < 0) {
        pending_.push_back({BusEvent::Kind::kClosed, c.link, strerror(errno), {}});
        return;
      }
      SetNoDelay(fd);
      const int r = connect(fd, reinterpret_cast<sockaddr*>(&ss), len);
      if (r != 0 && errno != EINPROGRESS) {
        pending_.push_back({BusEvent::Kind::kClosed, c.link, strerror(errno), {}});
        close(fd);
        return;
      }
      Sock& s = socks_[c.link];
      s.fd = fd;
      s.connecting = true;
      s.meter = std::move(c.meter);
      if (tls_) {
        s.tls = io::TlsSession::Connect(tls_client_);
        s.handshaking = true;
        if (s.tls == nullptr) {  // fails closed: never a plain link with tls-cluster
          Drop(c.link, tls_client_ == nullptr ? "TLS is not configured" : io::TlsErrorString(), true);
          return;
        }
      }
      epoll_event ev{};
      ev.events = EPOLLOUT | EPOLLIN;
      ev.data.u64 = c.link;
      epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev);
      s.want_write = true;
      return;
    }
    case Cmd::Kind::kSend: {
      auto it = socks_.find(c.link);
      if (it == socks_.end()) return;
      Sock& s = it->second;
      if (s.out_off == s.out.size()) {
        s.out = std::move(c.data);
        s.out_off = 0;
      } else {
        s.out.append(c.data);
      }
      if (s.connecting || s.handshaking) {  // sent once connected (and the TLS handshake done)
        s.meter->capacity.store(Allocated(s), std::memory_order_relaxed);
      } else {
        Flush(c.link, s);
      }
      return;
    }
    case Cmd::Kind::kClose:
      Drop(c.link, "", false);
      return;
    case Cmd::Kind::kTls:
      tls_ = c.tls;
      tls_server_ = std::move(c.server_ctx);
      tls_client_ = std::move(c.client_ctx);
      return;
    case Cmd::Kind::kStop:
      return;
  }
}

void BusNet::Accept(int lfd) {
  while (true) {
    sockaddr_storage ss{};
    socklen_t len = sizeof(ss);
    const int fd = accept4(lfd, reinterpret_cast<sockaddr*>(&ss), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    SetNoDelay(fd);
    const uint64_t id = next_in_;
    next_in_ += 2;
    io::TlsSessionPtr tls;
    if (tls_) {  // fails closed: never a plain link with tls-cluster
      tls = io::TlsSession::Accept(tls_server_, /*require_peer_certificate=*/true);
      if (tls == nullptr) {
        pending_.push_back({BusEvent::Kind::kAcceptFailed, id,
                            tls_server_ == nullptr ? "TLS is not configured" : io::TlsErrorString(), {}});
        close(fd);
        continue;
      }
    }
    Sock& s = socks_[id];
    s.fd = fd;
    s.meter = std::make_shared<BusSendMeter>();
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = id;
    epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev);
    if (tls != nullptr) {  // announced once the handshake is done
      s.tls = std::move(tls);
      s.handshaking = true;
      s.peer = AddrString(ss);
      continue;
    }
    pending_.push_back({BusEvent::Kind::kAccepted, id, AddrString(ss), LocalAddr(fd), s.meter});
  }
}

void BusNet::Announce(uint64_t id, Sock& s) {
  s.handshaking = false;
  if (id & 1) {
    pending_.push_back({BusEvent::Kind::kAccepted, id, std::move(s.peer), LocalAddr(s.fd), s.meter});
  } else {
    pending_.push_back({BusEvent::Kind::kConnected, id, {}, LocalAddr(s.fd)});
  }
}

void BusNet::OnWritable(uint64_t id, Sock& s) {
  if (s.connecting) {
    int err = 0;
    socklen_t len = sizeof(err);
    getsockopt(s.fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) {
      Drop(id, strerror(err), true);
      return;
    }
    s.connecting = false;
    if (s.tls == nullptr) {
      pending_.push_back({BusEvent::Kind::kConnected, id, {}, LocalAddr(s.fd)});
    } else if (!s.tls->Handshake()) {  // queues the client's hello
      Drop(id, s.tls->error(), true);
      return;
    }
  }
  Flush(id, s);
}

bool BusNet::SendWire(uint64_t id, Sock& s) {
  io::OutBuffer& wire = s.tls->wire();
  while (!wire.empty()) {
    if (io::SendOutBuffer(s.fd, wire) >= 0) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) break;
    Drop(id, StrCat("Error writing to the cluster bus: ", strerror(errno)), true);
    return false;
  }
  return true;
}

size_t BusNet::Allocated(const Sock& s) {
  return s.out.capacity() + (s.tls != nullptr ? s.tls->wire().allocated() : 0);
}

void BusNet::Flush(uint64_t id, Sock& s) {
  if (s.tls != nullptr) {
    // Plaintext is encrypted a record's worth at a time, as the socket
    // takes the records: what waits stays plaintext in s.out, so `written`
    // (plaintext handed to TLS) leaves it counted in CLUSTER LINKS'
    // send-buffer-used, as Redis's sndbuf until SSL_write takes it.
    while (true) {
      if (!SendWire(id, s)) return;
      if (!s.tls->wire().empty() || !s.tls->handshake_done() || s.out_off == s.out.size()) break;
      const size_t n = std::min(kTlsChunk, s.out.size() - s.out_off);
      if (!s.tls->Write(std::string_view(s.out).substr(s.out_off, n))) {
        Drop(id, s.tls->error(), true);
        return;
      }
      s.out_off += n;
      s.meter->written.fetch_add(n, std::memory_order_relaxed);
    }
  }
  while (s.tls == nullptr && s.out_off < s.out.size()) {
    const ssize_t n = send(s.fd, s.out.data() + s.out_off, s.out.size() - s.out_off, MSG_NOSIGNAL);
    if (n > 0) {
      s.out_off += static_cast<size_t>(n);
      s.meter->written.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n < 0 && errno == EINTR) continue;
    Drop(id, StrCat("Error writing to the cluster bus: ", strerror(errno)), true);
    return;
  }
  if (s.out_off == s.out.size()) {
    // Emptied: the buffer (usually one message's own string) is given back,
    // so an idle link shows none, as Redis's after clusterNodeCronResizeBuffers.
    std::string().swap(s.out);
    s.out_off = 0;
  }
  s.meter->capacity.store(Allocated(s), std::memory_order_relaxed);
  Rearm(id, s);
}

void BusNet::Rearm(uint64_t id, Sock& s) {
  // A TLS link waits for the socket only with records queued: plaintext
  // behind them is encrypted as they go, and before the handshake ends it
  // waits for the peer.
  const bool want = s.tls != nullptr ? !s.tls->wire().empty() : s.out_off < s.out.size();
  if (want == s.want_write) return;
  s.want_write = want;
  epoll_event ev{};
  ev.events = want ? (EPOLLIN | EPOLLOUT) : EPOLLIN;
  ev.data.u64 = id;
  epoll_ctl(epfd_, EPOLL_CTL_MOD, s.fd, &ev);
}

void BusNet::OnReadable(uint64_t id, Sock& s) {
  char buf[65536];
  std::string end;  // a TLS link's end of stream, acted on after its last frames
  while (end.empty()) {
    const ssize_t n = recv(s.fd, buf, sizeof(buf), 0);
    if (n == 0) {
      Drop(id, "connection closed by the peer", true);
      return;
    }
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      if (errno == EINTR) continue;
      Drop(id, StrCat("Error reading from the cluster bus: ", strerror(errno)), true);
      return;
    }
    if (s.tls == nullptr) {
      s.in.append(buf, static_cast<size_t>(n));
    } else if (!FeedTls(id, s, std::string_view(buf, static_cast<size_t>(n)), &end)) {
      return;
    }
    // Whole frames go to the main thread; a bad signature or length drops
    // the link (Redis's clusterReadHandler).
    size_t off = 0;
    while (s.in.size() - off >= 8) {
      absl::StatusOr<uint32_t> len = cluster::FrameLength(std::string_view(s.in).substr(off, 8), kMaxFrame);
      if (!len.ok()) {
        Drop(id, StrCat("Bad message on the cluster bus: ", len.status().message()), true);
        return;
      }
      if (s.in.size() - off < *len) break;
      pending_.push_back({BusEvent::Kind::kFrame, id, s.in.substr(off, *len), {}});
      off += *len;
    }
    if (off > 0) s.in.erase(0, off);
  }
  if (!end.empty() && SendWire(id, s)) Drop(id, std::move(end), true);  // after the alert, if the socket takes it
}

bool BusNet::FeedTls(uint64_t id, Sock& s, std::string_view cipher, std::string* end) {
  s.tls->Feed(cipher);
  char plain[16384];
  long r;
  while ((r = s.tls->Read(plain, sizeof(plain))) > 0) s.in.append(plain, static_cast<size_t>(r));
  if (r != io::TlsSession::kWantInput) {
    *end = r == io::TlsSession::kClosed ? "connection closed by the peer" : s.tls->error();
    return true;
  }
  if (s.handshaking && s.tls->handshake_done()) Announce(id, s);
  // Handshake records, tickets, and what was queued before the handshake.
  Flush(id, s);
  return socks_.contains(id);
}

void BusNet::Drop(uint64_t id, std::string why, bool tell) {
  auto it = socks_.find(id);
  if (it == socks_.end()) return;
  // An inbound link whose TLS handshake did not end was never announced:
  // the main thread hears of it as a failed accept.
  const bool accept_failed = (id & 1) && it->second.handshaking;
  epoll_ctl(epfd_, EPOLL_CTL_DEL, it->second.fd, nullptr);
  close(it->second.fd);
  socks_.erase(it);
  if (tell) {
    const BusEvent::Kind kind = accept_failed ? BusEvent::Kind::kAcceptFailed : BusEvent::Kind::kClosed;
    pending_.push_back({kind, id, std::move(why), {}});
  }
}

}  // namespace ringkv::server
