// BusNet: the cluster bus's sockets, on a thread of their own (one epoll
// loop), so that the main thread never waits on the network. It listens on
// the bus port, connects out, frames what it reads (Redis's clusterMsg:
// 8 bytes "RCmb" + totlen, then the rest) and hands whole frames to the main
// thread, which decodes and acts on them (the cluster state is the main
// thread's). The main thread sends bytes, opens and closes links by id.
//
// A bus link carries binary frames, not RESP, so it is not a client
// connection of the I/O layer: this component owns its sockets. It wakes
// the main thread with the `notify` callback (IoSystem::Notify); the main
// thread then calls Drain.
//
// Link ids: outbound links are even (given by Connect on the main thread),
// inbound ones odd (given by the bus thread when it accepts).
//
// Send buffers: what the main thread gave Send and the bus thread has not
// written to the socket yet is the link's send buffer (Redis's sndbuf). Each
// link has a BusSendMeter, shared by both threads, through which the main
// thread sees how much was written and how big the bus thread's buffer is
// (CLUSTER LINKS, cluster-link-sendbuf-limit).
//
// TLS (tls-cluster): after SetTls with the server's contexts, links made
// from then on speak TLS -- accepted ones require the peer's certificate
// (Redis's TLS_CLIENT_AUTH_YES on the bus, whatever tls-auth-clients says),
// outbound ones verify the peer against the CA. The bytes go through an
// io::TlsSession over memory BIOs, so the socket handling is the plain
// one. A TLS link is announced (kAccepted / kConnected) once its handshake
// is done, as Redis's accept and connect handlers run then; a send before
// that waits in the link's buffer. An inbound handshake that fails ends in
// kAcceptFailed (the main thread logs it; the link was never announced).
//
// Thread-safety: every public method is for the main thread; the bus
// thread talks to it only through the two mailboxes and the meters'
// atomics.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "io/connection.h"
#include "io/mailbox.h"
#include "io/tls_context.h"

namespace ringkv::server {

// One link's send-side counters, written by the bus thread, read by the main
// thread (relaxed: they are statistics and a limit checked every 100 ms).
struct BusSendMeter {
  std::atomic<uint64_t> written{0};   // bytes written to the socket, in all
  std::atomic<uint64_t> capacity{0};  // the bus thread's send buffer, allocated
};

struct BusEvent {
  enum class Kind : uint8_t {
    kAccepted,   // inbound link; data = the peer's ip, aux = our own address, meter = its meter
    kConnected,  // outbound link connected; aux = our own address on it
    kClosed,     // the link is gone; data = why
    kFrame,      // one whole message; data = its bytes
    kAcceptFailed,  // an inbound TLS handshake failed; data = why (no link was announced)
  };
  Kind kind;
  uint64_t link;
  std::string data;
  std::string aux;
  std::shared_ptr<BusSendMeter> meter = nullptr;  // kAccepted only
};

class BusNet {
 public:
  // A frame longer than this closes the link (the sender is broken).
  static constexpr size_t kMaxFrame = 256u << 20;

  explicit BusNet(std::function<void()> notify);
  ~BusNet();
  BusNet(const BusNet&) = delete;
  BusNet& operator=(const BusNet&) = delete;

  // Binds the bus port on each address (empty list: every address), then
  // starts the thread. Errors name the address.
  absl::Status Start(const std::vector<std::string>& addresses, int port);

  // Starts connecting to ip:port; returns the new link's id. Its
  // kConnected or kClosed event follows. `meter` counts its sends.
  uint64_t Connect(const std::string& ip, int port, std::shared_ptr<BusSendMeter> meter);
  void Send(uint64_t link, std::string bytes);
  // Links accepted or connected from now on use TLS (`enabled`) with these
  // contexts (the server's: io::TlsContext), or plain TCP. Links already up
  // keep what they were made with, as Redis's. Enabled with a null context,
  // new links are refused rather than made plain.
  void SetTls(bool enabled, io::SslCtxPtr server_ctx, io::SslCtxPtr client_ctx);
  // Closes a link (no kClosed event follows for it).
  void Close(uint64_t link);

  // The events since the last call (main thread).
  void Drain(std::vector<BusEvent>* out) { events_.Drain(out); }

 private:
  struct Cmd {
    enum class Kind : uint8_t { kConnect, kSend, kClose, kStop, kTls } kind;
    uint64_t link;
    std::string data;
    int port = 0;
    std::shared_ptr<BusSendMeter> meter = nullptr;  // kConnect
    io::SslCtxPtr server_ctx = nullptr, client_ctx = nullptr;  // kTls
    bool tls = false;                                          // kTls
  };
  struct Sock {
    int fd = -1;
    bool connecting = false;
    std::string in;
    std::string out;
    size_t out_off = 0;
    bool want_write = false;
    std::shared_ptr<BusSendMeter> meter;
    io::TlsSessionPtr tls;     // null on a plain link
    bool handshaking = false;  // a TLS link not announced yet (kAccepted / kConnected wait for the handshake)
    std::string peer;          // an inbound TLS link's peer address, until announced
  };

  void Loop();
  void HandleCmd(Cmd& c);
  void Accept(int lfd);
  void OnReadable(uint64_t id, Sock& s);
  void OnWritable(uint64_t id, Sock& s);
  void Flush(uint64_t id, Sock& s);
  void Drop(uint64_t id, std::string why, bool tell);
  void Rearm(uint64_t id, Sock& s);
  // A TLS link's input: decrypts `cipher` into s.in. When the peer closed
  // the stream or TLS failed, *end says why: the link is dropped once the
  // frames decrypted before that are handed on. False when the link was
  // dropped already (a send failed).
  bool FeedTls(uint64_t id, Sock& s, std::string_view cipher, std::string* end);
  // Posts kAccepted / kConnected for a link whose TLS handshake just ended.
  void Announce(uint64_t id, Sock& s);
  // Sends what the TLS session has queued; false when the link was dropped.
  bool SendWire(uint64_t id, Sock& s);
  // The link's send buffers, allocated: plaintext waiting, and TLS records.
  static size_t Allocated(const Sock& s);

  std::function<void()> notify_;
  io::Mailbox<Cmd> cmds_;
  io::Mailbox<BusEvent> events_;
  int epfd_ = -1;
  std::vector<int> listeners_;
  std::thread thread_;
  uint64_t next_out_ = 2;  // main thread
  uint64_t next_in_ = 1;   // bus thread
  absl::flat_hash_map<uint64_t, Sock> socks_;  // bus thread
  bool tls_ = false;                           // bus thread: new links use TLS
  io::SslCtxPtr tls_server_, tls_client_;      // bus thread
  std::vector<BusEvent> pending_;              // bus thread: posted at the end of a turn
};

}  // namespace ringkv::server
