// BusNet: the cluster bus's sockets, as framed links of the I/O layer
// (io/link_sink.h): they live on I/O thread 0, the main thread's loop, with
// whichever backend it runs (io_uring or epoll), so the main thread never
// waits on the network and the bus has no thread of its own. BusNet
// listens on the bus port, connects out, cuts what it reads into Redis's
// clusterMsg frames (8 bytes "RCmb" + totlen, then the rest) and queues
// them as events; the cluster state is the main thread's, which drains the
// events (ClusterBus::OnEvents) in the turn after the `notify` callback.
//
// Link ids: outbound links are even (given by Connect), inbound ones odd
// (given when they are accepted).
//
// Send buffers: what Send queued and the socket has not taken yet is the
// link's send buffer (Redis's sndbuf): SendBufferOf, for CLUSTER LINKS and
// cluster-link-sendbuf-limit.
//
// TLS (tls-cluster): after SetTls with the server's contexts, links made
// from then on speak TLS -- accepted ones require the peer's certificate
// (Redis's TLS_CLIENT_AUTH_YES on the bus, whatever tls-auth-clients says),
// outbound ones verify the peer against the CA. A TLS link is announced
// (kAccepted / kConnected) once its handshake is done, as Redis's accept and
// connect handlers run then; a send before that waits in the link's
// buffer. An inbound handshake that fails ends in kAcceptFailed (the link
// was never announced).
//
// Thread-safety: main thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "io/io_system.h"
#include "io/link_sink.h"
#include "io/tls_context.h"

namespace ringkv::server {

struct BusEvent {
  enum class Kind : uint8_t {
    kAccepted,      // inbound link; data = the peer's ip, aux = our own address
    kConnected,     // outbound link connected; aux = our own address on it
    kClosed,        // the link is gone; data = why
    kFrame,         // one whole message; data = its bytes
    kAcceptFailed,  // an inbound link failed before it was up (TLS); data = why
  };
  Kind kind;
  uint64_t link;
  std::string data;
  std::string aux;
};

class BusNet final : private io::LinkSink {
 public:
  // A frame longer than this closes the link (the sender is broken).
  static constexpr size_t kMaxFrame = 256u << 20;

  // `io` outlives this object; `notify` is called when events are queued
  // and none were waiting (IoSystem::Notify: the main thread drains them
  // in its next turn).
  BusNet(io::IoSystem& io, std::function<void()> notify);
  // Closes every link (no event follows) and stops taking new ones.
  ~BusNet() override;
  BusNet(const BusNet&) = delete;
  BusNet& operator=(const BusNet&) = delete;

  // Listens on the bus port at each address (empty list: every IPv4 one).
  // Errors name the address.
  absl::Status Start(const std::vector<std::string>& addresses, int port);

  // Starts connecting to ip:port; returns the new link's id. Its
  // kConnected or kClosed event follows.
  uint64_t Connect(const std::string& ip, int port);
  void Send(uint64_t link, std::string_view bytes);
  // Links accepted or connected from now on use TLS (`enabled`) with these
  // contexts (the server's: io::TlsContext), or plain TCP. Links already up
  // keep what they were made with, as Redis's. Enabled with a null context,
  // new links are refused rather than made plain.
  void SetTls(bool enabled, io::SslCtxPtr server_ctx, io::SslCtxPtr client_ctx);
  // Closes a link (no kClosed event follows for it).
  void Close(uint64_t link);

  // A link's send buffer: bytes allocated for it and bytes waiting in it
  // (plaintext and TLS records); zeros for a link that is not there.
  struct SendBuffer {
    uint64_t allocated = 0;
    uint64_t used = 0;
  };
  SendBuffer SendBufferOf(uint64_t link) const;

  // The events since the last call.
  void Drain(std::vector<BusEvent>* out);

 private:
  // ---- io::LinkSink ----
  size_t FrameHeaderSize() const override;
  absl::StatusOr<size_t> FrameLength(std::string_view header) override;
  absl::StatusOr<io::TlsSessionPtr> AcceptSession(const io::SocketAddress& peer) override;
  void OnLinkUp(io::Connection* conn) override;
  void OnLinkFrame(io::Connection* conn, std::string_view frame) override;
  void OnLinkClosed(io::Connection* conn, const io::LinkState& state) override;

  void Post(BusEvent e);
  // The link id of `conn`, given at its first sight (an inbound link's,
  // when it comes up); 0 when it has none.
  uint64_t IdOf(const io::Connection* conn) const;

  io::IoSystem& io_;
  std::function<void()> notify_;
  std::vector<BusEvent> events_;
  absl::flat_hash_map<uint64_t, io::Connection*> links_;
  absl::flat_hash_map<const io::Connection*, uint64_t> ids_;
  uint64_t next_out_ = 2;
  uint64_t next_in_ = 1;
  bool tls_ = false;                       // new links use TLS
  io::SslCtxPtr tls_server_, tls_client_;  // their contexts
};

}  // namespace ringkv::server
