#include "server/cluster/bus_net.h"

#include <utility>

#include "core/cluster/bus_message.h"
#include "core/strings.h"
#include "io/tls_session.h"

namespace ringkv::server {
namespace {

// Our own address on the link, as its socket says.
std::string LocalIp(const io::Connection& conn) { return io::LocalAddress(conn, nullptr).Ip(); }

}  // namespace

BusNet::BusNet(io::IoSystem& io, std::function<void()> notify) : io_(io), notify_(std::move(notify)) {
  io_.SetLinkSink(this);
}

BusNet::~BusNet() {
  io_.SetLinkSink(nullptr);  // closes every link, those not up yet included
}

absl::Status BusNet::Start(const std::vector<std::string>& addresses, int port) {
  std::vector<std::string> bind = addresses;
  if (bind.empty()) bind = {"0.0.0.0"};
  return io_.ListenLinks(bind, port);
}

void BusNet::Post(BusEvent e) {
  const bool first = events_.empty();
  events_.push_back(std::move(e));
  if (first) notify_();
}

void BusNet::Drain(std::vector<BusEvent>* out) {
  out->clear();
  out->swap(events_);
}

uint64_t BusNet::IdOf(const io::Connection* conn) const {
  auto it = ids_.find(conn);
  return it == ids_.end() ? 0 : it->second;
}

uint64_t BusNet::Connect(const std::string& ip, int port) {
  const uint64_t id = next_out_;
  next_out_ += 2;
  io::TlsSessionPtr session;
  if (tls_) {  // fails closed: never a plain link with tls-cluster
    session = io::TlsSession::Connect(tls_client_);
    if (session == nullptr) {
      Post({BusEvent::Kind::kClosed, id, tls_client_ == nullptr ? "TLS is not configured" : io::TlsErrorString(), {}});
      return id;
    }
  }
  std::string why;
  io::Connection* conn = io_.ConnectLink(ip, port, std::move(session), &why);
  if (conn == nullptr) {
    Post({BusEvent::Kind::kClosed, id, std::move(why), {}});
    return id;
  }
  links_[id] = conn;
  ids_[conn] = id;
  return id;
}

void BusNet::Send(uint64_t link, std::string_view bytes) {
  auto it = links_.find(link);
  if (it == links_.end()) return;
  io_.PrepareWrite(it->second).Append(bytes);
}

void BusNet::Close(uint64_t link) {
  auto it = links_.find(link);
  if (it == links_.end()) return;
  ids_.erase(it->second);
  io_.CloseNow(it->second);
  links_.erase(it);
}

void BusNet::SetTls(bool enabled, io::SslCtxPtr server_ctx, io::SslCtxPtr client_ctx) {
  tls_ = enabled;
  tls_server_ = std::move(server_ctx);
  tls_client_ = std::move(client_ctx);
}

BusNet::SendBuffer BusNet::SendBufferOf(uint64_t link) const {
  auto it = links_.find(link);
  if (it == links_.end()) return {};
  const io::Connection& conn = *it->second;
  SendBuffer b{conn.out.allocated(), conn.out.size()};
  if (const io::TlsSession* tls = conn.tls(); tls != nullptr) {
    b.allocated += tls->wire().allocated();
    b.used += tls->wire().size();
  }
  return b;
}

// ---- io::LinkSink ----

size_t BusNet::FrameHeaderSize() const { return 8; }

absl::StatusOr<size_t> BusNet::FrameLength(std::string_view header) {
  // A bad signature or length drops the link (Redis's clusterReadHandler).
  absl::StatusOr<uint32_t> len = cluster::FrameLength(header, kMaxFrame);
  if (!len.ok()) return absl::InvalidArgumentError(StrCat("Bad message on the cluster bus: ", len.status().message()));
  return size_t{*len};
}

absl::StatusOr<io::TlsSessionPtr> BusNet::AcceptSession(const io::SocketAddress& /*peer*/) {
  if (!tls_) return io::TlsSessionPtr();
  // Fails closed: never a plain link with tls-cluster.
  io::TlsSessionPtr session = io::TlsSession::Accept(tls_server_, /*require_peer_certificate=*/true);
  if (session != nullptr) return session;
  std::string why = tls_server_ == nullptr ? "TLS is not configured" : io::TlsErrorString();
  Post({BusEvent::Kind::kAcceptFailed, next_in_, why, {}});
  next_in_ += 2;
  return absl::UnavailableError(why);
}

void BusNet::OnLinkUp(io::Connection* conn) {
  if (conn->link()->inbound) {
    const uint64_t id = next_in_;
    next_in_ += 2;
    links_[id] = conn;
    ids_[conn] = id;
    Post({BusEvent::Kind::kAccepted, id, conn->peer.Ip(), LocalIp(*conn)});
    return;
  }
  if (const uint64_t id = IdOf(conn); id != 0) Post({BusEvent::Kind::kConnected, id, {}, LocalIp(*conn)});
}

void BusNet::OnLinkFrame(io::Connection* conn, std::string_view frame) {
  if (const uint64_t id = IdOf(conn); id != 0) Post({BusEvent::Kind::kFrame, id, std::string(frame), {}});
}

void BusNet::OnLinkClosed(io::Connection* conn, const io::LinkState& state) {
  const uint64_t id = IdOf(conn);
  if (id == 0) {
    // An inbound link that never came up: its TLS handshake failed.
    if (state.inbound) {
      Post({BusEvent::Kind::kAcceptFailed, next_in_, state.why, {}});
      next_in_ += 2;
    }
    return;
  }
  ids_.erase(conn);
  links_.erase(id);
  Post({BusEvent::Kind::kClosed, id, state.why, {}});
}

}  // namespace ringkv::server
